// The Scheduler service's body: in-process queues (src/workqueue/workQueue.ts), with or without
// the wait histogram.
import { Effect, Layer } from "effect"
import { Metrics } from "../src/ops/metrics.ts"
import { makeWorkQueue, type QueueObserver } from "../src/workqueue/workQueue.ts"
import { Scheduler } from "../src/workqueue/Scheduler.ts"

export const SchedulerLive = {
  /** In-process queues; pass an observer to see how long due keys wait. */
  layer: (observer: QueueObserver = {}): Layer.Layer<Scheduler> =>
    Layer.succeed(Scheduler, Scheduler.of({ queue: (name) => makeWorkQueue(name, observer) })),
  /** The same, each wait feeding the workqueue wait histogram (the controller's queues). */
  layerWithMetrics: Layer.effect(
    Scheduler,
    Effect.gen(function* () {
      const metrics = yield* Metrics
      const observer: QueueObserver = { onTaken: (queue, _key, waited) => metrics.observeWorkqueueWait(queue, waited / 1000) }
      return Scheduler.of({ queue: (name) => makeWorkQueue(name, observer) })
    })
  )
}
