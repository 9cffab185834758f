import { readdirSync, readFileSync } from "node:fs"
import { dirname, join, normalize } from "node:path"

/**
 * The unit suite (vitest.config.ts: `npx vitest run`, part of `npm test`) in three tiers, each
 * file's decided from what it does, read from its text and the test/ modules it imports: a new
 * file lands in its tier by itself, and each tier's config (vitest.TIER.config.ts) runs what
 * `unitTiers` gives it. test/architecture/testTiers.test.ts checks the rules and the README's
 * table of tiers.
 *
 * - `slow` (`npm run test:slow`): spawns a process or listens on a socket (`processOrServer`).
 * - `scenario` (`npm run test:scenario`): runs a whole role or the simulated cluster on the
 *   in-memory API server and simulated time (`wholeComponents`), or tests the harness itself,
 *   its API server and its simulated cluster (`harnessOwnTests`).
 * - `fast` (`npm run test:fast`, for the edit loop): the rest: decisions, mappings, the work
 *   queue, stores and caches, the in-memory KubeApi's conformance suite.
 */
export type Tier = "fast" | "scenario" | "slow"

export const tiers: ReadonlyArray<Tier> = ["fast", "scenario", "slow"]

/**
 * What makes a test file slow for the edit loop: it spawns a process (kubectl, python, the CLI, an
 * exec plugin, a credential provider plugin, a child daemon), or starts something that listens on a
 * socket (the embedded API server, the ops server, an HTTP or gRPC server of its own, a proxy).
 */
export const processOrServer =
  /node:child_process|node:net\b|node:worker_threads|\.listen\(|create(?:Secure)?Server\(|startEmbeddedApiServer\(|serveOps\(|runDaemon\(|runControllerRole\(|startDevCluster\(|KubeLive\.|CriLive\.|makeExecAuthentication\(|runPlugin\(|credentialProvidersLayer\(/

/**
 * What makes a test file a scenario: it runs a whole role or cluster, every reconciler and worker
 * with its timers, rather than one decision: the controller (`makeController`), the daemon
 * (`startDaemon`, `serveDaemon`), simulated daemons or nodes, the workload stand-ins, the rollout
 * command.
 */
export const wholeComponents =
  /makeController\(|startDaemon\(|serveDaemon\(|simulateDaemons\(|simulateNodes\(|startWorkloads\(|runRollout\(/

/**
 * The harness's own tests: its embedded API server and its simulated cluster. Not its in-memory
 * KubeApi (test/harness/layers/): the fake the fast tests stand on, checked by the conformance suite.
 */
export const harnessOwnTests = /^test\/harness\/(?:apiserver|cluster)\//

/**
 * What a test file of the fast or scenario tier must not do: their configs run files one after
 * another in one module graph (isolate off), so a global stubbed, a module mocked, a prototype
 * patched, an environment variable set or a listener added to the process would outlive the file.
 */
export const leavesGlobalState =
  /vi\.(?:mock|doMock|stubGlobal|stubEnv)\(|process\.(?:on|once|addListener|prependListener)\(|\.prototype\.\w+\s*=[^=]|globalThis\.\w+\s*=[^=]|process\.env(?:\.\w+|\[[^\]]+\])\s*=[^=]/

/**
 * `import ... from "./x.ts"`, `export ... from "./x.ts"` (a match does not run on into the next
 * statement) and `import "./x.ts"`.
 */
const importPattern = /^(?:import|export)\s(?:(?!^(?:import|export)\s)[^;])*?from\s+"(\.[^"]+\.ts)"|^import\s+"(\.[^"]+\.ts)"/gms

/** The unit suite's files (paths from the repository's root): every test/ `*.test.ts` but e2e's. */
export const unitTestFiles = (root: string): Array<string> =>
  readdirSync(join(root, "test"), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".test.ts") && !/^(e2e|system|faults)\//.test(f))
    .map((f) => join("test", f))
    .sort()

/**
 * Whether a test file matches `pattern`, itself or through the test/ modules it imports (as text:
 * nothing is run), for the files under `root`.
 */
export const reachesFrom = (root: string): ((pattern: RegExp, file: string) => boolean) => {
  const text = new Map<string, string>()
  const read = (file: string) => {
    let t = text.get(file)
    if (t === undefined) text.set(file, (t = readFileSync(join(root, file), "utf8")))
    return t
  }
  const reaches = (pattern: RegExp, file: string, seen: Set<string>): boolean => {
    // This module and test/architecture/ name those markers as text; they run none of them.
    if (seen.has(file) || file === "test/tiers.ts" || file.startsWith("test/architecture/")) return false
    seen.add(file)
    const source = read(file)
    if (pattern.test(source)) return true
    return [...source.matchAll(importPattern)]
      .map((m) => normalize(join(dirname(file), m[1] ?? m[2]!)))
      .some((to) => to.startsWith("test/") && reaches(pattern, to, seen))
  }
  return (pattern, file) => reaches(pattern, file, new Set())
}

/** Each unit test file by tier (paths from the repository's root, sorted). */
export const unitTiers = (root: string): Record<Tier, Array<string>> => {
  const reaches = reachesFrom(root)
  const tierOf = (file: string): Tier =>
    reaches(processOrServer, file) ? "slow" : harnessOwnTests.test(file) || reaches(wholeComponents, file) ? "scenario" : "fast"
  const byTier: Record<Tier, Array<string>> = { fast: [], scenario: [], slow: [] }
  for (const file of unitTestFiles(root)) byTier[tierOf(file)].push(file)
  return byTier
}
