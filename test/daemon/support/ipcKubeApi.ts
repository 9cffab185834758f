/**
 * The KubeApi of a parent process, used by a child process over Node's IPC channel: the daemon runs
 * as a real process (that tests can SIGKILL, and whose memory benchmarks can measure) against the
 * parent's in-memory API server. Typed errors cross as their tag and fields and come back as the
 * same classes, so the daemon sees exactly what it would see in process.
 */
import type { ChildProcess } from "node:child_process"
import { Cause, Effect, Exit, Fiber, Queue, Stream } from "effect"
import {
  AlreadyExists,
  Conflict,
  Forbidden,
  Gone,
  Invalid,
  type KubeError,
  NotFound,
  Unauthorized,
  Unavailable
} from "../../../src/kube/errors.ts"
import { KubeApi, type WatchEvent } from "../../../src/kube/KubeApi.ts"

type Verb = "get" | "list" | "create" | "update" | "patch" | "delete"

/** Child to parent. `note` carries anything else the child wants the parent to know. */
export type ChildMessage =
  | { readonly kind: "call"; readonly id: number; readonly verb: Verb; readonly args: ReadonlyArray<unknown> }
  | { readonly kind: "watch"; readonly id: number; readonly args: ReadonlyArray<unknown> }
  | { readonly kind: "unwatch"; readonly id: number }
  | { readonly kind: "note"; readonly note: Record<string, unknown> }

/** Parent to child. */
export type ParentMessage =
  | { readonly kind: "result"; readonly id: number; readonly ok: true; readonly value: unknown }
  | { readonly kind: "result"; readonly id: number; readonly ok: false; readonly error: Record<string, unknown> }
  | { readonly kind: "event"; readonly id: number; readonly event: WatchEvent }
  | { readonly kind: "end"; readonly id: number; readonly error?: Record<string, unknown> }

const errorClasses = { NotFound, AlreadyExists, Conflict, Gone, Invalid, Forbidden, Unauthorized, Unavailable } as const

const encodeError = (error: unknown): Record<string, unknown> =>
  typeof error === "object" && error !== null && "_tag" in error
    ? { ...(error as Record<string, unknown>) }
    : { _tag: "Unavailable", message: `parent failed: ${String(error)}` }

const decodeError = (fields: Record<string, unknown>): KubeError => {
  const { _tag, ...rest } = fields
  const ErrorClass = errorClasses[_tag as keyof typeof errorClasses]
  return ErrorClass === undefined
    ? new Unavailable({ message: `unknown error from parent: ${String(_tag)}` })
    : new (ErrorClass as new (args: Record<string, unknown>) => KubeError)(rest)
}

// ---- parent side --------------------------------------------------------------------------------

/**
 * Answers the child's KubeApi calls with `api` until the child exits; `onNote` gets its notes.
 * Returns a function that stops serving (and ends the child's open watches).
 */
