// Benchmarks run the controller as deploy/controller.yaml ships it, heap limit and allocator included.
import { readFileSync } from "node:fs"
import { resolve } from "node:path"
import { parseAllDocuments } from "yaml"

/** The controller container's plain `value` variables in deploy/controller.yaml (NODE_OPTIONS, MALLOC_*). */
export const shippedControllerEnv = (): Record<string, string> => {
  const manifest = readFileSync(resolve(import.meta.dirname, "../deploy/controller.yaml"), "utf8")
  for (const doc of parseAllDocuments(manifest)) {
    const object = doc.toJS() as { kind?: string; spec?: any } | null
    if (object?.kind !== "Deployment") continue
    const container = object.spec.template.spec.containers.find((c: { name: string }) => c.name === "controller")
    const env: ReadonlyArray<{ readonly name: string; readonly value?: unknown }> = container?.env ?? []
    return Object.fromEntries(env.filter((e) => typeof e.value === "string").map((e) => [e.name, e.value as string]))
  }
  return {}
}
