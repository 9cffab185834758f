// The jobs' task writes to NodeImages, shared: the tasks every job hands a NodeImage within a short
// window go out in one write, one write per NodeImage at a time (issue 40).
import { Deferred, Duration, Effect, Exit } from "effect"
import type { Scope } from "effect"
import type { Invalid } from "../../kube/errors.ts"
import { KubeApi } from "../../kube/KubeApi.ts"
import type { WriteError } from "../../kube/KubeApi.ts"
import { resources } from "../../kube/resources.ts"
import { patchNodeImage } from "../writes.ts"
import type { WrittenTo } from "../writes.ts"
import { batchTaskChanges } from "./taskBatch.ts"
import type { TaskChanges } from "./taskBatch.ts"

/** What became of one job's changes to one NodeImage. */
export type TaskWriteOutcome =
  | { readonly _tag: "Written" }
  /** Not written: decide again on the newer version the store has, after this long. */
  | { readonly _tag: "DecideAgain"; readonly after: Duration.Duration }
  /** The API server refused the change (422): it cannot succeed as it is. */
  | { readonly _tag: "Refused"; readonly error: Invalid }

export interface TaskWriter {
  /**
   * Hands one job's changes, per NodeImage, to that NodeImage's next write, and answers per
   * NodeImage once the write that carried them (or found them stale) is answered. A write that
   * failed otherwise fails the answer of every job whose changes it carried.
   */
  readonly write: (
    changes: ReadonlyMap<string, TaskChanges>
  ) => Effect.Effect<ReadonlyMap<string, Exit.Exit<TaskWriteOutcome, WriteError>>, never, KubeApi>
}

interface Part {
  readonly tasks: TaskChanges
  readonly answer: Deferred.Deferred<TaskWriteOutcome, WriteError>
}

const written: TaskWriteOutcome = { _tag: "Written" }
const decideNow: TaskWriteOutcome = { _tag: "DecideAgain", after: Duration.zero }
/** When a job looks again after a conflict the NodeImage's current version does not explain. */
const conflictFallback: TaskWriteOutcome = { _tag: "DecideAgain", after: Duration.seconds(1) }

const answer = (parts: Iterable<Part>, exit: Exit.Exit<TaskWriteOutcome, WriteError>) => {
  for (const part of parts) Deferred.doneUnsafe(part.answer, exit)
}

/**
 * The writer of the jobs' tasks (one per controller). A NodeImage's first change opens a window of
 * `batchWindow`; what every job hands that NodeImage until then goes out in one write
 * (taskBatch.ts: in the order handed in, each part that still applies), and what comes while a
 * write is on its way goes in the next, sent as soon as it is answered. Jobs that want a node at
 * the same time (started together, reading the same outcomes) so give it their tasks in one
 * write instead of one each; and one write at a time per NodeImage means the jobs' writes never
 * conflict with each other (each tests the generation the one before it made).
 *
 * A write the API server refuses (422) is sent again part by part, so that only the job whose
 * change breaks the rules hears of it. A conflict (another writer changed the spec, or the answer
 * to an earlier write of ours was lost) brings the NodeImage's current version into the store, with
 * one GET if the store does not have it yet, rather than waiting for the watch (retried once a
 * second while it did not come); the jobs then decide again on it.
 */
export const makeTaskWriter = Effect.fnUntraced(function* (
  nodeImages: WrittenTo,
  batchWindow: Duration.Input
): Effect.fn.Return<TaskWriter, never, Scope.Scope> {
  const scope = yield* Effect.scope
  const windowMillis = Duration.toMillis(Duration.fromInputUnsafe(batchWindow))
  /** The parts handed in for each NodeImage's next write. */
  const waiting = new Map<string, Array<Part>>()
  /** NodeImages with a writer: in its window, or writing. */
  const writers = new Set<string>()

  /** After a conflict: decide again on the newer version, fetched if the store does not have it. */
  const afterConflict = (node: string, current: { readonly metadata: { readonly generation?: number } }) =>
    Effect.gen(function* () {
      const stored = nodeImages.get(node)
      if (stored !== undefined && stored.metadata.generation !== current.metadata.generation) return decideNow
      const fresh = yield* (yield* KubeApi).get(resources.nodeImage, { name: node })
      yield* nodeImages.written(fresh)
      return fresh.metadata.generation === current.metadata.generation ? conflictFallback : decideNow
    })

  const writeBatch = (node: string, batch: ReadonlyArray<Part>): Effect.Effect<void, never, KubeApi> =>
    Effect.gen(function* () {
      const current = nodeImages.get(node)
      const { changes, taken, stale } = batchTaskChanges(
        current,
        batch.map((part) => part.tasks)
      )
      answer(
        stale.map((i) => batch[i]!),
        Exit.succeed(decideNow)
      )
      const carried = taken.map((i) => batch[i]!)
      if (carried.length === 0 || current === undefined) return
      const result = yield* Effect.exit(patchNodeImage(nodeImages, current, changes))
      if (Exit.isSuccess(result)) return answer(carried, Exit.succeed(written))
      const error = result.cause.reasons.find((reason) => reason._tag === "Fail")?.error
      if (error?._tag === "Conflict") return answer(carried, yield* Effect.exit(afterConflict(node, current)))
      if (error?._tag !== "Invalid") return answer(carried, Exit.failCause(result.cause))
      if (carried.length === 1) return answer(carried, Exit.succeed({ _tag: "Refused", error }))
      for (const part of carried) yield* writeBatch(node, [part])
    })

  /** The writer of one NodeImage: its window, then a write for as long as parts wait. */
  const writer = (node: string) => {
    let inFlight: ReadonlyArray<Part> = []
    return Effect.gen(function* () {
      yield* windowMillis > 0 ? Effect.sleep(windowMillis) : Effect.yieldNow
      for (;;) {
        const batch = waiting.get(node)
        if (batch === undefined) return writers.delete(node)
        waiting.delete(node)
        inFlight = batch
        const exit = yield* Effect.exit(writeBatch(node, batch))
        // A defect: every part not answered yet hears of it (an answered one keeps its answer).
        if (Exit.isFailure(exit)) answer(batch, Exit.failCause(exit.cause))
      }
    }).pipe(
      Effect.onExit((exit) =>
        Exit.isSuccess(exit)
          ? Effect.void
          : Effect.sync(() => {
              // Stopped (the controller's scope closed): no part waits for an answer that cannot come.
              writers.delete(node)
              const left = waiting.get(node) ?? []
              waiting.delete(node)
              answer([...inFlight, ...left], Exit.failCause(exit.cause))
            })
      )
    )
  }

  return {
    write: (changes) =>
      Effect.gen(function* () {
        const answers = new Map<string, Deferred.Deferred<TaskWriteOutcome, WriteError>>()
        for (const [node, tasks] of changes) {
          const part: Part = { tasks, answer: Deferred.makeUnsafe() }
          answers.set(node, part.answer)
          const parts = waiting.get(node)
          if (parts === undefined) waiting.set(node, [part])
          else parts.push(part)
          if (!writers.has(node)) {
            writers.add(node)
            yield* Effect.forkIn(writer(node), scope)
          }
        }
        const outcomes = new Map<string, Exit.Exit<TaskWriteOutcome, WriteError>>()
        for (const [node, done] of answers) outcomes.set(node, yield* Effect.exit(Deferred.await(done)))
        return outcomes
      })
  }
})
