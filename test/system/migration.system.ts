/**
 * Migration from OpenKruise (issue 26 item 5, docs/migrating-from-openkruise.md), with the shipped
 * executable: the API server first holds what OpenKruise's controller and daemon leave behind when
 * they are stopped (NodeImages with finished and interrupted pulls, secret copies in
 * kruise-daemon-config, ImagePullJobs and ImageListPullJobs of both versions, finished, running and
 * Never), written as upstream writes them; then preheat's controller and daemons start on it. Nothing
 * finished is pulled again (each daemon's pull counter), the interrupted work completes, the Never
 * job keeps its daily rhythm (read from the tags' TTLs and completion times, not waited for),
 * upstream's copies are adopted or deleted, and every job can still be deleted.
 *
 * Shapes, from upstream's source (github.com/openkruise/kruise, master):
 * - NodeImage spec and status: apis/apps/v1beta1/nodeimage_types.go (version and progress are
 *   omitempty: a version 0 is absent); the daemon's tag status and imageID (`name@id`):
 *   pkg/daemon/imagepuller/imagepuller_worker.go; tag pull policies (Never: TTL 24 h +- 10 min and
 *   deadline 1800 s; Always: timeout x backoff + the Always default + jitter):
 *   pkg/controller/imagepulljob/imagepulljob_utils.go getImagePullPolicy.
 * - Secret copies: pkg/controller/imagepulljob/imagepulljob_controller.go generateSyncedSecret
 *   (`NAME-xxxxxx`, source-key, references, mode) and, before 1.9, generateName with a source-uid
 *   label; the `apps.kruise.io/deletion-protection` finalizer on unfinished jobs: addProtectionFinalizer.
 * - ImageListPullJob children: pkg/controller/imagelistpulljob/imagelistpulljob_controller.go
 *   newImagePullJobs (generateName `LIST-`, controller-revision-hash, controller reference).
 * - Job statuses: apis/apps/v1beta1/imagepulljob_types.go, imagelistpulljob_types.go, with the
 *   messages of formatStatusMessage.
 */
import { Duration } from "effect"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { simulatedPullTime } from "../../harness/layers/simulatedRuntime/simulatedNode.ts"
import { Cluster, metricSum, scrape } from "./cluster.ts"
import { eventually } from "../support/eventually.ts"
import { freePort } from "../support/freePort.ts"

const copies = "kruise-daemon-config"
const nodes = ["node-a", "node-b"] as const
const deletionProtection = "apps.kruise.io/deletion-protection"

let cluster: Cluster
/** When OpenKruise stopped and preheat started. */
let switchedAt = 0
const daemonPorts: Record<string, number> = {}

/** An image the simulated runtime pulls within a second. */
const quickImage = (name: string): string => {
  for (let i = 0; i < 1000; i++) {
    const image = `example.com/migrate/${name}-${i}`
    if (Duration.toMillis(simulatedPullTime(`${image}:1.0`)) < 1_000) return image
  }
  throw new Error(`no quick image for ${name}`)
}

const images = {
  done: "example.com/migrate/done",
  running: quickImage("running"),
  daily: quickImage("daily"),
  listX: "example.com/migrate/list-x",
  listY: quickImage("list-y")
}

const rfc3339 = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z")
const ago = (seconds: number) => rfc3339(switchedAt - seconds * 1000)
const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64")
const dockerConfig = (user: string) => ({
  ".dockerconfigjson": b64(JSON.stringify({ auths: { "example.com": { auth: b64(`${user}:pw`) } } }))
})

const apply = async (name: string, object: unknown) => {
  const applied = await cluster.applyFile(name, JSON.stringify(object))
  if (applied.code !== 0) throw new Error(applied.stderr)
}

const patchStatus = (kind: string, name: string, status: unknown, namespace?: string) =>
  cluster.ok([
    "patch",
    kind,
    name,
    ...(namespace === undefined ? [] : ["-n", namespace]),
    "--subresource=status",
    "--type=merge",
    "-p",
    JSON.stringify({ status })
  ])

const uidOf = async (kind: string, name: string): Promise<string> =>
  (await cluster.ok(["get", kind, name, "-o", "jsonpath={.metadata.uid}"])).trim()

