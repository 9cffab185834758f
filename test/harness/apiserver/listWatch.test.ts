import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { eventually } from "../../support/eventually.ts"
import { imagePullJob, ipjPath, kruise, namespace, request, startServer, unique, watch } from "./serverHarness.ts"
import type { RunningServer } from "./serverHarness.ts"

let server: RunningServer
beforeAll(async () => {
  server = await startServer({ bookmarkInterval: "300 millis" })
})
afterAll(() => server.close())

const names = (items: ReadonlyArray<{ metadata: { name: string } }>) => items.map((o) => o.metadata.name)
const table = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
const mergePatch = "application/merge-patch+json"

const jobs = async (ns: string, count: number, labels: (i: number) => Record<string, string> = () => ({})) => {
  for (let i = 0; i < count; i++) {
    const created = await request(server, ipjPath(ns), { method: "POST", body: imagePullJob(`job-${i}`, {}, { labels: labels(i) }) })
    expect(created.status).toBe(201)
  }
}

describe("list", () => {
  it("label and field selectors; a bad one is 400", async () => {
    const ns = await namespace(server)
    await jobs(ns, 4, (i) => ({ tier: i % 2 === 0 ? "web" : "db" }))
    expect(names((await request(server, `${ipjPath(ns)}?labelSelector=tier%3Dweb`)).json.items)).toEqual(["job-0", "job-2"])
    expect(names((await request(server, `${ipjPath(ns)}?labelSelector=tier+notin+(web)`)).json.items)).toEqual(["job-1", "job-3"])
    expect(names((await request(server, `${ipjPath(ns)}?fieldSelector=metadata.name%3Djob-3`)).json.items)).toEqual(["job-3"])
    const everywhere = await request(server, `/apis/apps.kruise.io/v1alpha1/imagepulljobs?fieldSelector=metadata.namespace%3D${ns}`)
    expect(everywhere.json.items).toHaveLength(4)
    const bad = await request(server, `${ipjPath(ns)}?labelSelector=tier%3D%3D%3D`)
    expect(bad.status).toBe(400)
    const unsupported = await request(server, `${ipjPath(ns)}?fieldSelector=spec.image%3Dx`)
    expect(unsupported.json).toMatchObject({ code: 400, message: "field label not supported: spec.image" })
  })

  it("limit and continue page through one consistent snapshot", async () => {
    const ns = await namespace(server)
    await jobs(ns, 5)
    const first = await request(server, `${ipjPath(ns)}?limit=2`)
    expect(names(first.json.items)).toEqual(["job-0", "job-1"])
    expect(first.json.metadata.remainingItemCount).toBe(3)
    // Changes after the first page do not show in the later ones.
    await request(server, ipjPath(ns), { method: "POST", body: imagePullJob("job-9") })
    await request(server, ipjPath(ns, "job-3"), { method: "DELETE" })
    const second = await request(server, `${ipjPath(ns)}?limit=2&continue=${first.json.metadata.continue}`)
    expect(names(second.json.items)).toEqual(["job-2", "job-3"])
    expect(second.json.metadata.resourceVersion).toBe(first.json.metadata.resourceVersion)
    const last = await request(server, `${ipjPath(ns)}?limit=2&continue=${second.json.metadata.continue}`)
    expect(names(last.json.items)).toEqual(["job-4"])
    expect(last.json.metadata.continue).toBeUndefined()
    expect((await request(server, `${ipjPath(ns)}?continue=garbage!`)).status).toBe(400)
  })

  it("a continue token whose snapshot is gone is 410 Expired, with an inconsistent token to go on", async () => {
    const ns = await namespace(server)
    await jobs(ns, 3)
    const token = Buffer.from(JSON.stringify({ v: "meta.k8s.io/v1", rv: "1", start: `${ns}/job-0`, snapshot: "gone" })).toString(
      "base64url"
    )
    const expired = await request(server, `${ipjPath(ns)}?limit=1&continue=${token}`)
    expect(expired.status).toBe(410)
    expect(expired.json.reason).toBe("Expired")
    const rest = await request(server, `${ipjPath(ns)}?continue=${expired.json.metadata.continue}`)
    expect(names(rest.json.items)).toEqual(["job-1", "job-2"])
  })

  it("a Table from the CRD's printer columns, as kubectl get asks for it", async () => {
    const ns = await namespace(server)
    await jobs(ns, 1)
    await request(server, `${ipjPath(ns, "job-0")}/status`, {
      method: "PATCH",
      contentType: mergePatch,
      body: { status: { desired: 4, active: 1, succeeded: 2, failed: 1, message: "job is running, progress 75.0%" } }
    })
    const answer = await request(server, `${ipjPath(ns)}?limit=500`, { accept: table })
    expect(answer.headers.get("content-type")).toBe("application/json;as=Table;v=v1;g=meta.k8s.io")
    expect(answer.json).toMatchObject({ kind: "Table", apiVersion: "meta.k8s.io/v1" })
    expect(answer.json.columnDefinitions.map((c: { name: string }) => c.name)).toEqual([
      "Name",
      "TOTAL",
      "ACTIVE",
      "SUCCEED",
      "FAILED",
      "AGE",
      "MESSAGE"
    ])
    expect(answer.json.columnDefinitions[0]).toMatchObject({ type: "string", format: "name" })
    const [row] = answer.json.rows
    expect(row.cells).toEqual(["job-0", 4, 1, 2, 1, expect.stringMatching(/^\d+s$/), "job is running, progress 75.0%"])
    expect(row.object).toMatchObject({
      kind: "PartialObjectMetadata",
      apiVersion: "meta.k8s.io/v1",
      metadata: { name: "job-0", namespace: ns }
    })
    const full = await request(server, `${ipjPath(ns)}?includeObject=Object`, { accept: table })
    expect(full.json.rows[0].object.spec.image).toBe("nginx:1.25")
    const single = await request(server, ipjPath(ns, "job-0"), { accept: table })
    expect(single.json.rows).toHaveLength(1)
    const metadataOnly = await request(server, ipjPath(ns), { accept: "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io" })
    expect(metadataOnly.json).toMatchObject({
      kind: "PartialObjectMetadataList",
      items: [{ kind: "PartialObjectMetadata", metadata: { name: "job-0" } }]
    })
  })

  it("tables of built-in kinds have kube-apiserver's columns", async () => {
    const ns = await namespace(server)
    await request(server, `/api/v1/namespaces/${ns}/pods`, {
      method: "POST",
      body: {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "p" },
        spec: { nodeName: "n1", containers: [{ name: "c", image: "nginx" }] }
      }
    })
    const pods = await request(server, `/api/v1/namespaces/${ns}/pods`, { accept: table })
    expect(pods.json.columnDefinitions.filter((c: { priority: number }) => c.priority === 0).map((c: { name: string }) => c.name)).toEqual([
      "Name",
      "Ready",
      "Status",
      "Restarts",
      "Age"
    ])
    expect(pods.json.rows[0].cells.slice(0, 4)).toEqual(["p", "0/1", "Pending", "0"])
    const node = unique("node")
    await request(server, "/api/v1/nodes", {
      method: "POST",
      body: { apiVersion: "v1", kind: "Node", metadata: { name: node, labels: { "node-role.kubernetes.io/control-plane": "" } } }
    })
    await request(server, `/api/v1/nodes/${node}/status`, {
      method: "PATCH",
      contentType: mergePatch,
      body: { status: { conditions: [{ type: "Ready", status: "True" }], nodeInfo: { kubeletVersion: "v1.32.0" } } }
    })
    const nodes = await request(server, `/api/v1/nodes?fieldSelector=metadata.name%3D${node}`, { accept: table })
    expect(nodes.json.rows[0].cells.slice(0, 5)).toEqual([node, "Ready", "control-plane", expect.any(String), "v1.32.0"])
    const namespaces = await request(server, `/api/v1/namespaces/${ns}`, { accept: table })
    expect(namespaces.json.rows[0].cells.slice(0, 2)).toEqual([ns, "Active"])
  })
})

