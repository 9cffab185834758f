import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { simulatedNodeLayer, simulatedPullTime } from "../../../../harness/layers/simulatedRuntime/simulatedNode.ts"
import { CriRuntime, type PullProgress } from "../../../../src/cri/CriRuntime.ts"

describe("simulatedNodeLayer: the node of preheat fleet and preheat dev", () => {
  it.effect("reports a pull's progress about once a second, as the live runtime reads containerd", () =>
    Effect.gen(function* () {
      const runtime = yield* CriRuntime
      // 1.0 s, 1.5 s and 3.5 s pulls (the link's time for each made-up image's size).
      for (const [image, intermediate] of [
        ["registry.example.com/app-1:1", 0],
        ["registry.example.com/app-3:1", 0],
        ["registry.example.com/app-2:1", 2]
      ] as const) {
        const percents: Array<number> = []
        const onProgress = (p: PullProgress) => Effect.sync(() => void percents.push(p.percent))
        const fiber = yield* Effect.forkChild(runtime.pullImage({ image, timeout: Duration.minutes(5), onProgress }))
        yield* TestClock.adjust(simulatedPullTime(image))
        yield* Fiber.join(fiber)
        // 0 of unknown, 0 of the size, a step a whole second, 100.
        assert.strictEqual(percents.length, 3 + intermediate, `${image}: ${percents.join(",")}`)
        assert.deepStrictEqual([percents[0], percents[1], percents.at(-1)], [0, 0, 100])
      }
    }).pipe(Effect.provide(simulatedNodeLayer()))
  )
})