/** An ImagePullJob as written to the API server (upstream's controller wrote only its status and finalizer). */
const pullJob = (
  apiVersion: "v1alpha1" | "v1beta1",
  name: string,
  spec: Record<string, unknown>,
  extra: { finalizers?: ReadonlyArray<string>; labels?: Record<string, string>; ownerReferences?: ReadonlyArray<unknown> } = {}
) => ({
  apiVersion: `apps.kruise.io/${apiVersion}`,
  kind: "ImagePullJob",
  metadata: { name, namespace: "default", ...extra },
  spec
})

/** An ObjectReference to a job as upstream's getOwnerRef writes it on a tag. */
const owner = (name: string, uid: string) => ({
  apiVersion: "apps.kruise.io/v1beta1",
  kind: "ImagePullJob",
  name,
  namespace: "default",
  uid
})

/** The tag pull policy upstream writes for an Always job (timeout 600 x backoff 3, the Always default and jitter). */
const alwaysPolicy = { timeoutSeconds: 600, backoffLimit: 3, ttlSecondsAfterFinished: 2187 }
/** The policy upstream writes for a Never job: TTL 24 h +- 10 min, deadline 1800 s. */
const neverPolicy = (ttl: number) => ({ timeoutSeconds: 600, backoffLimit: 3, ttlSecondsAfterFinished: ttl, activeDeadlineSeconds: 1800 })

const tagSpec = (tag: string, createdAt: string, pullPolicy: unknown, owners: ReadonlyArray<unknown>, version = 0) => ({
  tag,
  createdAt,
  pullPolicy,
  ownerReferences: owners,
  ...(version === 0 ? {} : { version }),
  imagePullPolicy: "IfNotPresent"
})

const succeeded = (image: string, tag: string, started: string, completed: string, version = 0) => ({
  tag,
  phase: "Succeeded",
  progress: 100,
  startTime: started,
  completionTime: completed,
  ...(version === 0 ? {} : { version }),
  imageID: `${image}@sha256:${b64(image)
    .replace(/[^a-z0-9]/gi, "")
    .toLowerCase()
    .padEnd(64, "0")
    .slice(0, 64)}`
})

