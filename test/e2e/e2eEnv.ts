import { readFileSync } from "node:fs"
import { join } from "node:path"

/** What test/e2e/runtime.sh started, read from the env file it writes. */
export interface E2eRuntime {
  readonly dir: string
  readonly socket: string
  readonly snapshotter: string
  /** host:port of the plain registry. */
  readonly registry: string
  /** host:port of the htpasswd-protected registry. */
  readonly authRegistry: string
  readonly user: string
  readonly password: string
}

/** Handed from the global setup to the tests: the runtime, or why there is none. */
export type E2eContext = { readonly runtime: E2eRuntime } | { readonly skipReason: string }

declare module "vitest" {
  interface ProvidedContext {
    preheatE2e: E2eContext
  }
}

export const e2eDir = (): string => process.env["PREHEAT_E2E_DIR"] ?? "/tmp/preheat-e2e"
export const envFilePath = (): string => join(e2eDir(), "env")
export const runtimeScript = join(import.meta.dirname, "runtime.sh")

export const readEnvFile = (path: string = envFilePath()): E2eRuntime => {
  const values = new Map<string, string>()
  for (const line of readFileSync(path, "utf8").split("\n")) {
    const eq = line.indexOf("=")
    if (eq > 0) values.set(line.slice(0, eq), line.slice(eq + 1))
  }
  const get = (key: string): string => {
    const value = values.get(key)
    if (value === undefined || value === "") throw new Error(`${path} has no ${key}`)
    return value
  }
  return {
    dir: get("PREHEAT_E2E_DIR"),
    socket: get("PREHEAT_E2E_SOCKET"),
    snapshotter: get("PREHEAT_E2E_SNAPSHOTTER"),
    registry: get("PREHEAT_E2E_REGISTRY"),
    authRegistry: get("PREHEAT_E2E_AUTH_REGISTRY"),
    user: get("PREHEAT_E2E_USER"),
    password: get("PREHEAT_E2E_PASSWORD")
  }
}
