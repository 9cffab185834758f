/**
 * The user's view of preheat (issue 5, item 3): API server, controller and three daemons on the
 * simulated runtime as separate processes from the built bundle, driven only with kubectl.
 */
import { readdirSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { Cluster, metricSum, scrape, specTags, tagPhases } from "./cluster.ts"
import { eventually } from "../support/eventually.ts"
import { freePort } from "../support/freePort.ts"

const nodes = ["node-1", "node-2", "node-3"] as const

// The seed document's ImagePullJob, without `selector.names` (names and labels together are
// invalid): it selects the nodes labelled node-type=xxx, which all three are.
const jobWithAlways = `apiVersion: apps.kruise.io/v1alpha1
kind: ImagePullJob
metadata:
  name: job-with-always
spec:
  image: nginx:1.9.1
  parallelism: 10
  selector:
    matchLabels:
      node-type: xxx
  completionPolicy:
    type: Always
    activeDeadlineSeconds: 1200
    ttlSecondsAfterFinished: 300
  pullPolicy:
    backoffLimit: 3
    timeoutSeconds: 300
`

let cluster: Cluster
const daemonPorts: Record<string, number> = {}

beforeAll(async () => {
  cluster = await Cluster.startWith(startProcesses)
}, 120_000)

const startProcesses = async (cluster: Cluster) => {
  await cluster.createNodes(nodes, { "node-type": "xxx" })
  await cluster.startController("controller", await freePort())
  for (const node of nodes) {
    daemonPorts[node] = await freePort()
    await cluster.startDaemon(node, daemonPorts[node])
  }
  // One NodeImage per Ready Node, once the node has been Ready for --node-ready-delay-seconds.
  await eventually("a NodeImage per node", async () => {
    const names = (await cluster.ok(["get", "nodeimages", "-o", "name"])).trim().split("\n").sort()
    return names.length === 3 ? names : undefined
  })
}

afterAll(async () => {
  await cluster?.stop()
})

beforeEach(({ onTestFailed }) => {
  onTestFailed(() => {
    console.error(cluster.dumpLogs())
  })
})

describe("preheat driven with kubectl", () => {
  it("pulls the seed ImagePullJob on every node and reports it in kubectl get ipj and the NodeImages", async () => {
    const applied = await cluster.applyFile("job-with-always", jobWithAlways)
    expect(applied.stderr).toBe("")
    expect(applied.stdout).toContain("imagepulljob.apps.kruise.io/job-with-always created")

    await cluster.ok(["wait", "ipj/job-with-always", "--for=jsonpath={.status.completionTime}", "--timeout=60s"])

    const table = await cluster.ok(["get", "ipj"])
    const [header, row] = table.trim().split("\n")
    expect(header?.split(/\s+/)).toEqual(["NAME", "TOTAL", "ACTIVE", "SUCCEED", "FAILED", "AGE", "MESSAGE"])
    expect(row?.split(/\s+/).slice(0, 5)).toEqual(["job-with-always", "3", "0", "3", "0"])

    for (const node of nodes) {
      const nodeImage = await cluster.getYaml(["nodeimage", node])
      expect(tagPhases(nodeImage, "nginx")).toEqual({ "1.9.1": "Succeeded" })
    }

    // kubectl finds an object's events by the version it resolves the kind to (v1beta1, the
    // preferred one), whichever version the job was applied in (v1alpha1 here).
    const reasons = async (kind: string, name: string) =>
      (await cluster.ok(["events", "--for", `${kind}/${name}`, "-o", "jsonpath={.items[*].reason}"])).split(" ")
    expect(await reasons("imagepulljob", "job-with-always")).toEqual(expect.arrayContaining(["Started", "Completed"]))
    // A successful pull is in the NodeImage's status (above), not an Event per node (pullEvents.ts).
    expect(await reasons("nodeimage", "node-1")).not.toContain("PullImageSucceed")
  })

  it("pulls on one node when its NodeImage is patched as in the seed document", async () => {
    await cluster.ok([
      "patch",
      "nodeimage",
      "node-1",
      "--type=merge",
      "-p",
      '{"spec":{"images":{"ubuntu":{"tags":[{"tag":"latest","pullPolicy":{"ttlSecondsAfterFinished":300}}]}}}}'
    ])
    await eventually("ubuntu:latest Succeeded on node-1", async () => {
      const phases = tagPhases(await cluster.getYaml(["nodeimage", "node-1"]), "ubuntu")
      return phases["latest"] === "Succeeded" ? true : undefined
    })
    for (const node of ["node-2", "node-3"]) {
      expect(specTags(await cluster.getYaml(["nodeimage", node]), "ubuntu")).toEqual([])
    }
  })

  it("keeps a Never job's image on every node, never completing, and removes its tags on delete", async () => {
    const applied = await cluster.applyFile(
      "job-with-never",
      `apiVersion: apps.kruise.io/v1alpha1
kind: ImagePullJob
metadata:
  name: job-with-never
spec:
  image: redis:7.2
  parallelism: 3
  completionPolicy:
    type: Never
`
    )
    expect(applied.code).toBe(0)
    await eventually("the Never job succeeded on 3 nodes", async () => {
      const succeeded = await cluster.ok(["get", "ipj", "job-with-never", "-o", "jsonpath={.status.succeeded}"])
      return succeeded === "3" ? true : undefined
    })
    const status = (await cluster.getYaml(["ipj", "job-with-never"])).status
    expect(status.completionTime).toBeUndefined()

    await cluster.ok(["delete", "ipj", "job-with-never"])
    await eventually(
      "redis:7.2 gone from every NodeImage spec",
      async () => {
        for (const node of nodes) {
          if (specTags(await cluster.getYaml(["nodeimage", node]), "redis").length > 0) return undefined
        }
        return true
      },
      10_000
    )
  })

  it("pulls every image of an ImageListPullJob and cleans up on delete", async () => {
    const applied = await cluster.applyFile(
      "list-job",
      `apiVersion: apps.kruise.io/v1alpha1
kind: ImageListPullJob
metadata:
  name: job-with-always
spec:
  images:
  - busybox:1.29.2
  - alpine:3.20
  parallelism: 3
  completionPolicy:
    type: Always
`
    )
    expect(applied.code).toBe(0)
    await cluster.ok(["wait", "imagelistpulljob/job-with-always", "--for=jsonpath={.status.completionTime}", "--timeout=60s"])
    const status = (await cluster.getYaml(["imagelistpulljob", "job-with-always"])).status
    expect({ desired: status.desired, succeeded: status.succeeded }).toEqual({ desired: 2, succeeded: 2 })
    const created = await cluster.ok(["events", "--for", "imagelistpulljob/job-with-always", "-o", "jsonpath={.items[*].reason}"])
    expect(created.split(" ")).toContain("CreatedImagePullJob")
    // The children's owner is named by its preferred version, and cascading deletion follows it below.
    const owners = await cluster.ok([
      "get",
      "ipj",
      "-l",
      "imagelistpulljob.apps.kruise.io/template-hash",
      "-o",
      "jsonpath={.items[*].metadata.ownerReferences[*].apiVersion}"
    ])
    expect(owners.split(" ")).toEqual(["apps.kruise.io/v1beta1", "apps.kruise.io/v1beta1"])
    for (const node of nodes) {
      const nodeImage = await cluster.getYaml(["nodeimage", node])
      expect(tagPhases(nodeImage, "busybox")).toEqual({ "1.29.2": "Succeeded" })
      expect(tagPhases(nodeImage, "alpine")).toEqual({ "3.20": "Succeeded" })
    }

    await cluster.ok(["delete", "imagelistpulljob", "job-with-always"])
    await cluster.ok(["delete", "ipj", "job-with-always"])
    await eventually(
      "the jobs' tags gone from every NodeImage spec",
      async () => {
        for (const node of nodes) {
          const nodeImage = await cluster.getYaml(["nodeimage", node])
          for (const image of ["busybox", "alpine", "nginx"]) if (specTags(nodeImage, image).length > 0) return undefined
        }
        return true
      },
      10_000
    )
    // Child ImagePullJobs go with their list (ownerReference cascading).
    expect((await cluster.ok(["get", "ipj", "-o", "name"])).trim()).toBe("")
  })

  it("rejects a selector with both names and labels at kubectl apply, with the SPEC message", async () => {
    const rejected = await cluster.applyFile(
      "bad-job",
      `apiVersion: apps.kruise.io/v1alpha1
kind: ImagePullJob
metadata:
  name: bad-job
spec:
  image: nginx:1.9.1
  selector:
    names:
    - node-1
    matchLabels:
      node-type: xxx
`
    )
    expect(rejected.code).not.toBe(0)
    expect(rejected.stderr).toContain("can not set both names and labelSelector in this spec.selector")
    expect((await cluster.kubectl(["get", "ipj", "bad-job"])).code).not.toBe(0)
  })

  it("counted each pull once on the daemons' /metrics", async () => {
    // nginx, busybox, alpine and redis on every node, ubuntu on node-1 only.
    for (const node of nodes) {
      const pulls = metricSum(await scrape(daemonPorts[node]!), "preheat_pulls_total")
      expect({ node, pulls }).toEqual({ node, pulls: node === "node-1" ? 5 : 4 })
    }
  })
  it("applies every example in deploy/examples and each one finishes its work", async () => {
    // The examples select Linux nodes and the nodes of Pods labelled app=web, tier=frontend.
    for (const node of nodes) await cluster.ok(["label", "node", node, "kubernetes.io/os=linux", "--overwrite"])
    await cluster.applyFile(
      "web-pod",
      `apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: {app: web, tier: frontend}
spec:
  nodeName: node-2
  containers: [{name: web, image: nginx:1.25.3}]
`
    )
    const examples = join(import.meta.dirname, "../../deploy/examples")
    for (const file of readdirSync(examples)
      .filter((f) => f.endsWith(".yaml"))
      .sort()) {
      const applied = await cluster.kubectl(["apply", "-f", join(examples, file)])
      expect({ file, code: applied.code, stderr: applied.stderr }).toEqual({ file, code: 0, stderr: "" })
    }
    for (const job of ["job-with-always", "job-with-podselector", "job-with-secret"]) {
      await cluster.ok(["wait", `ipj/${job}`, "--for=jsonpath={.status.completionTime}", "--timeout=60s"])
    }
    const always = await cluster.getYaml(["ipj", "job-with-always"])
    expect(always.status).toMatchObject({ desired: 3, succeeded: 3, failed: 0 })
    const podSelected = await cluster.getYaml(["ipj", "job-with-podselector"])
    expect(podSelected.status).toMatchObject({ desired: 1, succeeded: 1 })
    const withSecret = await cluster.getYaml(["ipj", "job-with-secret"])
    expect(withSecret.status).toMatchObject({ desired: 3, succeeded: 3 })
    // The secret-backed job pulled with the daemons' copy of its secret, and released it once complete
    // (as upstream): nodes can read a credential no longer than the pulls need it.
    await eventually("the completed job's secret copy released", async () => {
      const copy = await cluster.kubectl(["get", "secret", "-n", "preheat-daemon-config", "-o", "name", "default.my-registry-credentials"])
      return copy.code !== 0 && copy.stderr.includes("NotFound") ? true : undefined
    })
    // By name: the nightly AdvancedCronJob example may add one of its own runs.
    await cluster.ok(["wait", "imagelistpulljob/list-job-with-always", "--for=jsonpath={.status.completionTime}", "--timeout=60s"])
    await eventually("the Never example on every node", async () => {
      const never = await cluster.getYaml(["ipj", "job-with-never"])
      return never.status?.succeeded === 3 ? never : undefined
    })
  })
})