/** What upstream left: written straight to the API server, before any process of preheat's runs. */
const writeUpstreamState = async () => {
  await cluster.ok(["create", "namespace", copies])
  await cluster.createNodes(nodes, {})
  await apply("source-secret", {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "regcred", namespace: "default" },
    type: "kubernetes.io/dockerconfigjson",
    data: dockerConfig("new")
  })

  // Jobs: one finished, one running (interrupted on node-b), one Never, and a running list job.
  await apply("done", pullJob("v1alpha1", "done", { image: `${images.done}:1.0` }))
  await apply(
    "running",
    pullJob("v1beta1", "running", { image: `${images.running}:1.0`, pullSecrets: ["regcred"] }, { finalizers: [deletionProtection] })
  )
  await apply(
    "daily",
    pullJob(
      "v1alpha1",
      "daily",
      { image: `${images.daily}:1.0`, pullSecrets: ["regcred"], completionPolicy: { type: "Never" } },
      { finalizers: [deletionProtection] }
    )
  )
  const template = { parallelism: 2, completionPolicy: { type: "Always", activeDeadlineSeconds: 3600 } }
  await apply("list", {
    apiVersion: "apps.kruise.io/v1alpha1",
    kind: "ImageListPullJob",
    metadata: { name: "list", namespace: "default", labels: { "controller-revision-hash": "5c7d8b9f4" } },
    spec: { images: [`${images.listX}:1.0`, `${images.listY}:1.0`], ...template }
  })
  const list = await uidOf("imagelistpulljob", "list")
  const child = {
    labels: { "controller-revision-hash": "5c7d8b9f4" },
    ownerReferences: [
      {
        apiVersion: "apps.kruise.io/v1beta1",
        kind: "ImageListPullJob",
        name: "list",
        uid: list,
        controller: true,
        blockOwnerDeletion: true
      }
    ]
  }
  await apply("list-x", pullJob("v1beta1", "list-x7k2p", { ...template, image: `${images.listX}:1.0` }, child))
  await apply(
    "list-y",
    pullJob("v1beta1", "list-q4m9z", { ...template, image: `${images.listY}:1.0` }, { ...child, finalizers: [deletionProtection] })
  )
  const uid = {
    done: await uidOf("imagepulljob", "done"),
    running: await uidOf("imagepulljob", "running"),
    daily: await uidOf("imagepulljob", "daily"),
    listX: await uidOf("imagepulljob", "list-x7k2p"),
    listY: await uidOf("imagepulljob", "list-q4m9z")
  }
  await patchStatus(
    "imagepulljob",
    "done",
    { startTime: ago(900), completionTime: ago(600), desired: 2, active: 0, succeeded: 2, failed: 0, message: "job has completed" },
    "default"
  )
  await patchStatus(
    "imagepulljob",
    "running",
    { startTime: ago(120), desired: 2, active: 1, succeeded: 1, failed: 0, message: "job is running, progress 50.0%" },
    "default"
  )
  await patchStatus(
    "imagepulljob",
    "daily",
    { startTime: ago(2 * 86400), desired: 2, active: 0, succeeded: 2, failed: 0, message: "job is running, progress 100.0%" },
    "default"
  )
  await patchStatus(
    "imagepulljob",
    "list-x7k2p",
    { startTime: ago(300), completionTime: ago(240), desired: 2, active: 0, succeeded: 2, failed: 0, message: "job has completed" },
    "default"
  )
  await patchStatus(
    "imagepulljob",
    "list-q4m9z",
    { startTime: ago(300), desired: 2, active: 0, succeeded: 1, failed: 0, message: "job is running, progress 50.0%" },
    "default"
  )
  await patchStatus("imagelistpulljob", "list", { startTime: ago(300), desired: 2, active: 0, completed: 1, succeeded: 1 }, "default")

  // Copies: the running and Never jobs' (adopted), one of a job long gone and one from before 1.9
  // of the finished job (both deleted), and a Secret that is no copy (left alone).
  const copy = (name: string, references: string, labels: Record<string, string> = {}) => ({
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name,
      namespace: copies,
      labels,
      annotations: {
        "imagepulljobs.kruise.io/source-key": "default/regcred",
        "imagepulljobs.kruise.io/references": references,
        "imagepulljobs.kruise.io/mode": "batch"
      }
    },
    type: "kubernetes.io/dockerconfigjson",
    data: dockerConfig("old")
  })
  await apply("copy-used", copy("regcred-a1b2c3", "default/daily,default/running"))
  await apply("copy-orphan", copy("regcred-9f8e7d", "default/gone"))
  await apply("copy-old", copy("regcred-x5v7n", "default/done", { "imagepulljobs.kruise.io/source-uid": "0b6c-old" }))
  await apply("not-a-copy", {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "site-config", namespace: copies },
    data: { a: b64("b") }
  })

  // NodeImages, as upstream's controller (spec) and daemon (status) left them.
  const secretRef = [{ namespace: copies, name: "regcred-a1b2c3", mode: "batch" }]
  const spec = (node: (typeof nodes)[number]) => ({
    images: {
      [images.done]: { tags: [tagSpec("1.0", ago(900), alwaysPolicy, [owner("done", uid.done)])] },
      [images.running]: { pullSecrets: secretRef, tags: [tagSpec("1.0", ago(120), alwaysPolicy, [owner("running", uid.running)])] },
      [images.daily]: {
        pullSecrets: secretRef,
        tags: [
          node === "node-a"
            ? tagSpec("1.0", ago(3900), neverPolicy(86213), [owner("daily", uid.daily)], 3)
            : tagSpec("1.0", ago(25 * 3600 + 300), neverPolicy(85990), [owner("daily", uid.daily)], 2)
        ]
      },
      [images.listX]: { tags: [tagSpec("1.0", ago(300), alwaysPolicy, [owner("list-x7k2p", uid.listX)])] },
      ...(node === "node-a" ? { [images.listY]: { tags: [tagSpec("1.0", ago(300), alwaysPolicy, [owner("list-q4m9z", uid.listY)])] } } : {})
    }
  })
  const statuses = (node: (typeof nodes)[number]) => ({
    [images.done]: { tags: [succeeded(images.done, "1.0", ago(890), ago(600))] },
    [images.running]: {
      tags: [
        node === "node-a"
          ? succeeded(images.running, "1.0", ago(115), ago(100))
          : { tag: "1.0", phase: "Pulling", progress: 40, startTime: ago(60) }
      ]
    },
    [images.daily]: {
      tags: [
        node === "node-a"
          ? succeeded(images.daily, "1.0", ago(3890), ago(3600), 3)
          : succeeded(images.daily, "1.0", ago(25 * 3600 + 290), ago(25 * 3600), 2)
      ]
    },
    [images.listX]: { tags: [succeeded(images.listX, "1.0", ago(290), ago(250))] },
    ...(node === "node-a" ? { [images.listY]: { tags: [succeeded(images.listY, "1.0", ago(290), ago(260))] } } : {})
  })
  for (const node of nodes) {
    await apply(`nodeimage-${node}`, {
      apiVersion: "apps.kruise.io/v1beta1",
      kind: "NodeImage",
      metadata: { name: node, labels: { "kubernetes.io/hostname": node } },
      spec: spec(node)
    })
    const tags = node === "node-a" ? 5 : 4
    const pulling = node === "node-a" ? 0 : 1
    await patchStatus("nodeimage", node, {
      desired: tags,
      succeeded: tags - pulling,
      failed: 0,
      pulling,
      waiting: 0,
      imageStatuses: statuses(node),
      firstSyncStatus: { syncAt: ago(7 * 86400), status: "Succeeded" }
    })
  }
}

