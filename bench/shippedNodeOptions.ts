// Benchmarks run the controller as deploy/controller.yaml ships it, heap limit included.
import { readFileSync } from "node:fs"
import { resolve } from "node:path"
import { parseAllDocuments } from "yaml"

/** The controller container's NODE_OPTIONS in deploy/controller.yaml. */
export const shippedControllerNodeOptions = (): string => {
  const manifest = readFileSync(resolve(import.meta.dirname, "../deploy/controller.yaml"), "utf8")
  for (const doc of parseAllDocuments(manifest)) {
    const object = doc.toJS() as { kind?: string; spec?: any } | null
    if (object?.kind !== "Deployment") continue
    const container = object.spec.template.spec.containers.find((c: { name: string }) => c.name === "controller")
    return container?.env?.find((e: { name: string }) => e.name === "NODE_OPTIONS")?.value ?? ""
  }
  return ""
}