export const serveKubeApi = (
  child: ChildProcess,
  api: KubeApi["Service"],
  onNote: (note: Record<string, unknown>) => void = () => {}
): (() => void) => {
  const watches = new Map<number, Fiber.Fiber<unknown, unknown>>()
  const send = (message: ParentMessage) => {
    // A callback keeps a send to a child that just died from throwing.
    if (child.connected) child.send(message, () => undefined)
  }
  const onMessage = (raw: unknown) => {
    const message = raw as ChildMessage
    switch (message.kind) {
      case "note":
        onNote(message.note)
        return
      case "call": {
        const method = api[message.verb] as (...args: ReadonlyArray<unknown>) => Effect.Effect<unknown, unknown>
        void Effect.runPromiseExit(method(...message.args)).then((exit) => {
          if (Exit.isSuccess(exit)) send({ kind: "result", id: message.id, ok: true, value: exit.value })
          else send({ kind: "result", id: message.id, ok: false, error: encodeError(Cause.squash(exit.cause)) })
        })
        return
      }
      case "watch": {
        const [resource, options] = message.args as Parameters<KubeApi["Service"]["watch"]>
        const fiber = Effect.runFork(
          api.watch(resource, options).pipe(
            Stream.runForEach((event) => Effect.sync(() => send({ kind: "event", id: message.id, event }))),
            Effect.exit,
            Effect.flatMap((exit) =>
              Effect.sync(() => {
                watches.delete(message.id)
                if (Exit.isSuccess(exit)) send({ kind: "end", id: message.id })
                else if (!Cause.hasInterruptsOnly(exit.cause)) {
                  send({ kind: "end", id: message.id, error: encodeError(Cause.squash(exit.cause)) })
                }
              })
            )
          )
        )
        watches.set(message.id, fiber)
        return
      }
      case "unwatch": {
        const fiber = watches.get(message.id)
        watches.delete(message.id)
        if (fiber !== undefined) Effect.runFork(Fiber.interrupt(fiber))
      }
    }
  }
  const stop = () => {
    child.off("message", onMessage)
    for (const fiber of watches.values()) Effect.runFork(Fiber.interrupt(fiber))
    watches.clear()
  }
  child.on("message", onMessage)
  child.once("exit", stop)
  return stop
}

// ---- child side ---------------------------------------------------------------------------------

/** The parent's KubeApi, for a process started with an IPC channel. */
export const ipcKubeApi = (): KubeApi["Service"] => {
  const send = process.send?.bind(process)
  if (send === undefined) throw new Error("ipcKubeApi needs a process started with an IPC channel")
  let nextId = 0
  const results = new Map<number, (message: Extract<ParentMessage, { kind: "result" }>) => void>()
  const streams = new Map<number, Queue.Queue<WatchEvent, KubeError | Cause.Done>>()

  process.on("message", (raw: unknown) => {
    const message = raw as ParentMessage
    switch (message.kind) {
      case "result": {
        const resume = results.get(message.id)
        results.delete(message.id)
        resume?.(message)
        return
      }
      case "event": {
        const queue = streams.get(message.id)
        if (queue !== undefined) Queue.offerUnsafe(queue, message.event)
        return
      }
      case "end": {
        const queue = streams.get(message.id)
        streams.delete(message.id)
        if (queue === undefined) return
        if (message.error === undefined) Queue.endUnsafe(queue)
        else Queue.failCauseUnsafe(queue, Cause.fail(decodeError(message.error)))
      }
    }
  })

  const call = <A, E>(verb: Verb, args: ReadonlyArray<unknown>): Effect.Effect<A, E> =>
    Effect.callback<A, E>((resume) => {
      const id = nextId++
      results.set(id, (message) => resume(message.ok ? Effect.succeed(message.value as A) : Effect.fail(decodeError(message.error) as E)))
      send({ kind: "call", id, verb, args } satisfies ChildMessage)
      return Effect.sync(() => void results.delete(id))
    })

  return KubeApi.of({
    get: (...args) => call("get", args),
    list: (...args) => call("list", args),
    create: (...args) => call("create", args),
    update: (...args) => call("update", args),
    patch: (...args) => call("patch", args),
    delete: (...args) => call("delete", args),
    watch: (...args) =>
      Stream.callback<WatchEvent, KubeError>((queue) =>
        Effect.acquireRelease(
          Effect.sync(() => {
            const id = nextId++
            streams.set(id, queue as Queue.Queue<WatchEvent, KubeError | Cause.Done>)
            send({ kind: "watch", id, args } satisfies ChildMessage)
            return id
          }),
          (id) =>
            Effect.sync(() => {
              if (streams.delete(id)) send({ kind: "unwatch", id } satisfies ChildMessage)
            })
        )
      ) as ReturnType<KubeApi["Service"]["watch"]>
  })
}

/** Tells the parent something (a pull started, the daemon is ready...). */
export const notifyParent = (note: Record<string, unknown>): void => {
  process.send?.({ kind: "note", note } satisfies ChildMessage)
}