/** preheat in OpenKruise's place: the controller and a daemon per node, reading copies where upstream's daemon did. */
const startPreheat = async () => {
  await cluster.startController("controller", await freePort(), ["--secret-namespace", copies])
  for (const node of nodes) {
    const port = await freePort()
    daemonPorts[node] = port
    const daemon = cluster.spawn(`daemon-${node}`, [
      "simulated-daemon",
      "--node-name",
      node,
      "--kubeconfig",
      cluster.kubeconfig,
      "--metrics-port",
      String(port),
      "--metrics-host",
      "127.0.0.1",
      "--secret-namespace",
      copies
    ])
    await cluster.waitHealthy(daemon, port)
  }
}

beforeAll(async () => {
  cluster = await Cluster.startWith(async (started) => {
    cluster = started
    switchedAt = Date.now()
    await writeUpstreamState()
    await startPreheat()
  })
}, 90_000)

afterAll(async () => {
  await cluster?.stop()
})

beforeEach(({ onTestFailed }) => {
  onTestFailed(() => {
    console.error(cluster.dumpLogs())
  })
})

const job = (name: string) => cluster.getYaml(["imagepulljob", name])
const tagOf = (nodeImage: any, image: string) => ({
  spec: nodeImage.spec.images?.[image]?.tags?.[0],
  status: nodeImage.status?.imageStatuses?.[image]?.tags?.[0]
})
const secretNames = async () =>
  (await cluster.ok(["get", "secrets", "-n", copies, "-o", "name"]))
    .trim()
    .split("\n")
    .filter((s) => s !== "")