describe("watch", () => {
  it("flushes its headers at once, then streams ADDED, MODIFIED and DELETED as JSON lines", async () => {
    const ns = await namespace(server)
    const start = await request(server, ipjPath(ns))
    const stream = await watch(server, `${ipjPath(ns)}?watch=1&resourceVersion=${start.json.metadata.resourceVersion}`)
    try {
      // fetch resolved: the headers arrived although no event has happened yet.
      expect(stream.status).toBe(200)
      expect(stream.headers.get("content-type")).toBe("application/json")
      await request(server, ipjPath(ns), { method: "POST", body: imagePullJob("job") })
      await request(server, ipjPath(ns, "job"), { method: "PATCH", contentType: mergePatch, body: { spec: { parallelism: 2 } } })
      await request(server, ipjPath(ns, "job"), { method: "DELETE" })
      const events = [await stream.next(), await stream.next(), await stream.next()]
      expect(events.map((e) => `${e?.type} ${e?.object.metadata.name}`)).toEqual(["ADDED job", "MODIFIED job", "DELETED job"])
      expect(events[1]?.object.spec.parallelism).toBe(2)
    } finally {
      stream.close()
    }
  })

  it("sends bookmarks only when allowed; timeoutSeconds ends the stream", async () => {
    const ns = await namespace(server)
    const quiet = await watch(server, `${ipjPath(ns)}?watch=true&timeoutSeconds=1`)
    expect(await quiet.next(3000)).toBeUndefined()
    const bookmarked = await watch(server, `${ipjPath(ns)}?watch=true&allowWatchBookmarks=true&timeoutSeconds=5`)
    try {
      const event = await bookmarked.next(3000)
      expect(event).toEqual({
        type: "BOOKMARK",
        object: { kind: "ImagePullJob", apiVersion: kruise, metadata: { resourceVersion: expect.stringMatching(/^\d+$/) } }
      })
    } finally {
      bookmarked.close()
    }
  })

  it("a resourceVersion older than the history is an ERROR event (410 Expired) in a 200 stream", async () => {
    const small = await startServer({ historyLimit: 2 })
    try {
      const ns = await namespace(small)
      const start = await request(small, ipjPath(ns))
      for (let i = 0; i < 4; i++) await request(small, ipjPath(ns), { method: "POST", body: imagePullJob(`j${i}`) })
      const stream = await watch(small, `${ipjPath(ns)}?watch=1&resourceVersion=${start.json.metadata.resourceVersion}`)
      expect(stream.status).toBe(200)
      const error = await stream.next()
      expect(error).toEqual({
        type: "ERROR",
        object: expect.objectContaining({
          kind: "Status",
          status: "Failure",
          reason: "Expired",
          code: 410,
          message: expect.stringMatching(/^too old resource version: \d+ \(\d+\)$/)
        })
      })
      expect(await stream.next()).toBeUndefined()
    } finally {
      await small.close()
    }
  })

  it("watches one object by field selector or by the /watch/ path; Tables carry headers first only", async () => {
    const ns = await namespace(server)
    await jobs(ns, 2)
    const byName = await watch(server, `${ipjPath(ns)}?watch=1&fieldSelector=metadata.name%3Djob-1`)
    const byPath = await watch(server, `/apis/apps.kruise.io/v1alpha1/watch/namespaces/${ns}/imagepulljobs/job-1`)
    const asTable = await watch(server, `${ipjPath(ns)}?watch=1`, { accept: table })
    try {
      expect((await byName.next())?.object.metadata.name).toBe("job-1")
      expect((await byPath.next())?.object.metadata.name).toBe("job-1")
      const first = await asTable.next()
      expect(first?.object).toMatchObject({ kind: "Table", rows: [{ cells: ["job-0", null, null, null, null, expect.any(String), null] }] })
      expect(first?.object.columnDefinitions).toHaveLength(7)
      const second = await asTable.next()
      expect(second?.object.columnDefinitions).toEqual([])
      expect(second?.object.rows[0].cells[0]).toBe("job-1")
    } finally {
      byName.close()
      byPath.close()
      asTable.close()
    }
  })

  it("sendInitialEvents: the current objects, a bookmark marking their end, then changes", async () => {
    const ns = await namespace(server)
    await jobs(ns, 2)
    const stream = await watch(
      server,
      `${ipjPath(ns)}?watch=1&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan`
    )
    try {
      expect((await stream.next())?.type).toBe("ADDED")
      expect((await stream.next())?.type).toBe("ADDED")
      const end = await stream.next()
      expect(end).toMatchObject({ type: "BOOKMARK", object: { metadata: { annotations: { "k8s.io/initial-events-end": "true" } } } })
      await request(server, ipjPath(ns), { method: "POST", body: imagePullJob("later") })
      let next = await stream.next()
      while (next?.type === "BOOKMARK") next = await stream.next()
      expect(next).toMatchObject({ type: "ADDED", object: { metadata: { name: "later" } } })
    } finally {
      stream.close()
    }
  })

  it("a client that hangs up releases its watch", async () => {
    const own = await startServer()
    try {
      const stream = await watch(own, `${ipjPath("default")}?watch=1`)
      await eventually(
        "the watch to open",
        async () => {
          expect(await Effect.runPromise(own.store.openWatches)).toBe(1)
          return true
        },
        5_000,
        20
      )
      stream.close()
      await eventually(
        "the watch to be released",
        async () => {
          expect(await Effect.runPromise(own.store.openWatches)).toBe(0)
          return true
        },
        5_000,
        20
      )
    } finally {
      await own.close()
    }
  })

  it("boolean parameters as kube-apiserver reads them: any value but 0 or false (any case) is true, an empty one too", async () => {
    const ns = await namespace(server)
    await jobs(ns, 1)
    for (const value of ["True", "TRUE", "yes", ""]) {
      const stream = await watch(server, `${ipjPath(ns)}?watch=${value}&timeoutSeconds=2`)
      try {
        expect(stream.headers.get("transfer-encoding"), `watch=${value}`).toBe("chunked")
        expect(await stream.next(), `watch=${value}`).toMatchObject({ type: "ADDED", object: { metadata: { name: "job-0" } } })
      } finally {
        stream.close()
      }
    }
    for (const value of ["0", "false", "False"]) {
      const listed = await request(server, `${ipjPath(ns)}?watch=${value}`)
      expect(listed.json, `watch=${value}`).toMatchObject({ kind: "ImagePullJobList" })
    }
  })

  it("a bookmark 2 s before the watch's timeout, as the watch cache sends, besides the periodic ones", async () => {
    const own = await startServer({ bookmarkInterval: "1 hour" })
    try {
      const started = Date.now()
      const stream = await watch(own, `${ipjPath("default")}?watch=true&allowWatchBookmarks=True&timeoutSeconds=4`)
      const event = await stream.next(3500)
      expect(event).toMatchObject({ type: "BOOKMARK", object: { metadata: { resourceVersion: expect.stringMatching(/^\d+$/) } } })
      expect(Date.now() - started).toBeGreaterThanOrEqual(1500)
      expect(await stream.next(4000)).toBeUndefined()
    } finally {
      await own.close()
    }
  })
})
