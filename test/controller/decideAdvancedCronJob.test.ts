// The AdvancedCronJob decision (issue 15, scheduled pre-warm) on chosen times: which run starts,
// under which name, what is deleted, the status and when to wake, as upstream's controller does.
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import type { AdvancedCronJob } from "../../src/api/advancedCronJob.ts"
import { decodeAdvancedCronJob, decodeImageListPullJob } from "../../src/api/decode.ts"
import type { ImageListPullJob } from "../../src/api/imageListPullJob.ts"
import { decideAdvancedCronJob, scheduledTimeAnnotation } from "../../src/controller/advancedCronJob/decide.ts"
import { tooManyMissedMessage } from "../../src/controller/advancedCronJob/schedule.ts"

const at = (iso: string): number => Date.parse(iso)
const unix = (iso: string): number => at(iso) / 1000

const template = {
  imageListPullJobTemplate: {
    metadata: { labels: { app: "prefetch" }, annotations: { note: "nightly" } },
    spec: { images: ["nginx:1.25", "redis:7.0"], parallelism: 5 }
  }
}

const cronJob = (spec: Record<string, unknown>, options: { created?: string; status?: unknown } = {}): AdvancedCronJob => {
  const r = decodeAdvancedCronJob({
    metadata: {
      name: "warm",
      namespace: "ns",
      uid: "cron-uid",
      generation: 1,
      creationTimestamp: options.created ?? "2026-12-01T00:00:00Z"
    },
    spec: { template, ...spec },
    ...(options.status === undefined ? {} : { status: options.status })
  })
  if (Result.isFailure(r)) throw new Error(r.failure.message)
  return r.success
}

/** A child as the controller created it, scheduled at `scheduled`, in one of the states upstream tells apart. */
const child = (scheduled: string, state: "active" | "succeeded" | "failed", startTime = scheduled): ImageListPullJob => {
  const r = decodeImageListPullJob({
    metadata: {
      name: `warm-${unix(scheduled)}`,
      namespace: "ns",
      uid: `uid-${unix(scheduled)}`,
      annotations: { [scheduledTimeAnnotation]: scheduled },
      ownerReferences: [{ apiVersion: "apps.kruise.io/v1alpha1", kind: "AdvancedCronJob", name: "warm", uid: "cron-uid", controller: true }]
    },
    spec: { images: ["nginx:1.25", "redis:7.0"] },
    status: {
      startTime,
      desired: 2,
      succeeded: state === "failed" ? 1 : state === "succeeded" ? 2 : 0,
      ...(state === "active" ? {} : { completionTime: startTime })
    }
  })
  if (Result.isFailure(r)) throw new Error(r.failure.message)
  return r.success
}

const createdName = (d: ReturnType<typeof decideAdvancedCronJob>) => d.create?.metadata.name

