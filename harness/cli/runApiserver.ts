import { Console, Effect, FileSystem, Option } from "effect"
import { SchedulerLive } from "../../layers/scheduler.ts"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import { startEmbeddedApiServer } from "../apiserver/embeddedApiServer.ts"
import { kubeconfigFor } from "../apiserver/http/kubeconfig.ts"
import { startWorkloads } from "../cluster/workloadStandIns/workloads.ts"
import type { ApiserverFlags } from "./apiserverCommand.ts"

/** `preheat apiserver`: the embedded API server, until SIGINT or SIGTERM. */
export const runApiserver = (flags: ApiserverFlags) =>
  Effect.gen(function* () {
    const token = Option.getOrUndefined(flags.token)
    const server = yield* startEmbeddedApiServer({
      host: flags.host,
      port: flags.port,
      ...(token === undefined ? {} : { token }),
      decoderAdmission: flags.webhookValidation
    })
    if (flags.workloads) {
      // Beside the server on its own store, as kube-controller-manager and kube-scheduler run beside
      // kube-apiserver. The nodes' runtimes live in other processes (their daemons'), so no kubelet
      // here knows one: a pod is bound to its node and stays Pending there (kubelet.ts).
      yield* startWorkloads(new Map()).pipe(Effect.provideService(KubeApi, server.api), Effect.provide(SchedulerLive.layer()))
    }
    if (Option.isSome(flags.kubeconfigOut)) {
      const fs = yield* FileSystem.FileSystem
      const config = kubeconfigFor({ url: server.url, ...(token === undefined ? {} : { token }) })
      yield* fs.writeFileString(flags.kubeconfigOut.value, config, { mode: 0o600 })
      yield* Console.error(`wrote ${flags.kubeconfigOut.value}`)
    }
    yield* Console.log(`preheat apiserver listening on ${server.url}`)
    // Until SIGINT or SIGTERM interrupts it; the scope then closes the server.
    return yield* Effect.never
  }).pipe(Effect.scoped)
