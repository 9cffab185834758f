import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { harnessOwnTests, leavesGlobalState, processOrServer, reachesFrom, unitTestFiles, unitTiers, wholeComponents } from "../tiers.ts"
import { parseTable, tierRows } from "../tiersTable.ts"

const root = join(import.meta.dirname, "../..")
const byTier = unitTiers(root)

describe("test tiers", () => {
  it("put every unit test file in exactly one tier", () => {
    expect([...byTier.fast, ...byTier.scenario, ...byTier.slow].sort()).toEqual(unitTestFiles(root))
    for (const tier of [byTier.fast, byTier.scenario, byTier.slow]) expect(tier.length).toBeGreaterThan(0)
  })

  it("see a process or a server, directly or through a support module", () => {
    // Directly (spawnSync of the CLI), through test/harness/apiserver/serverHarness.ts, through
    // test/support/localServer.ts, and through the exec plugins the live client runs.
    expect(byTier.slow).toContain("test/cli/commands.test.ts")
    expect(byTier.slow).toContain("test/harness/apiserver/rest.test.ts")
    expect(byTier.slow).toContain("test/layers/kube/live/liveAccess.test.ts")
    expect(byTier.slow).toContain("test/layers/kube/live/execCredentials.test.ts")
  })

  it("see a whole role or the simulated cluster, directly or through a support module, and the harness's own tests", () => {
    // Through test/support/controllerHarness.ts (the controller and simulated daemons), directly
    // (startDaemon, simulateNodes), and by place: the harness's API server and cluster.
    expect(byTier.scenario).toContain("test/controller/scenarios.test.ts")
    expect(byTier.scenario).toContain("test/daemon/puller.test.ts")
    expect(byTier.scenario).toContain("test/harness/cluster/nodeSimulator.test.ts")
    expect(byTier.scenario).toContain("test/harness/apiserver/patches/jsonPatch.test.ts")
  })

  it("leave in the fast tier decisions, the work queue and the in-memory KubeApi's conformance suite", () => {
    expect(byTier.fast).toContain("test/controller/decideImagePullJob.test.ts")
    expect(byTier.fast).toContain("test/workqueue/workQueue.test.ts")
    expect(byTier.fast).toContain("test/harness/layers/inMemoryKubeApi.test.ts")
    expect(byTier.fast).toContain("test/kube/leaderElection.test.ts")
  })

  it("refuse what they should", () => {
    for (const text of [
      'import { spawn } from "node:child_process"',
      "server.listen(0)",
      "http.createServer((req, res) => {})",
      "yield* startEmbeddedApiServer({ port: 0 })",
      "KubeLive.layer({ kubeconfig })",
      "Effect.flatMap(makeExecAuthentication(config), f)"
    ]) {
      expect(processOrServer.test(text)).toBe(true)
    }
    expect(processOrServer.test("Effect.forkChild(Stream.runCollect(s))")).toBe(false)
    expect(processOrServer.test("InMemoryKubeApi.layerWith({})")).toBe(false)
    for (const text of [
      "const controller = yield* makeController(defaultSettings)",
      "yield* startDaemon(daemonOptions({ nodeName }))",
      "const { pulls } = yield* simulateDaemons(options)",
      "yield* simulateNodes({ nodes: 3 })"
    ]) {
      expect(wholeComponents.test(text)).toBe(true)
    }
    expect(wholeComponents.test("decideImagePullJob(job, nodes, now)")).toBe(false)
    expect(harnessOwnTests.test("test/harness/apiserver/storage/watchHistory.test.ts")).toBe(true)
    expect(harnessOwnTests.test("test/harness/layers/inMemoryKubeApi.test.ts")).toBe(false)
  })

  it("keep the files that share a module graph (fast, scenario) from leaving global state behind", () => {
    const reaches = reachesFrom(root)
    expect([...byTier.fast, ...byTier.scenario].filter((file) => reaches(leavesGlobalState, file))).toEqual([])
    for (const text of [
      'vi.mock("../../src/kube/KubeApi.ts")',
      'vi.stubEnv("HOME", dir)',
      'process.env["HOME"] = dir',
      "process.env.TZ = 'UTC'",
      'process.on("unhandledRejection", f)',
      "Date.prototype.toJSON = f",
      "globalThis.fetch = fake"
    ]) {
      expect(leavesGlobalState.test(text)).toBe(true)
    }
    for (const text of ['const home = process.env["HOME"]', "if (process.env.CI === '1')", "vi.spyOn(process.stderr, 'write')"]) {
      expect(leavesGlobalState.test(text)).toBe(false)
    }
  })

  it("the README's table of tiers counts each tier's files as the rules and configs do (npm run test:tiers-table rewrites it)", () => {
    const table = parseTable(readFileSync(join(root, "README.md"), "utf8"))
    expect(table.map((line) => [line.tier, line.files])).toEqual(tierRows.map((row) => [row.tier, row.files(root).length]))
  })
})