describe("decideAdvancedCronJob: a run falls due", () => {
  it("creates the ImageListPullJob named <cron>-<unix time>, owned, with the template's metadata and spec", () => {
    const cron = cronJob({ schedule: "*/5 * * * *" }, { created: "2026-12-01T11:58:00Z" })
    const d = decideAdvancedCronJob(cron, [], at("2026-12-01T12:00:10Z"))
    expect(d.create).toEqual({
      apiVersion: "apps.kruise.io/v1alpha1",
      kind: "ImageListPullJob",
      metadata: {
        name: `warm-${unix("2026-12-01T12:00:00Z")}`,
        namespace: "ns",
        labels: { app: "prefetch" },
        annotations: { note: "nightly", [scheduledTimeAnnotation]: "2026-12-01T12:00:00Z" },
        // The version kubectl resolves AdvancedCronJob to, as every reference names it.
        ownerReferences: [
          {
            apiVersion: "apps.kruise.io/v1beta1",
            kind: "AdvancedCronJob",
            name: "warm",
            uid: "cron-uid",
            controller: true,
            blockOwnerDeletion: true
          }
        ]
      },
      spec: cron.spec.template.imageListPullJobTemplate!.spec
    })
    expect(d.status).toMatchObject({
      type: "ImageListPullJob",
      lastScheduleTime: "2026-12-01T12:00:00Z",
      active: [
        { apiVersion: "apps.kruise.io/v1beta1", kind: "ImageListPullJob", name: `warm-${unix("2026-12-01T12:00:00Z")}`, namespace: "ns" }
      ]
    })
    expect(d.status.conditions?.map((c) => [c.type, c.status])).toEqual([
      ["Valid", "True"],
      ["Supported", "True"]
    ])
    expect(d.events).toEqual([{ type: "Normal", reason: "SuccessfulCreate", message: `Created job warm-${unix("2026-12-01T12:00:00Z")}` }])
    expect(d.wakeAt).toBe(at("2026-12-01T12:05:00Z"))
  })

  it("before the first run: nothing to do, wake at it", () => {
    const d = decideAdvancedCronJob(cronJob({ schedule: "@hourly" }, { created: "2026-12-01T11:20:00Z" }), [], at("2026-12-01T11:30:00Z"))
    expect(d.create).toBeUndefined()
    expect(d.wakeAt).toBe(at("2026-12-01T12:00:00Z"))
    expect(d.status.lastScheduleTime).toBeUndefined()
  })

  it("a run already started (its job exists) is not started again", () => {
    const cron = cronJob({ schedule: "*/5 * * * *" }, { created: "2026-12-01T11:58:00Z" })
    const d = decideAdvancedCronJob(cron, [child("2026-12-01T12:00:00Z", "active")], at("2026-12-01T12:03:00Z"))
    expect(d.create).toBeUndefined()
    expect(d.status).toMatchObject({
      lastScheduleTime: "2026-12-01T12:00:00Z",
      active: [{ name: `warm-${unix("2026-12-01T12:00:00Z")}`, uid: `uid-${unix("2026-12-01T12:00:00Z")}` }]
    })
    expect(d.wakeAt).toBe(at("2026-12-01T12:05:00Z"))
  })

  it("several missed runs start only the latest one", () => {
    const cron = cronJob({ schedule: "*/5 * * * *" }, { status: { lastScheduleTime: "2026-12-01T12:00:00Z" } })
    const d = decideAdvancedCronJob(cron, [child("2026-12-01T12:00:00Z", "succeeded")], at("2026-12-01T12:17:00Z"))
    expect(createdName(d)).toBe(`warm-${unix("2026-12-01T12:15:00Z")}`)
    expect(d.status.lastScheduleTime).toBe("2026-12-01T12:15:00Z")
    expect(d.wakeAt).toBe(at("2026-12-01T12:20:00Z"))
  })

  it("startingDeadlineSeconds: a missed run older than the deadline is skipped, a recent one starts", () => {
    const status = { lastScheduleTime: "2026-12-01T12:00:00Z" }
    const now = at("2026-12-01T12:17:00Z")
    const late = decideAdvancedCronJob(cronJob({ schedule: "*/5 * * * *", startingDeadlineSeconds: 60 }, { status }), [], now)
    expect(late.create).toBeUndefined()
    expect(late.wakeAt).toBe(at("2026-12-01T12:20:00Z"))
    const inTime = decideAdvancedCronJob(cronJob({ schedule: "*/5 * * * *", startingDeadlineSeconds: 180 }, { status }), [], now)
    expect(createdName(inTime)).toBe(`warm-${unix("2026-12-01T12:15:00Z")}`)
  })

  it("more than 100 missed runs: upstream's warning, nothing started, no wake-up; a deadline lifts it", () => {
    const status = { lastScheduleTime: "2026-12-01T00:00:00Z" }
    const now = at("2026-12-01T02:00:30Z")
    const stuck = decideAdvancedCronJob(cronJob({ schedule: "* * * * *" }, { status }), [], now)
    expect(stuck.create).toBeUndefined()
    expect(stuck.wakeAt).toBeUndefined()
    expect(stuck.events).toEqual([{ type: "Warning", reason: "TooManyMissedTimes", message: tooManyMissedMessage }])
    expect(tooManyMissedMessage).toBe(
      "too many missed start times (> 100). Set or decrease .spec.startingDeadlineSeconds or check clock skew"
    )
    // Exactly 100 missed runs are still caught up (the latest one).
    const hundred = decideAdvancedCronJob(cronJob({ schedule: "* * * * *" }, { status }), [], at("2026-12-01T01:40:30Z"))
    expect(createdName(hundred)).toBe(`warm-${unix("2026-12-01T01:40:00Z")}`)
    const bounded = decideAdvancedCronJob(cronJob({ schedule: "* * * * *", startingDeadlineSeconds: 300 }, { status }), [], now)
    expect(createdName(bounded)).toBe(`warm-${unix("2026-12-01T02:00:00Z")}`)
  })

  it("paused: status kept up to date, nothing started, no wake-up", () => {
    const cron = cronJob({ schedule: "*/5 * * * *", paused: true }, { status: { lastScheduleTime: "2026-12-01T12:00:00Z" } })
    const d = decideAdvancedCronJob(cron, [child("2026-12-01T12:00:00Z", "active")], at("2026-12-01T12:17:00Z"))
    expect(d.create).toBeUndefined()
    expect(d.wakeAt).toBeUndefined()
    expect(d.status.active).toHaveLength(1)
  })
})

