/**
 * A registry that throttles (issue 28, part 3) on the real containerd: a proxy answering HTTP 429
 * with Docker Hub's `TOOMANYREQUESTS` stands before the e2e suite's plain registry. containerd's
 * own error text is classified as RegistryThrottled, and the daemon reports it, retries after the
 * throttle backoff and succeeds with backoffLimit 0: the throttled attempts did not count.
 */
import { randomBytes } from "node:crypto"
import { Duration, Effect, Result } from "effect"
import { afterAll, beforeAll, expect, it } from "vitest"
import type { ImageTagStatus } from "../../src/api/nodeImage.ts"
import { CriRuntime } from "../../src/cri/CriRuntime.ts"
import { daemonOptions } from "../../src/daemon/options.ts"
import { resources } from "../../src/kube/resources.ts"
import { publishImage } from "../support/imageBuilder.ts"
import { eventually } from "../support/eventually.ts"
import { inProcessDaemons } from "./daemonRuntime.ts"
import { describeE2e } from "./describeE2e.ts"
import { startThrottlingProxy, type ThrottlingProxy } from "./throttlingProxy.ts"

const run = randomBytes(4).toString("hex")

describeE2e("a throttling registry before a real containerd", (e) => {
  let proxy: ThrottlingProxy
  beforeAll(async () => {
    proxy = await startThrottlingProxy(e.registry)
  })
  // Registered before the daemons' services, so it runs after their afterAll has removed the images.
  afterAll(() => proxy.close())
  const daemons = inProcessDaemons(e, run, { progressInterval: "100 millis" })
  const { exec } = daemons

  it("containerd's words for a 429 when resolving and when fetching are RegistryThrottled", async () => {
    const image = await publishImage({ host: e.registry }, `e2e/throttle-live-${run}`, [{ size: 50_000, seed: `${run}-live` }], ["v1"])
    const name = `${proxy.host}/${image.repository}`
    const pull = (reference: string) =>
      exec(
        Effect.flatMap(Effect.service(CriRuntime), (cri) => cri.pullImage({ image: reference, timeout: Duration.seconds(30) })).pipe(
          Effect.result
        )
      )
    // Resolving asks for the manifest (HEAD, then GET); every manifest request is throttled.
    proxy.throttles = (_method, path) => path.includes("/manifests/")
    const resolving = await pull(`${name}:v1`)
    // Resolved by digest, the layers come through the proxy too: their GETs are throttled.
    proxy.throttles = (_method, path) => path.includes("/blobs/")
    const fetching = await pull(`${name}@${image.digest}`)
    proxy.throttles = () => false
    for (const result of [resolving, fetching]) {
      expect(Result.isFailure(result)).toBe(true)
      if (Result.isFailure(result)) {
        expect(result.failure).toMatchObject({ _tag: "RegistryThrottled" })
        expect(result.failure.message).toMatch(/429 Too Many Requests|toomanyrequests/i)
      }
    }
    expect(proxy.throttled.some((r) => r.includes("/manifests/"))).toBe(true)
    expect(proxy.throttled.some((r) => r.includes("/blobs/"))).toBe(true)
    console.log(
      `containerd's text: ${[resolving, fetching].map((r) => (Result.isFailure(r) ? (r.failure as { message?: string }).message : "")).join(" | ")}`
    )
  })

  it("the daemon reports RegistryThrottled, retries after the backoff and succeeds with backoffLimit 0", async () => {
    const image = await publishImage({ host: e.registry }, `e2e/throttle-daemon-${run}`, [{ size: 200_000, seed: `${run}-d` }], ["v1"])
    const name = `${proxy.host}/${image.repository}`
    const node = `throttled-${run}`
    // containerd itself asks again at once after a 429, up to 5 times (6 requests: its resolver's
    // retryRequest), before the pull fails: the registry throttles 12, two attempts' worth.
    let manifestRequests = 0
    proxy.throttled.length = 0
    proxy.throttles = (_method, path) => path.includes(`/${image.repository}/manifests/`) && ++manifestRequests <= 12
    const owner = { apiVersion: "apps.kruise.io/v1alpha1", kind: "ImagePullJob", namespace: "default", name: "throttled", uid: "u-t" }
    await exec(
      daemons.api.create(resources.nodeImage, {
        apiVersion: "apps.kruise.io/v1alpha1",
        kind: "NodeImage",
        metadata: { name: node },
        spec: { images: { [name]: { tags: [{ tag: "v1", pullPolicy: { backoffLimit: 0 }, ownerReferences: [owner] }] } } }
      })
    )
    const seen: Array<ImageTagStatus> = []
    const started = performance.now()
    await daemons.withDaemon(daemonOptions({ nodeName: node, secretNamespace: "preheat-daemon-config" }), () =>
      eventually(
        "the pull to finish",
        async () => {
          const status = await daemons.tagStatus(node, name, "v1")
          if (status !== undefined) seen.push(status)
          return status?.phase === "Succeeded" || status?.phase === "Failed" ? status : undefined
        },
        90_000,
        50
      )
    )
    const seconds = (performance.now() - started) / 1000
    expect(seen.at(-1)).toMatchObject({ phase: "Succeeded", imageID: image.imageId })
    const throttledReports = [...new Set(seen.map((s) => s.message ?? ""))].filter((m) => m.startsWith("RegistryThrottled: "))
    expect(throttledReports.length).toBeGreaterThanOrEqual(1)
    expect(throttledReports[0]).toMatch(/retrying in [\d.]+s \(throttled retry 1 of 10, not counted against backoffLimit\)$/)
    expect(proxy.throttled).toHaveLength(12)
    // Two throttle backoffs: at least 2.5 s and 5 s.
    expect(seconds).toBeGreaterThan(7.5)
    const events = (await exec(daemons.api.list(resources.event))).items.map((event) => event["reason"])
    // No Event for a success, throttled retries before it or not (the tag status says it: issue 29).
    expect(events).toEqual([])
    console.log(
      `pulled after ${proxy.throttled.length} throttled requests in ${seconds.toFixed(1)} s; reports: ${throttledReports.join(" | ")}`
    )
  })
})
