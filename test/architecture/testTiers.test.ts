import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { processOrServer, slowTestFiles, slowTests } from "../tiers.ts"

const root = join(import.meta.dirname, "../..")

describe("test tiers", () => {
  it("npm run test:fast leaves out exactly the files that spawn a process or listen", () => {
    expect([...slowTests].sort()).toEqual(slowTestFiles(root))
  })

  it("sees a process or a server, directly or through a support module", () => {
    const found = slowTestFiles(root)
    // Directly (spawnSync of the CLI), through test/harness/apiserver/serverHarness.ts, through
    // test/support/authFront.ts, and through the exec plugins the live client runs.
    expect(found).toContain("test/cli/commands.test.ts")
    expect(found).toContain("test/harness/apiserver/rest.test.ts")
    expect(found).toContain("test/layers/kube/live/liveAccess.test.ts")
    expect(found).toContain("test/layers/kube/live/execCredentials.test.ts")
    // In-process: the in-memory KubeApi, TestClock, pure decisions.
    expect(found).not.toContain("test/harness/layers/inMemoryKubeApi.test.ts")
    expect(found).not.toContain("test/controller/decideImagePullJob.test.ts")
    expect(found).not.toContain("test/workqueue/workQueue.test.ts")
  })

  it("refuses what it should", () => {
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
  })
})
