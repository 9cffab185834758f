// StrategicPatch over the same transport as KubeLive: the kubeconfig's credentials,
// retries of what may be retried, a request timeout.
import { Duration, Effect, Layer } from "effect"
import type { KubeConfig } from "@kubernetes/client-node"
import { KubeConfigError } from "./kubeConfig.ts"
import { asKubeObject } from "./objects.ts"
import { objectPath } from "./paths.ts"
import { makeRateLimiter } from "./rateLimiter.ts"
import { kubeErrorOf, narrowTo, unavailableOf } from "./statusErrors.ts"
import { makeTransport } from "./transport.ts"
import { StrategicPatch } from "../../../src/kube/StrategicPatch.ts"

const asWriteError = narrowTo(["NotFound", "Conflict", "Invalid", "Forbidden"])

export const StrategicPatchLive = {
  layer: (config: KubeConfig, userAgent: string): Layer.Layer<StrategicPatch, KubeConfigError> =>
    Layer.effect(
      StrategicPatch,
      Effect.gen(function* () {
        const transport = yield* makeTransport(config, {
          userAgent,
          limiter: makeRateLimiter({ qps: 5, burst: 10 }),
          requestTimeout: Duration.seconds(60)
        }).pipe(Effect.mapError((error) => new KubeConfigError({ message: `cannot use the kubeconfig: ${error.message}` })))
        return StrategicPatch.of({
          patch: (resource, key, body) => {
            const target = { verb: "patch" as const, resource, name: key.name, namespace: key.namespace }
            const request = {
              method: "PATCH" as const,
              path: objectPath(resource, key.namespace, key.name),
              query: { fieldManager: "preheat-rollout" },
              body,
              contentType: "application/strategic-merge-patch+json"
            }
            return Effect.flatMap(transport.send(request, target), (answer) => {
              if (answer.status < 200 || answer.status >= 300) {
                return Effect.fail(asWriteError(kubeErrorOf(answer.status, answer.body, target), target))
              }
              const object = asKubeObject(answer.body)
              return object === undefined
                ? Effect.fail(unavailableOf(target, `HTTP ${answer.status} without an object`))
                : Effect.succeed(object)
            })
          }
        })
      })
    )
}