describe("decideAdvancedCronJob: concurrency policies", () => {
  const status = { lastScheduleTime: "2026-12-01T12:00:00Z" }
  const running = [child("2026-12-01T12:00:00Z", "active")]
  const now = at("2026-12-01T12:05:05Z")

  it("Allow (the default) starts the new run next to the active one", () => {
    const d = decideAdvancedCronJob(cronJob({ schedule: "*/5 * * * *" }, { status }), running, now)
    expect(createdName(d)).toBe(`warm-${unix("2026-12-01T12:05:00Z")}`)
    expect(d.delete).toEqual([])
    expect(d.status.active?.map((r) => r.name)).toEqual([`warm-${unix("2026-12-01T12:00:00Z")}`, `warm-${unix("2026-12-01T12:05:00Z")}`])
  })

  it("Forbid skips while one is active, and starts the missed run once it finished", () => {
    const blocked = decideAdvancedCronJob(cronJob({ schedule: "*/5 * * * *", concurrencyPolicy: "Forbid" }, { status }), running, now)
    expect(blocked.create).toBeUndefined()
    expect(blocked.wakeAt).toBe(at("2026-12-01T12:10:00Z"))
    const finished = [child("2026-12-01T12:00:00Z", "succeeded")]
    const d = decideAdvancedCronJob(cronJob({ schedule: "*/5 * * * *", concurrencyPolicy: "Forbid" }, { status }), finished, now + 60_000)
    expect(createdName(d)).toBe(`warm-${unix("2026-12-01T12:05:00Z")}`)
  })

  it("Replace deletes the active job and starts the new one", () => {
    const d = decideAdvancedCronJob(cronJob({ schedule: "*/5 * * * *", concurrencyPolicy: "Replace" }, { status }), running, now)
    expect(d.delete).toEqual([`warm-${unix("2026-12-01T12:00:00Z")}`])
    expect(createdName(d)).toBe(`warm-${unix("2026-12-01T12:05:00Z")}`)
    expect(d.status.active?.map((r) => r.name)).toEqual([`warm-${unix("2026-12-01T12:05:00Z")}`])
    expect(d.events.map((e) => e.reason)).toEqual(["SuccessfulDelete", "SuccessfulCreate"])
  })
})

describe("decideAdvancedCronJob: history limits", () => {
  const hours = ["01", "02", "03", "04", "05"].map((h) => `2026-12-01T${h}:00:00Z`)

  it("defaults as upstream (3 successful, 1 failed): the oldest finished jobs beyond them are deleted", () => {
    const children = [
      ...hours.map((h) => child(h, "succeeded")),
      child("2026-12-01T06:00:00Z", "failed"),
      child("2026-12-01T07:00:00Z", "failed"),
      child("2026-12-01T08:00:00Z", "active")
    ]
    const cron = cronJob({ schedule: "0 * * * *" })
    expect([cron.spec.successfulJobsHistoryLimit, cron.spec.failedJobsHistoryLimit]).toEqual([3, 1])
    const d = decideAdvancedCronJob(cron, children, at("2026-12-01T08:30:00Z"))
    expect(d.delete).toEqual([`warm-${unix("2026-12-01T06:00:00Z")}`, `warm-${unix(hours[0]!)}`, `warm-${unix(hours[1]!)}`])
    expect(d.create).toBeUndefined()
  })

  it("ordered by startTime, not by name; limit 0 keeps none, and the run they were for is not started again", () => {
    const children = [child(hours[0]!, "succeeded", hours[2]!), child(hours[1]!, "succeeded", hours[1]!)]
    const limited = (limit: number) => cronJob({ schedule: "0 * * * *", successfulJobsHistoryLimit: limit })
    const one = decideAdvancedCronJob(limited(1), children, at("2026-12-01T02:30:00Z"))
    expect(one.delete).toEqual([`warm-${unix(hours[1]!)}`])
    const none = decideAdvancedCronJob(limited(0), children, at("2026-12-01T02:30:00Z"))
    expect(none.delete).toHaveLength(2)
    // The jobs are gone; the status still remembers the last run, so it is not started twice.
    const after = decideAdvancedCronJob(
      cronJob({ schedule: "0 * * * *", successfulJobsHistoryLimit: 0 }, { status: none.status }),
      [],
      at("2026-12-01T02:31:00Z")
    )
    expect(after.create).toBeUndefined()
    expect(after.wakeAt).toBe(at("2026-12-01T03:00:00Z"))
  })
})

