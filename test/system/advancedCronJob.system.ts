/**
 * Scheduled pre-warm (issue 15) as a user sees it: the built bundle's API server, controller and
 * three daemons on the simulated runtime, driven with kubectl. A cron job due every minute creates
 * an ImageListPullJob at the next minute boundary, which completes on the nodes; kubectl shows
 * upstream's columns; an invalid schedule is refused at apply time. Issue 26: the cron job in
 * either version, and the deprecated spelling spec.pullPolicy.type (on this cluster, to save one).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { Cluster } from "./cluster.ts"
import { eventually } from "../support/eventually.ts"

const nodes = ["node-1", "node-2", "node-3"] as const

const cronJob = (name: string, schedule: string, template: string) => `apiVersion: apps.kruise.io/v1alpha1
kind: AdvancedCronJob
metadata:
  name: ${name}
spec:
  schedule: "${schedule}"
  concurrencyPolicy: Forbid
  template:
${template}`

const prewarm = `    imageListPullJobTemplate:
      metadata:
        labels:
          app: image-prefetch
      spec:
        images: [nginx:1.25.3, busybox:1.36]
        parallelism: 3
        completionPolicy:
          type: Always
`

let cluster: Cluster

beforeAll(async () => {
  cluster = await Cluster.startWith(async (c) => {
    await c.startNodes(nodes, {})
  })
}, 120_000)

afterAll(async () => {
  await cluster?.stop()
})

beforeEach(({ onTestFailed }) => {
  onTestFailed(() => {
    console.error(cluster.dumpLogs())
  })
})

describe("AdvancedCronJob driven with kubectl", () => {
  it("a schedule due every minute creates an ImageListPullJob that completes on every node", async () => {
    const applied = await cluster.applyFile("every-minute", cronJob("every-minute", "*/1 * * * *", prewarm))
    expect(applied).toMatchObject({ code: 0, stderr: "" })
    expect(applied.stdout).toContain("advancedcronjob.apps.kruise.io/every-minute created")

    // The next minute boundary is at most 60 s away.
    const name = await eventually(
      "the first scheduled ImageListPullJob",
      async () => {
        const names = (await cluster.ok(["get", "imagelistpulljobs", "-l", "app=image-prefetch", "-o", "name"])).trim()
        return names === "" ? undefined : names.split("\n")[0]!
      },
      75_000,
      1000
    )
    expect(name).toMatch(/^imagelistpulljob\.apps\.kruise\.io\/every-minute-\d{10}$/)
    await cluster.ok(["wait", name, "--for=jsonpath={.status.completionTime}", "--timeout=60s"])
    const job = await cluster.getYaml([name])
    expect(job.status).toMatchObject({ desired: 2, succeeded: 2, completed: 2 })
    const scheduledAt = Number(name.slice(name.lastIndexOf("-") + 1)) * 1000
    expect(job.metadata.annotations["apps.kruise.io/scheduled-at"]).toBe(new Date(scheduledAt).toISOString().replace(".000Z", "Z"))
    expect(job.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: "AdvancedCronJob", name: "every-minute", controller: true })
    ])

    // Upstream's printer columns; the schedule itself holds spaces, so the row is read by its header's offsets.
    const cron = await cluster.getYaml(["acj", "every-minute"])
    const scheduled = job.metadata.annotations["apps.kruise.io/scheduled-at"]
    expect(cron.status).toMatchObject({ type: "ImageListPullJob", lastScheduleTime: scheduled })
    const [header, row] = (await cluster.ok(["get", "acj"])).trimEnd().split("\n")
    expect(header!.split(/\s+/)).toEqual(["NAME", "SCHEDULE", "TYPE", "LASTSCHEDULETIME", "AGE"])
    const column = (title: string) => row!.slice(header!.indexOf(title)).split(/\s{2,}/)[0]
    expect([column("NAME"), column("SCHEDULE"), column("TYPE")]).toEqual(["every-minute", "*/1 * * * *", "ImageListPullJob"])
    expect(column("LASTSCHEDULETIME")).toMatch(/^\d+s$/)
    const events = await cluster.ok([
      "get",
      "events",
      "--field-selector",
      "involvedObject.name=every-minute",
      "-o",
      "jsonpath={.items[*].reason}"
    ])
    expect(events.split(" ")).toContain("SuccessfulCreate")
    // kubectl resolves the kind to its preferred version (v1beta1) and selects the Events by it.
    const forCron = await cluster.ok(["events", "--for", "advancedcronjob/every-minute", "-o", "jsonpath={.items[*].reason}"])
    expect(forCron.split(" ")).toContain("SuccessfulCreate")
    await cluster.ok(["delete", "acj", "every-minute"])
  }, 150_000)

  it("kubectl apply refuses an invalid schedule with the reason", async () => {
    const refused = await cluster.applyFile("bad-schedule", cronJob("bad-schedule", "61 * * * *", prewarm))
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toContain("spec.schedule")
    expect(refused.stderr).toContain('invalid schedule "61 * * * *": expected 5 fields (minute hour day-of-month month day-of-week)')
    const twoTemplates = await cluster.applyFile("two-templates", cronJob("two-templates", "@hourly", `${prewarm}    jobTemplate: {}\n`))
    expect(twoTemplates.code).not.toBe(0)
    expect(twoTemplates.stderr).toContain("spec can have only one template")
    expect((await cluster.kubectl(["get", "acj", "bad-schedule"])).code).not.toBe(0)
  })

  it("a jobTemplate cron job is accepted and reported as not supported", async () => {
    const applied = await cluster.applyFile(
      "batch",
      cronJob(
        "batch",
        "@hourly",
        `    jobTemplate:
      spec:
        template:
          spec:
            containers: [{name: c, image: busybox}]
            restartPolicy: Never
`
      )
    )
    expect(applied).toMatchObject({ code: 0, stderr: "" })
    await cluster.ok(["wait", "acj/batch", "--for=condition=Supported=false", "--timeout=30s"])
    const cron = await cluster.getYaml(["acj", "batch"])
    expect(cron.status.type).toBe("Job")
    expect(cron.status.conditions).toContainEqual(expect.objectContaining({ type: "Supported", reason: "TemplateNotSupported" }))
  })

  it("applied as v1beta1, read as v1alpha1 with its template, edited as v1alpha1 without losing it (issue 26)", async () => {
    const applied = await cluster.applyFile("versions", cronJob("versions", "@yearly", prewarm).replace("v1alpha1", "v1beta1"))
    expect(applied).toMatchObject({ code: 0, stderr: "" })
    const alpha = await cluster.getYaml(["advancedcronjobs.v1alpha1.apps.kruise.io", "versions"])
    expect(alpha.apiVersion).toBe("apps.kruise.io/v1alpha1")
    expect(alpha.spec.template.imageListPullJobTemplate.spec.images).toEqual(["nginx:1.25.3", "busybox:1.36"])
    await cluster.ok(["patch", "advancedcronjobs.v1alpha1.apps.kruise.io", "versions", "--type=merge", "-p", '{"spec":{"paused":true}}'])
    const stored = await cluster.getYaml(["acj", "versions"])
    expect(stored.apiVersion).toBe("apps.kruise.io/v1beta1")
    expect(stored.spec).toMatchObject({ paused: true, template: { imageListPullJobTemplate: { spec: { parallelism: 3 } } } })
    await cluster.ok(["delete", "acj", "versions"])
  })

  it("the deprecated spec.pullPolicy.type: pulled with, warned of once, refused when it contradicts imagePullPolicy (issue 26)", async () => {
    const job = (name: string, extra: string) => `apiVersion: apps.kruise.io/v1alpha1
kind: ImagePullJob
metadata:
  name: ${name}
spec:
  image: redis:7.2
  pullPolicy:
    type: Always
${extra}`
    const refused = await cluster.applyFile("contradicting", job("contradicting", "  imagePullPolicy: IfNotPresent\n"))
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toContain(
      'spec.pullPolicy.type: Invalid value: "object": pullPolicy.type Always differs from imagePullPolicy IfNotPresent: ' +
        "pullPolicy.type is deprecated, set imagePullPolicy only"
    )
    expect(await cluster.applyFile("seed-spelling", job("seed-spelling", ""))).toMatchObject({ code: 0, stderr: "" })
    await cluster.ok(["wait", "ipj/seed-spelling", "--for=jsonpath={.status.completionTime}", "--timeout=60s"])
    const nodeImages = JSON.parse(await cluster.ok(["get", "nodeimages", "-o", "json"])) as {
      items: ReadonlyArray<{ spec: { images?: Record<string, { tags: ReadonlyArray<{ tag: string; imagePullPolicy?: string }> }> } }>
    }
    const policies = nodeImages.items.map((n) => n.spec.images?.["redis"]?.tags.find((t) => t.tag === "7.2")?.imagePullPolicy)
    expect(policies).toEqual(["Always", "Always", "Always"])
    const warnings = await cluster.ok([
      "get",
      "events",
      "--field-selector",
      "involvedObject.name=seed-spelling,reason=DeprecatedField",
      "-o",
      'jsonpath={range .items[*]}{.type}: {.message}{"\\n"}{end}'
    ])
    expect(warnings).toBe(
      "Warning: spec.pullPolicy.type is deprecated: use spec.imagePullPolicy (pulling with Always, as spec.pullPolicy.type says)\n"
    )
    await cluster.ok(["delete", "ipj", "seed-spelling"])
  }, 120_000)
})
