/**
 * Scheduled pre-warm (issue 15) as a user sees it: the built bundle's API server, controller and
 * three daemons on the simulated runtime, driven with kubectl. A cron job due every minute creates
 * an ImageListPullJob at the next minute boundary, which completes on the nodes; kubectl shows
 * upstream's columns; an invalid schedule is refused at apply time.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { Cluster, eventually } from "./cluster.ts"

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
})