describe("decideAdvancedCronJob: time zones", () => {
  it("spring forward in America/New_York: a 02:00 run falls in the gap and starts at 03:00 EDT (Vixie cron, croner)", () => {
    const cron = cronJob({ schedule: "0 2 * * *", timeZone: "America/New_York" }, { created: "2026-03-07T12:00:00Z" })
    // 2026-03-08 02:00 EST does not exist; 03:00 EDT is 07:00Z.
    const d = decideAdvancedCronJob(cron, [], at("2026-03-08T07:00:30Z"))
    expect(createdName(d)).toBe(`warm-${unix("2026-03-08T07:00:00Z")}`)
    // The next day 02:00 EDT is 06:00Z.
    expect(d.wakeAt).toBe(at("2026-03-09T06:00:00Z"))
  })

  it("fall back: a fixed 01:30 run starts once, at the first 01:30 (EDT); an interval runs in both hours", () => {
    const fixed = cronJob(
      { schedule: "30 1 * * *", timeZone: "America/New_York" },
      {
        status: { lastScheduleTime: "2026-11-01T05:30:00Z" }
      }
    )
    // 01:30 EDT = 05:30Z already ran; 01:30 EST (06:30Z) is not another run: next is the 2nd, 01:30 EST.
    expect(decideAdvancedCronJob(fixed, [], at("2026-11-01T06:45:00Z")).create).toBeUndefined()
    expect(decideAdvancedCronJob(fixed, [], at("2026-11-01T06:45:00Z")).wakeAt).toBe(at("2026-11-02T06:30:00Z"))
    const interval = cronJob(
      { schedule: "*/30 1 * * *", timeZone: "America/New_York" },
      {
        status: { lastScheduleTime: "2026-11-01T05:30:00Z" }
      }
    )
    expect(createdName(decideAdvancedCronJob(interval, [], at("2026-11-01T06:00:10Z")))).toBe(`warm-${unix("2026-11-01T06:00:00Z")}`)
  })

  it("CRON_TZ= and TZ= in the schedule, as upstream reads them; no zone is UTC", () => {
    const now = at("2026-12-01T08:00:30Z")
    const created = "2026-12-01T07:30:00Z"
    // 09:00 in Berlin (CET, UTC+1) is 08:00Z.
    const berlin = decideAdvancedCronJob(cronJob({ schedule: "CRON_TZ=Europe/Berlin 0 9 * * *" }, { created }), [], now)
    expect(createdName(berlin)).toBe(`warm-${unix("2026-12-01T08:00:00Z")}`)
    const tz = decideAdvancedCronJob(cronJob({ schedule: "TZ=Europe/Berlin 0 9 * * *" }, { created }), [], now)
    expect(createdName(tz)).toBe(`warm-${unix("2026-12-01T08:00:00Z")}`)
    const utc = decideAdvancedCronJob(cronJob({ schedule: "0 9 * * *" }, { created }), [], now)
    expect(utc.create).toBeUndefined()
    expect(utc.wakeAt).toBe(at("2026-12-01T09:00:00Z"))
  })

  it("@every counts from the last run, as robfig's ConstantDelaySchedule", () => {
    const cron = cronJob({ schedule: "@every 90s" }, { status: { lastScheduleTime: "2026-12-01T12:00:00Z" } })
    expect(createdName(decideAdvancedCronJob(cron, [], at("2026-12-01T12:01:31Z")))).toBe(`warm-${unix("2026-12-01T12:01:30Z")}`)
  })
})

describe("decideAdvancedCronJob: templates preheat does not run", () => {
  it.each([
    ["Job", { jobTemplate: { spec: { template: { spec: { containers: [{ name: "c", image: "busybox" }] } } } } }, "jobTemplate"],
    ["BroadcastJob", { broadcastJobTemplate: { spec: { template: { spec: {} } } } }, "broadcastJobTemplate"]
  ])("%s: status.type, Supported=False with a Warning once, and never a job", (kind, other, field) => {
    const r = decodeAdvancedCronJob({
      metadata: { name: "other", namespace: "ns", uid: "u", creationTimestamp: "2026-12-01T00:00:00Z" },
      spec: { schedule: "* * * * *", template: other }
    })
    if (Result.isFailure(r)) throw new Error(r.failure.message)
    const d = decideAdvancedCronJob(r.success, [], at("2026-12-01T12:00:00Z"))
    expect(d.create).toBeUndefined()
    expect(d.wakeAt).toBeUndefined()
    expect(d.status.type).toBe(kind)
    const supported = d.status.conditions?.find((c) => c.type === "Supported")
    expect(supported).toMatchObject({ status: "False", reason: "TemplateNotSupported" })
    expect(supported?.message).toContain(field)
    expect(d.events).toEqual([{ type: "Warning", reason: "TemplateNotSupported", message: supported?.message }])
    const again = decideAdvancedCronJob({ ...r.success, status: d.status }, [], at("2026-12-01T12:01:00Z"))
    expect(again.events).toEqual([])
    expect(again.status).toEqual(d.status)
  })
})
