/**
 * A PluginRunner for unit tests: each plugin name has a behaviour (an answer, a failure, an
 * answer after some Clock time, or none ever), and every run is recorded with its request. The
 * live runner (real processes) is tested on its own in test/layers/cri/live/credentialProviderPlugins.test.ts.
 */
import { Effect, Layer } from "effect"
import { type PluginRun, PluginRunFailed, PluginRunner } from "../../src/cri/credentialProvider/PluginRunner.ts"

export type PluginBehaviour =
  | { readonly _tag: "Answer"; readonly stdout: (request: { readonly image: string }) => string; readonly afterMillis?: number }
  | { readonly _tag: "Fail"; readonly reason: PluginRunFailed["reason"]; readonly message: string }
  | { readonly _tag: "Hang" }

export interface RecordedRun extends PluginRun {
  readonly image: string
}

/** A CredentialProviderResponse as a plugin prints it. */
export const responseJson = (fields: {
  readonly apiVersion?: string
  readonly cacheKeyType?: string
  readonly cacheDuration?: string
  readonly auth?: Readonly<Record<string, { readonly username: string; readonly password: string }>>
}): string =>
  JSON.stringify({
    kind: "CredentialProviderResponse",
    apiVersion: fields.apiVersion ?? "credentialprovider.kubelet.k8s.io/v1",
    cacheKeyType: fields.cacheKeyType ?? "Registry",
    ...(fields.cacheDuration === undefined ? {} : { cacheDuration: fields.cacheDuration }),
    ...(fields.auth === undefined ? {} : { auth: fields.auth })
  })

export const answer = (stdout: string | ((request: { readonly image: string }) => string), afterMillis?: number): PluginBehaviour => ({
  _tag: "Answer",
  stdout: typeof stdout === "string" ? () => stdout : stdout,
  ...(afterMillis === undefined ? {} : { afterMillis })
})

export const fakePluginRunner = (behaviours: ReadonlyMap<string, PluginBehaviour>) => {
  const runs: Array<RecordedRun> = []
  const behaviour = new Map(behaviours)
  const service = PluginRunner.of({
    run: (run) =>
      Effect.suspend(() => {
        const image = (JSON.parse(run.stdin) as { readonly image: string }).image
        runs.push({ ...run, image })
        const plugin = behaviour.get(run.name)
        if (plugin === undefined)
          return Effect.fail(new PluginRunFailed({ reason: "not_found", message: "its plugin was not found in the bin directory" }))
        switch (plugin._tag) {
          case "Answer": {
            const stdout = Effect.sync(() => plugin.stdout({ image }))
            return plugin.afterMillis === undefined ? stdout : Effect.andThen(Effect.sleep(plugin.afterMillis), stdout)
          }
          case "Fail":
            return Effect.fail(new PluginRunFailed({ reason: plugin.reason, message: plugin.message }))
          case "Hang":
            return Effect.never
        }
      }),
    exists: (name) => Effect.sync(() => behaviour.has(name))
  })
  return {
    runs,
    /** Changes what a plugin does from its next run on. */
    set: (name: string, next: PluginBehaviour) => behaviour.set(name, next),
    layer: Layer.succeed(PluginRunner, service)
  }
}
