import { spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { Duration, Effect, Option } from "effect"
import { beforeAll, describe, expect, it } from "vitest"
import type { ImageTagStatus } from "../../src/api/nodeImage.ts"
import { CriRuntime } from "../../src/cri/CriRuntime.ts"
import { daemonOptions, type DaemonOptions } from "../../src/daemon/options.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import { type DaemonProcess, startDaemonProcess } from "../daemon/support/daemonProcess.ts"
import { buildImage, publishImage, pushImage, type Registry } from "../support/imageBuilder.ts"
import { eventually } from "../support/eventually.ts"
import { inProcessDaemons } from "./daemonRuntime.ts"
import { describeE2e } from "./describeE2e.ts"
import { runtimeScript } from "./e2eEnv.ts"

const MB = 1_000_000
const run = randomBytes(4).toString("hex")
const secretNamespace = "preheat-daemon-config"

type TagFields = Record<string, unknown> & { readonly tag: string }

const nodeImage = (name: string, images: Record<string, unknown>): KubeObject => ({
  apiVersion: "apps.kruise.io/v1alpha1",
  kind: "NodeImage",
  metadata: { name },
  spec: { images }
})

describeE2e("daemon against a real containerd", (e) => {
  const plain: Registry = { host: e.registry }
  const protectedRegistry: Registry = { host: e.authRegistry, auth: { username: e.user, password: e.password } }
  const logs: Array<string> = []
  const daemons = inProcessDaemons(e, run, { progressInterval: "100 millis", logs })
  const { exec, tagStatus } = daemons

  /** Runs `body` with an in-process daemon for `node`, stopped afterwards (its workers interrupted). */
  const withDaemon = (node: string, options: Partial<DaemonOptions>, body: () => Promise<void>) =>
    daemons.withDaemon(daemonOptions({ nodeName: node, secretNamespace, ...options }), body)

  const create = (node: string, images: Record<string, unknown>) => exec(daemons.api.create(resources.nodeImage, nodeImage(node, images)))

  const setTags = async (node: string, image: string, tags: ReadonlyArray<TagFields>, extra: Record<string, unknown> = {}) => {
    const current = await exec(daemons.api.get(resources.nodeImage, { name: node }))
    await exec(daemons.api.update(resources.nodeImage, { ...current, spec: { images: { [image]: { ...extra, tags } } } }))
  }

  /** Polls the tag's status until `done` holds; every status seen goes to `seen`. */
  const waitFor = async (
    node: string,
    image: string,
    tag: string,
    done: (status: ImageTagStatus) => boolean,
    options: { readonly timeoutMillis?: number; readonly seen?: Array<ImageTagStatus> } = {}
  ): Promise<ImageTagStatus> =>
    eventually(
      `${node} ${image}:${tag}`,
      async () => {
        const status = await tagStatus(node, image, tag)
        if (status !== undefined) options.seen?.push(status)
        if (status !== undefined && done(status)) return status
        throw new Error(`still ${JSON.stringify(status)}`)
      },
      options.timeoutMillis ?? 60_000,
      20
    )
  const finished = (status: ImageTagStatus) => status.phase === "Succeeded" || status.phase === "Failed"

  const eventsAbout = async (name: string) =>
    (await exec(daemons.api.list(resources.event))).items.filter((event) => (event["involvedObject"] as { name?: string }).name === name)

  const hasImage = (reference: string) =>
    exec(Effect.flatMap(Effect.service(CriRuntime), (cri) => cri.imageStatus(reference))).then(Option.isSome)

  const createSecret = (name: string, registry: string, username: string, password: string) =>
    exec(
      daemons.api.create(resources.secret, {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name, namespace: secretNamespace },
        type: "kubernetes.io/dockerconfigjson",
        data: {
          ".dockerconfigjson": Buffer.from(JSON.stringify({ auths: { [registry]: { username, password } } })).toString("base64")
        }
      })
    )

  it("pulls a plain image: Pulling, then Succeeded with the runtime's image id, and no Event (the status says it)", async () => {
    const node = `plain-${run}`
    const image = await publishImage(plain, `e2e/daemon-plain-${run}`, [{ size: 300_000, seed: `${run}-plain` }], ["v1"])
    const name = `${e.registry}/${image.repository}`
    await create(node, { [name]: { tags: [{ tag: "v1" }] } })
    await withDaemon(node, {}, async () => {
      const status = await waitFor(node, name, "v1", finished)
      expect(status).toMatchObject({ phase: "Succeeded", progress: 100, imageID: image.imageId, version: 0 })
    })
    expect(await hasImage(image.reference())).toBe(true)
    expect(await eventsAbout(node)).toEqual([])
  })

  describe("htpasswd registry", () => {
    let name = ""
    let imageId = ""
    beforeAll(async () => {
      const image = await publishImage(protectedRegistry, `e2e/daemon-private-${run}`, [{ size: 200_000, seed: `${run}-private` }], ["v1"])
      name = `${e.authRegistry}/${image.repository}`
      imageId = image.imageId
    })
    const removeImage = () => exec(Effect.flatMap(Effect.service(CriRuntime), (cri) => cri.removeImage(`${name}:v1`)))

    it("pulls with a good pull secret", async () => {
      const node = `good-secret-${run}`
      await createSecret(`good-${run}`, e.authRegistry, e.user, e.password)
      await create(node, { [name]: { pullSecrets: [{ namespace: secretNamespace, name: `good-${run}` }], tags: [{ tag: "v1" }] } })
      await withDaemon(node, {}, async () => {
        expect(await waitFor(node, name, "v1", finished)).toMatchObject({ phase: "Succeeded", imageID: imageId })
      })
      await removeImage()
    })

    it("a wrong password fails with a clear message, and the password appears nowhere", async () => {
      const node = `wrong-secret-${run}`
      const wrong = `wrong-${randomBytes(8).toString("hex")}`
      await createSecret(`wrong-${run}`, e.authRegistry, e.user, wrong)
      const logsBefore = logs.length
      await create(node, {
        [name]: {
          pullSecrets: [{ namespace: secretNamespace, name: `wrong-${run}` }],
          tags: [
            {
              tag: "v1",
              pullPolicy: { backoffLimit: 1 },
              ownerReferences: [{ kind: "ImagePullJob", namespace: "apps", name: "job", uid: "u" }]
            }
          ]
        }
      })
      let status: ImageTagStatus | undefined
      await withDaemon(node, {}, async () => {
        status = await waitFor(node, name, "v1", finished)
      })
      expect(status?.phase).toBe("Failed")
      expect(status?.message).toContain(`failed to pull image "${name}:v1" after 2 attempts: registry refused the credentials`)
      expect(status?.message).toMatch(/401 Unauthorized/)
      const stored = await exec(daemons.api.get(resources.nodeImage, { name: node }))
      const events = [...(await eventsAbout(node)), ...(await eventsAbout("job"))]
      expect(events.map((event) => event["reason"])).toEqual(["PullImageFailed", "PullImageFailed"])
      const outputs = [JSON.stringify(stored["status"]), ...events.map((event) => JSON.stringify(event)), ...logs.slice(logsBefore)]
      expect(logs.length - logsBefore).toBeGreaterThan(2)
      for (const secret of [wrong, e.password, Buffer.from(`${e.user}:${wrong}`).toString("base64")]) {
        for (const output of outputs) expect(output).not.toContain(secret)
      }
    })

    it("without a secret the pull fails as unauthorized", async () => {
      const node = `no-secret-${run}`
      await create(node, { [name]: { tags: [{ tag: "v1", pullPolicy: { backoffLimit: 0 } }] } })
      await withDaemon(node, {}, async () => {
        const status = await waitFor(node, name, "v1", finished)
        expect(status.phase).toBe("Failed")
        expect(status.message).toMatch(/^failed to pull image .*: registry refused the credentials: .*401 Unauthorized/)
      })
    })
  })

  it("a missing tag fails after the retries, naming the image", async () => {
    const node = `missing-${run}`
    const image = await publishImage(plain, `e2e/daemon-missing-${run}`, [{ size: 10_000, seed: `${run}-missing` }], ["v1"])
    const name = `${e.registry}/${image.repository}`
    await create(node, { [name]: { tags: [{ tag: "no-such-tag", pullPolicy: { backoffLimit: 2, timeoutSeconds: 10 } }] } })
    const started = performance.now()
    await withDaemon(node, {}, async () => {
      const status = await waitFor(node, name, "no-such-tag", finished)
      expect(status.phase).toBe("Failed")
      expect(status.message).toMatch(
        new RegExp(`^failed to pull image "${name.replace(/[.]/g, "\\.")}:no-such-tag" after 3 attempts: image not found: `)
      )
    })
    // Backoff 1 s + 2 s between the three attempts.
    expect(performance.now() - started).toBeGreaterThan(3000)
  })

  it("pulls a digest reference as name@sha256:...", async () => {
    const node = `digest-${run}`
    const image = await publishImage(plain, `e2e/daemon-digest-${run}`, [{ size: 100_000, seed: `${run}-digest` }], ["v1"])
    const name = `${e.registry}/${image.repository}`
    await create(node, { [name]: { tags: [{ tag: image.digest }] } })
    await withDaemon(node, {}, async () => {
      expect(await waitFor(node, name, image.digest, finished)).toMatchObject({ phase: "Succeeded", imageID: image.imageId })
    })
    expect(await hasImage(image.digestReference)).toBe(true)
  })

  it("after latest moved, Always pulls the new image; IfNotPresent keeps the one the node has", async () => {
    const node = `moving-${run}`
    const repository = `e2e/daemon-moving-${run}`
    const name = `${e.registry}/${repository}`
    const first = await publishImage(plain, repository, [{ size: 50_000, seed: `${run}-moving-1` }], ["latest"])
    await create(node, { [name]: { tags: [{ tag: "latest", version: 0 }] } })
    await withDaemon(node, {}, async () => {
      expect(await waitFor(node, name, "latest", finished)).toMatchObject({ phase: "Succeeded", imageID: first.imageId })
      const second = await pushImage(plain, repository, buildImage([{ size: 50_000, seed: `${run}-moving-2` }]), ["latest"])
      expect(second.imageId).not.toBe(first.imageId)

      await setTags(node, name, [{ tag: "latest", version: 1, imagePullPolicy: "IfNotPresent" }])
      const kept = await waitFor(node, name, "latest", (s) => s.version === 1 && finished(s))
      expect(kept).toMatchObject({ phase: "Succeeded", imageID: first.imageId })
      expect(kept.message).toContain("already present")

      await setTags(node, name, [{ tag: "latest", version: 2, imagePullPolicy: "Always" }])
      const pulled = await waitFor(node, name, "latest", (s) => s.version === 2 && finished(s))
      expect(pulled).toMatchObject({ phase: "Succeeded", imageID: second.imageId })
    })
  })

  it("cuts an attempt off at timeoutSeconds on a large image", async () => {
    const node = `timeout-${run}`
    const image = await publishImage(
      plain,
      `e2e/daemon-slow-${run}`,
      [
        { size: 150 * MB, seed: `${run}-slow-1` },
        { size: 150 * MB, seed: `${run}-slow-2` }
      ],
      ["v1"]
    )
    const name = `${e.registry}/${image.repository}`
    await create(node, { [name]: { tags: [{ tag: "v1", pullPolicy: { timeoutSeconds: 1, backoffLimit: 0 } }] } })
    const started = performance.now()
    await withDaemon(node, {}, async () => {
      const status = await waitFor(node, name, "v1", finished)
      expect(status).toMatchObject({ phase: "Failed", message: `failed to pull image "${name}:v1": pull timed out after 1s` })
    })
    expect(performance.now() - started).toBeLessThan(10_000)
    expect(await hasImage(image.reference())).toBe(false)
  })

  it("reports progress between 0 and 100 on a 200 MB image, never going back", async () => {
    const node = `progress-${run}`
    const image = await publishImage(
      plain,
      `e2e/daemon-big-${run}`,
      [
        { size: 100 * MB, seed: `${run}-big-1` },
        { size: 100 * MB, seed: `${run}-big-2` }
      ],
      ["v1"]
    )
    const name = `${e.registry}/${image.repository}`
    const seen: Array<ImageTagStatus> = []
    await create(node, { [name]: { tags: [{ tag: "v1" }] } })
    await withDaemon(node, { progressWriteInterval: Duration.millis(250), pullingWriteDelay: Duration.millis(250) }, async () => {
      await waitFor(node, name, "v1", finished, { seen })
    })
    const progress = seen.map((s) => s.progress ?? 0)
    expect(seen.at(-1)).toMatchObject({ phase: "Succeeded", progress: 100, imageID: image.imageId })
    expect(progress.some((p) => p > 0 && p < 100)).toBe(true)
    for (let i = 1; i < progress.length; i++) expect(progress[i]!).toBeGreaterThanOrEqual(progress[i - 1]!)
    process.stdout.write(`[e2e] daemon progress seen: ${[...new Set(progress)].join(", ")}\n`)
  })

  it("containerd restarted during a pull: the attempt fails, the retry succeeds", async () => {
    const node = `restart-${run}`
    const image = await publishImage(
      plain,
      `e2e/daemon-restart-${run}`,
      [
        { size: 100 * MB, seed: `${run}-restart-1` },
        { size: 100 * MB, seed: `${run}-restart-2` }
      ],
      ["v1"]
    )
    const name = `${e.registry}/${image.repository}`
    const logsBefore = logs.length
    await create(node, { [name]: { tags: [{ tag: "v1", pullPolicy: { backoffLimit: 5 } }] } })
    await withDaemon(node, { progressWriteInterval: Duration.millis(100), pullingWriteDelay: Duration.millis(100) }, async () => {
      await waitFor(node, name, "v1", (s) => s.phase === "Pulling" && (s.progress ?? 0) > 0)
      const restarted = spawnSync("bash", [runtimeScript, "restart-containerd"], {
        env: { ...process.env, PREHEAT_E2E_DIR: e.dir },
        encoding: "utf8",
        timeout: 60_000
      })
      expect(restarted.status, restarted.stderr).toBe(0)
      const status = await waitFor(node, name, "v1", finished, { timeoutMillis: 90_000 })
      expect(status).toMatchObject({ phase: "Succeeded", imageID: image.imageId })
    })
    const failedAttempts = logs
      .slice(logsBefore)
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line["msg"] === "pull attempt failed" && line["image"] === `${name}:v1`)
    expect(failedAttempts.length).toBeGreaterThanOrEqual(1)
    process.stdout.write(
      `[e2e] attempts failed across the containerd restart: ${failedAttempts.map((l) => String(l["failure"])).join(" | ")}\n`
    )
  })

  it("the daemon process killed during a pull and started again finishes without pulling finished tags twice", async () => {
    const node = `killed-${run}`
    const repository = `e2e/daemon-killed-${run}`
    const name = `${e.registry}/${repository}`
    const small = await publishImage(plain, repository, [{ size: 100_000, seed: `${run}-killed-small` }], ["small"])
    const big = await publishImage(
      plain,
      repository,
      [
        { size: 100 * MB, seed: `${run}-killed-big-1` },
        { size: 100 * MB, seed: `${run}-killed-big-2` }
      ],
      ["big"]
    )
    await create(node, {
      [name]: {
        tags: [
          { tag: "small", imagePullPolicy: "Always" },
          { tag: "big", imagePullPolicy: "Always" }
        ]
      }
    })
    const childOptions = {
      daemon: { nodeName: node, secretNamespace, progressWriteIntervalMillis: 100, pullingWriteDelay: 100 },
      socket: e.socket,
      progressIntervalMillis: 100
    }
    let first: DaemonProcess | undefined
    let second: DaemonProcess | undefined
    try {
      first = await startDaemonProcess(daemons.api, childOptions)
      await waitFor(node, name, "small", finished)
      const inFlight = await waitFor(node, name, "big", (s) => s.phase === "Pulling" && (s.progress ?? 0) > 0)
      await first.kill()
      expect((await tagStatus(node, name, "big"))?.phase).toBe("Pulling")

      second = await startDaemonProcess(daemons.api, childOptions)
      const done = await waitFor(node, name, "big", finished)
      expect(done).toMatchObject({ phase: "Succeeded", imageID: big.imageId })
      expect(await tagStatus(node, name, "small")).toMatchObject({ phase: "Succeeded", imageID: small.imageId })
      expect([...first.pulls].sort()).toEqual([`${name}:big`, `${name}:small`])
      expect(second.pulls).toEqual([`${name}:big`])
      process.stdout.write(
        `[e2e] killed daemon pid ${first.pid} at ${inFlight.progress}% of the big image; restarted as pid ${second.pid}\n`
      )
    } finally {
      await first?.stop()
      await second?.stop()
    }
  })
})
