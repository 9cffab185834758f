/**
 * Issue 39 part 4 through kubectl on `preheat dev`, run by the shipped executable: the simulated
 * registry stops sending an image from a `stalled.*` host halfway through its first pull on each
 * node; with `--pull-progress-timeout 3s` the attempt fails with PullStalled, the tag's message says
 * how far it came, and the retry pulls the image.
 */
import { describe, expect, it } from "vitest"
import { eventually } from "../support/eventually.ts"
import { withDev } from "./devProcess.ts"

const stalledImage = "stalled.example/app"

const stalledJob = `apiVersion: apps.kruise.io/v1alpha1
kind: ImagePullJob
metadata:
  name: stalled
  namespace: default
spec:
  image: ${stalledImage}:1
  parallelism: 1
  selector:
    names: [node-1]
  pullPolicy:
    backoffLimit: 1
  completionPolicy:
    type: Always
`

describe("preheat dev: a registry that stalls", () => {
  it("the stalled attempt fails with the bytes reached after --pull-progress-timeout, and the retry succeeds", async () => {
    await withDev({ nodes: 1, prefix: "preheat-dev-stall-", flags: ["--pull-progress-timeout", "3s"] }, async (dev) => {
      const { kubectl } = dev
      await dev.apply("stalled", stalledJob)
      const seen = new Set<string>()
      await eventually(
        "the stalled job to succeed",
        async () => {
          const statuses: Record<string, { tags?: ReadonlyArray<{ message?: string }> }> = JSON.parse(
            (await kubectl(["get", "nodeimage", "node-1", "-o", "jsonpath={.status.imageStatuses}"])) || "{}"
          )
          const message = statuses[stalledImage]?.tags?.[0]?.message ?? ""
          if (message !== "") seen.add(message)
          const succeeded = await kubectl(["get", "ipj", "stalled", "-n", "default", "-o", "jsonpath={.status.succeeded}"])
          return succeeded === "1" ? true : undefined
        },
        120_000,
        200
      )
      // Said while the retry waits, and on as the second attempt's note.
      expect([...seen].find((m) => m.includes("pull stalled"))).toMatch(
        /^attempt (1 of 2 failed|2 of 2; last error): pull stalled: no bytes received for 3s, at [\d.]+Mi of [\d.]+Mi \(--pull-progress-timeout\)/
      )
    })
  }, 300_000)
})