describe("taking over from OpenKruise", () => {
  it("finishes the interrupted work, pulls nothing finished again, keeps the Never job's daily rhythm", async () => {
    await eventually(
      "the running job completes",
      async () => ((await job("running")).status?.completionTime === undefined ? undefined : true),
      60_000
    )
    await eventually(
      "the list job completes",
      async () => ((await cluster.getYaml(["imagelistpulljob", "list"])).status?.completionTime === undefined ? undefined : true),
      60_000
    )
    const [a, b] = await Promise.all(nodes.map((n) => cluster.getYaml(["nodeimage", n])))
    expect((await job("running")).status).toMatchObject({ desired: 2, succeeded: 2, failed: 0 })

    // The list job's children are OpenKruise's own, carried on: none replaced.
    const children = (await cluster.getYaml(["imagepulljobs"])).items.filter((j: any) => j.metadata.ownerReferences?.[0]?.name === "list")
    expect(children.map((c: any) => c.metadata.name).sort()).toEqual(["list-q4m9z", "list-x7k2p"])

    const daily = await eventually(
      "node-b's expired Never tag pulled again (its daily run)",
      async () => {
        const tag = tagOf(await cluster.getYaml(["nodeimage", "node-b"]), images.daily)
        return tag.status?.phase === "Succeeded" && Date.parse(tag.status.completionTime) >= switchedAt - 1000 ? tag : undefined
      },
      60_000
    )
    // Daily rhythm: each tag's next run is its TTL after its last pull, 24 h +- 10 min (as upstream).
    const dayish = (ttl: number) => ttl >= 86400 - 600 && ttl <= 86400 + 600
    expect(dayish(daily.spec.pullPolicy.ttlSecondsAfterFinished)).toBe(true)
    const dailyA = tagOf(a, images.daily)
    expect(dailyA.spec.version).toBe(3)
    expect(dailyA.status).toMatchObject({ phase: "Succeeded", version: 3, completionTime: ago(3600) })
    expect(dayish(dailyA.spec.pullPolicy.ttlSecondsAfterFinished)).toBe(true)
    expect((await job("daily")).status.completionTime).toBeUndefined()

    // What OpenKruise's daemon finished stands as it wrote it: not pulled again.
    for (const [nodeImage, image, completed] of [
      [a, images.done, ago(600)],
      [b, images.done, ago(600)],
      [a, images.running, ago(100)],
      [a, images.listX, ago(250)],
      [b, images.listX, ago(250)],
      [a, images.listY, ago(260)]
    ] as const) {
      expect(tagOf(nodeImage, image).status, `${nodeImage.metadata.name} ${image}`).toMatchObject({
        phase: "Succeeded",
        completionTime: completed
      })
    }
    // node-a had nothing left to do; node-b the interrupted pull, the list job's second image and the daily run.
    expect(metricSum(await scrape(daemonPorts["node-a"]!), "preheat_pulls_total")).toBe(0)
    expect(metricSum(await scrape(daemonPorts["node-b"]!), "preheat_pulls_total")).toBe(3)
  })

  it("adopts OpenKruise's copies still in use, deletes the others, and leaves other Secrets alone", async () => {
    await eventually("the copies settled", async () => {
      const names = await secretNames()
      return names.includes("secret/regcred-9f8e7d") || names.includes("secret/regcred-x5v7n") ? undefined : names
    })
    // preheat's own copy, with upstream's bookkeeping as well (item 4), for the job still using it.
    const own = await cluster.getYaml(["secret", "default.regcred", "-n", copies])
    expect(own.metadata.annotations).toMatchObject({
      "imagepulljobs.kruise.io/source-key": "default/regcred",
      "imagepulljobs.kruise.io/references": "default/daily",
      "preheat.kruise.io/referenced-by": "default/daily"
    })
    // Upstream's copy: kept for the Never job it names, the finished job taken off, its data synced.
    const adopted = await eventually("the adopted copy narrowed to the job still running", async () => {
      const copy = await cluster.getYaml(["secret", "regcred-a1b2c3", "-n", copies])
      return copy.metadata.annotations["imagepulljobs.kruise.io/references"] === "default/daily" ? copy : undefined
    })
    expect(adopted.data).toEqual(dockerConfig("new"))
    expect(await secretNames()).toEqual(expect.arrayContaining(["secret/site-config"]))
    // NodeImages point at preheat's copy only: the daemons read what preheat keeps.
    const b = await cluster.getYaml(["nodeimage", "node-b"])
    expect(b.spec.images[images.daily].pullSecrets).toEqual([{ namespace: copies, name: "default.regcred" }])
  })

  it("deletes jobs OpenKruise protected, and with the last user the copies go", async () => {
    for (const name of ["running", "daily", "list-q4m9z"]) {
      expect((await job(name)).metadata.finalizers ?? []).not.toContain(deletionProtection)
    }
    await cluster.ok(["delete", "imagepulljob", "running", "daily", "--wait=false"])
    await cluster.ok(["delete", "imagelistpulljob", "list", "--wait=false"])
    await eventually("the jobs gone", async () => {
      const left = (await cluster.ok(["get", "imagepulljobs", "-o", "name"]))
        .trim()
        .split("\n")
        .filter((s) => s !== "")
      return left.length === 1 ? left : undefined
    })
    expect((await cluster.ok(["get", "imagepulljobs", "-o", "name"])).trim()).toBe("imagepulljob.apps.kruise.io/done")
    await eventually("only the Secret that is no copy left", async () => {
      const names = await secretNames()
      return names.length === 1 && names[0] === "secret/site-config" ? true : undefined
    })
  })
})
