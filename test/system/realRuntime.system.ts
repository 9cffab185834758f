/**
 * One node on the real containerd of the e2e suite (issue 5, item 3): the bundle's daemon pulls
 * an image from the local registry through CRI, and the job completes with the runtime's image id.
 * Where the runtime cannot be started the test is skipped with the reason, except under
 * PREHEAT_REQUIRE_E2E=1 (CI), where that is a failure.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import type { E2eRuntime } from "../e2e/e2eEnv.ts"
import { publishImage } from "../support/imageBuilder.ts"
import type { PushedImage } from "../support/imageBuilder.ts"
import { Cluster } from "./cluster.ts"
import { freePort } from "../support/freePort.ts"
import { leaseRealRuntime } from "./realRuntimeLease.ts"

let cluster: Cluster | undefined
let runtime: E2eRuntime | undefined
let image: PushedImage | undefined
let skipReason: string | undefined
let releaseRuntime = () => {}

beforeAll(async () => {
  const lease = await leaseRealRuntime("the real-runtime test")
  releaseRuntime = lease.release
  if ("skipReason" in lease) {
    skipReason = lease.skipReason
    return
  }
  runtime = lease.runtime
  const layer = { size: 2_000_000, seed: "system" }
  image = await publishImage({ host: runtime.registry }, `system/real-${Date.now()}`, [layer], ["v1"])
  const socket = runtime.socket
  cluster = await Cluster.startWith(async (started) => {
    await started.createNodes(["real-1"], { "node-type": "real" })
    await started.startController("controller", await freePort())
    await started.startDaemon("real-1", await freePort(), socket)
  })
}, 180_000)

afterAll(async () => {
  await cluster?.stop()
  releaseRuntime()
})

beforeEach(({ onTestFailed }) => {
  onTestFailed(() => {
    if (cluster !== undefined) console.error(cluster.dumpLogs())
  })
})

describe("a node on the real containerd", () => {
  it("pulls a job's image through CRI and reports the runtime's image id", async (context) => {
    if (skipReason !== undefined) context.skip()
    const applied = await cluster!.applyFile(
      "real-job",
      `apiVersion: apps.kruise.io/v1alpha1
kind: ImagePullJob
metadata:
  name: real-job
spec:
  image: ${image!.reference("v1")}
  selector:
    names: [real-1]
`
    )
    expect(applied.stderr).toBe("")
    await cluster!.ok(["wait", "ipj/real-job", "--for=jsonpath={.status.completionTime}", "--timeout=60s"])
    const job = await cluster!.getYaml(["ipj", "real-job"])
    expect(job.status).toMatchObject({ desired: 1, succeeded: 1, failed: 0 })
    const node = await cluster!.getYaml(["nodeimage", "real-1"])
    const key = `${runtime!.registry}/${image!.repository}`
    expect(node.status.imageStatuses[key].tags[0]).toMatchObject({
      tag: "v1",
      phase: "Succeeded",
      progress: 100,
      imageID: image!.imageId
    })
  })
})
