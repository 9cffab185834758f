// A pull secret the daemon may not read: the tag's message says why in words an operator acts on
// (the RBAC rule a 403 lacks), not only the error's name.
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { InMemoryKubeApi, InMemoryKubeStore } from "../../harness/layers/inMemoryKubeApi.ts"
import { pullCredentials } from "../../src/daemon/pullCredentials.ts"
import { Forbidden } from "../../src/kube/errors.ts"
import { kubeErrorOf } from "../../layers/kube/live/statusErrors.ts"
import { resources } from "../../src/kube/resources.ts"

const namespace = "preheat-daemon-config"

describe("pull secrets the daemon may not read", () => {
  it.effect("a 403 names the RBAC rule to grant", () =>
    Effect.gen(function* () {
      const store = yield* InMemoryKubeStore
      // As the live client maps the API server's 403.
      const error = kubeErrorOf(
        403,
        { kind: "Status", code: 403, message: 'secrets "regcred" is forbidden' },
        { verb: "get", resource: resources.secret, name: "regcred", namespace }
      )
      assert.instanceOf(error, Forbidden)
      yield* store.setFault(({ verb }) => (verb === "get" && error instanceof Forbidden ? error : undefined))
      const result = yield* pullCredentials("registry.example.com/app:1", [{ namespace, name: "regcred" }], namespace, undefined)
      assert.deepStrictEqual(result, {
        credentials: [],
        problems: [
          'pull secret preheat-daemon-config/regcred could not be read: forbidden: get secrets "regcred" in namespace "preheat-daemon-config" ' +
            '(verb=get, group="", resource=secrets): grant it in deploy/rbac.yaml or your RoleBinding: secrets "regcred" is forbidden'
        ],
        providerFailed: false,
        providerAnswers: []
      })
    }).pipe(Effect.provide(InMemoryKubeApi.layerWith({})))
  )
})
