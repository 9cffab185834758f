// Benchmarks run the roles as deploy/ ships them: a container's args and environment, read from its manifest.
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { parseAllDocuments } from "yaml"

export interface Container {
  readonly name?: string
  readonly args?: ReadonlyArray<string>
  readonly env?: ReadonlyArray<{ readonly name: string; readonly value?: unknown }>
}

/** The container `name` of the first `kind` in deploy/`file`. */
export const shippedContainer = (file: string, kind: string, name: string): Container => {
  const manifest = join(import.meta.dirname, "..", "deploy", file)
  const workload = parseAllDocuments(readFileSync(manifest, "utf8"))
    .map((d) => d.toJS())
    .find((d) => d?.kind === kind)
  const container = workload?.spec?.template?.spec?.containers?.find((c: Container) => c.name === name) as Container | undefined
  if (container === undefined) throw new Error(`${manifest}: no ${kind} with a container named ${name}`)
  return container
}

/** A container's plain `value` variables (NODE_OPTIONS, MALLOC_*); fieldRef ones, such as NODE_NAME, are the caller's. */
export const plainEnv = (container: Container): Record<string, string> =>
  Object.fromEntries((container.env ?? []).flatMap((e) => (typeof e.value === "string" ? [[e.name, e.value]] : [])))

/** The controller container's plain variables in deploy/controller.yaml: its heap limit and allocator. */
export const shippedControllerEnv = (): Record<string, string> => plainEnv(shippedContainer("controller.yaml", "Deployment", "controller"))
