import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { NodeImage } from "../../src/api/nodeImage.ts"
import { tallyOf } from "../../src/controller/imagePullJob/decide.ts"
import type { TargetTally } from "../../src/controller/imagePullJob/decide.ts"
import type { JobTask } from "../../src/controller/imagePullJob/nodeTask.ts"
import { JobProgress } from "../../src/controller/imagePullJob/progress.ts"
import { jobUid, makeNodeImage } from "../support/fixtures.ts"

const owner = { apiVersion: "apps.kruise.io/v1alpha1", kind: "ImagePullJob", name: "job-1", namespace: "default", uid: jobUid }
const task: JobTask = { image: "nginx", tag: "1", owner, imagePullPolicy: "IfNotPresent", pullSecrets: [] }

/** What a target can be for the job: no NodeImage, no tag of the job, or its tag in some phase. */
type Standing = "missing" | "none" | "unreported" | "Pulling" | "Succeeded" | "SucceededA" | "SucceededB" | "Failed" | "otherOwner"
const standings: ReadonlyArray<Standing> = [
  "missing",
  "none",
  "unreported",
  "Pulling",
  "Succeeded",
  "SucceededA",
  "SucceededB",
  "Failed",
  "otherOwner"
]
/** The digest a succeeded node reported, if any ("Succeeded": a runtime that reports none). */
const digestOf = (standing: Standing): string | undefined =>
  standing === "SucceededA" ? `sha256:${"a".repeat(64)}` : standing === "SucceededB" ? `sha256:${"b".repeat(64)}` : undefined

const nodeImage = (name: string, standing: Standing): NodeImage | undefined => {
  if (standing === "missing") return undefined
  if (standing === "none") return makeNodeImage(name)
  const ownerReferences = [standing === "otherOwner" ? { ...owner, uid: "someone-else" } : owner]
  return makeNodeImage(name, {
    images: { nginx: { tags: [{ tag: "1", version: 0, ownerReferences, createdAt: "2026-12-02T10:00:00Z" }] } },
    ...(standing === "unreported" || standing === "otherOwner"
      ? {}
      : {
          statuses: {
            nginx: [
              {
                tag: "1",
                phase: standing.startsWith("Succeeded") ? "Succeeded" : standing,
                version: 0,
                message: `${name} failed`,
                ...(digestOf(standing) === undefined ? {} : { digest: digestOf(standing)! })
              }
            ]
          }
        })
  })
}

const summary = (tally: TargetTally) => ({
  desired: tally.desired,
  active: tally.active,
  succeeded: tally.succeeded,
  failed: tally.failed,
  digests: tally.digests.map(({ digest, nodes }) => ({ digest, nodes })),
  waiting: [0, 1, 3, 100].map((limit) => tally.waiting(limit, () => true).ready.map((n) => n.metadata.name)),
  // Every other node refused: the ones taken and the ones refused before them, the same either way.
  waitingEveryOther: [1, 3, 100].map((limit) => {
    let i = 0
    const { ready, refused } = tally.waiting(limit, () => i++ % 2 === 1)
    return [ready.map((n) => n.metadata.name), refused]
  }),
  synced: [...tally.synced()].map((n) => n.metadata.name),
  unfinished: tally.unfinished()
})

/** The standing a node's NodeImage shows now (the fixture's digest is all this test needs of it). */
const initialOrChanged = (store: ReadonlyMap<string, NodeImage | undefined>, name: string): Standing => {
  const digest = store.get(name)?.status?.imageStatuses?.["nginx"]?.tags[0]?.digest
  return digest === undefined ? "Succeeded" : digest.startsWith("sha256:a") ? "SucceededA" : "SucceededB"
}

describe("JobProgress", () => {
  it("kept up to date node by node, it tallies the targets as a walk of all of them does", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...standings), { minLength: 1, maxLength: 30 }),
        fc.array(fc.tuple(fc.nat(), fc.constantFrom(...standings), fc.boolean()), { maxLength: 60 }),
        (initial, changes) => {
          const names = initial.map((_, i) => `node-${i}`)
          const store = new Map<string, NodeImage | undefined>(names.map((name, i) => [name, nodeImage(name, initial[i]!)]))
          const lookup = (name: string) => store.get(name)
          const progress = new JobProgress("f", names, task, lookup)
          // Targets are found by name, whatever their order; another node is none of them.
          expect(names.every((name) => progress.has(name))).toBe(true)
          expect(progress.has("node-x")).toBe(false)
          progress.touched("node-x")
          for (const [at, standing, reconcile] of changes) {
            const name = names[at % names.length]!
            store.set(name, nodeImage(name, standing))
            progress.touched(name)
            if (!reconcile) continue
            progress.refresh(lookup)
            const present = names.flatMap((n) => (store.get(n) === undefined ? [] : [store.get(n)!]))
            expect(summary(progress.tally(lookup))).toEqual(summary(tallyOf(present, task)))
            expect(progress.synced).toBe([...tallyOf(present, task).synced()].length)
            // The nodes named for a digest are among those that reported it, as many as it names.
            for (const { digest, examples, nodes } of progress.tally(lookup).digests) {
              expect(examples).toHaveLength(Math.min(nodes, 3))
              for (const name of examples) expect(digestOf(initialOrChanged(store, name))).toBe(digest)
            }
          }
        }
      )
    )
  })
})
