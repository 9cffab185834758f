// The live KubeApi's request outcomes, told to ApiAccess in the kubeconfig's terms: a 401 names the
// server and the user whose credentials it refused, a 403 the RBAC rule to grant, a failed TLS
// handshake the field to fix. Any answer from the server ends the connection problem; any answer
// but 401 the credentials problem; an answer to a request ends that request's RBAC problem.
import type { KubeConfig } from "@kubernetes/client-node"
import { Clock, Duration, Effect, Option, Stream } from "effect"
import type { AccessOutcome } from "../../../src/kube/accessProblems.ts"
import type { ApiAccess } from "../../../src/kube/ApiAccess.ts"
import { type ConnectionProblem, type KubeError, Unavailable } from "../../../src/kube/errors.ts"
import { KubeApi, type Subresource } from "../../../src/kube/KubeApi.ts"
import type { Resource } from "../../../src/kube/resources.ts"
import { describeRule, rbacRuleOf, type Verb } from "./statusErrors.ts"
import { type PeerCertificate, peerCertificateOf } from "./peerCertificate.ts"
import { explainTls, type KubeconfigOrigin, withPeerCertificate } from "./tlsErrors.ts"

/** The cluster and user a KubeConfig's current context uses, as messages may name them. */
export const originOf = (config: KubeConfig, from: string): KubeconfigOrigin => {
  const cluster = config.getCurrentCluster()
  const user = config.getCurrentUser()
  return {
    from,
    server: cluster?.server ?? "",
    cluster: cluster?.name ?? "",
    user: user?.name ?? "",
    caFile: cluster?.caFile,
    hasCaData: (cluster?.caData ?? "") !== "",
    tlsServerName: cluster?.tlsServerName,
    certFile: user?.certFile,
    hasCertData: (user?.certData ?? "") !== ""
  }
}

interface Request {
  readonly verb: Verb
  readonly resource: Resource
  readonly namespace?: string | undefined
  readonly subresource?: Subresource | undefined
}

const connection = "connection"
const credentials = "credentials"

const ruleKey = (request: Request): string =>
  describeRule(
    rbacRuleOf({
      verb: request.verb,
      resource: request.resource,
      name: "",
      namespace: request.namespace,
      subresource: request.subresource === "status" ? "status" : undefined
    })
  )

const requestName = (request: Request): string =>
  `${request.verb} ${request.resource.kind}${request.subresource === "status" ? "/status" : ""}`

/**
 * A server that requires client certificates and gets one it does not trust may just close the
 * connection after the handshake, with no alert (node:https does): a closed connection is then
 * worth a look at the certificate, when there is one to look at.
 */
const closedEarly: ReadonlySet<string> = new Set(["ECONNRESET", "EPIPE"])

const unreachable = (problem: Extract<ConnectionProblem, { readonly _tag: "Unreachable" }>, origin: KubeconfigOrigin): string =>
  `cannot reach ${origin.server}: ${problem.reason}` +
  (closedEarly.has(problem.code) && (origin.certFile !== undefined || origin.hasCertData)
    ? `; if this lasts, the server may be refusing the client certificate: check users[].user.client-certificate or ` +
      `client-certificate-data and client-key or client-key-data of user "${origin.user}" in ${origin.from}`
    : "")

/** What a request's outcome (undefined: it succeeded) says about access; undefined when nothing. */
const accessOutcomeOf = (request: Request, error: KubeError | undefined, origin: KubeconfigOrigin): AccessOutcome | undefined => {
  if (error === undefined) return { fine: [connection, credentials, ruleKey(request)] }
  switch (error._tag) {
    case "Unauthorized": {
      const said = error.reason === "" || error.reason === "Unauthorized" ? "" : `: ${error.reason}`
      return {
        problem: {
          key: credentials,
          cause: "401",
          message: `401 Unauthorized from ${origin.server}: the credentials of user "${origin.user}" in ${origin.from} were not accepted${said}`,
          request: requestName(request)
        },
        fine: [connection]
      }
    }
    case "Forbidden":
      return {
        problem: { key: ruleKey(request), cause: "403", message: error.message, request: requestName(request) },
        fine: [connection, credentials]
      }
    case "Unavailable": {
      const problem = error.connection
      if (problem === undefined) return undefined
      // No credential, no request: the plugin's failure is the credentials' problem, said once.
      if (problem._tag === "NoCredential") {
        return { problem: { key: credentials, cause: "plugin", message: problem.reason, request: requestName(request) }, fine: [] }
      }
      return {
        problem: {
          key: connection,
          cause: problem._tag === "Tls" ? `tls ${problem.problem}` : "unreachable",
          message: problem._tag === "Tls" ? explainTls(problem, origin) : unreachable(problem, origin),
          request: requestName(request)
        },
        fine: []
      }
    }
    default:
      // NotFound, Conflict, Invalid...: the server answered, and allowed the request.
      return { fine: [connection, credentials, ruleKey(request)] }
  }
}

/** The server's certificate is read again at most this often while its handshakes keep failing. */
const certificateReadEvery = Duration.minutes(1)

/**
 * `inner`, each outcome told to `access`. A request that went fine while all is well costs one
 * check. A handshake that failed on the server's certificate has the certificate read (never
 * trusted) to say which fault it is: Deno gives an expired one an unknown CA's code.
 */
export const reportAccess = (inner: KubeApi["Service"], access: ApiAccess["Service"], origin: KubeconfigOrigin): KubeApi["Service"] => {
  let lastRead: { readonly at: number; readonly certificate: Option.Option<PeerCertificate> } | undefined
  const certificate: Effect.Effect<Option.Option<PeerCertificate>> = Effect.flatMap(Clock.currentTimeMillis, (now) =>
    lastRead !== undefined && now - lastRead.at < Duration.toMillis(certificateReadEvery)
      ? Effect.succeed(lastRead.certificate)
      : Effect.map(peerCertificateOf(origin.server, origin.tlsServerName), (read) => {
          lastRead = { at: now, certificate: read }
          return read
        })
  )
  /** The error as the server's certificate tells it, when the runtime's code could mean more than one fault. */
  const told = (error: KubeError): Effect.Effect<KubeError> => {
    const tls = error._tag === "Unavailable" && error.connection?._tag === "Tls" ? error.connection : undefined
    if (tls === undefined || (tls.problem !== "UnknownCa" && tls.problem !== "CertificateExpired")) return Effect.succeed(error)
    return Effect.gen(function* () {
      const read = yield* certificate
      const now = yield* Clock.currentTimeMillis
      return Option.isNone(read)
        ? error
        : new Unavailable({ message: error.message, connection: withPeerCertificate(tls, read.value, now) })
    })
  }
  const tell = (request: Request, error: KubeError | undefined): Effect.Effect<void> => {
    if (error === undefined) {
      return access.quiet() ? Effect.void : access.report(accessOutcomeOf(request, undefined, origin) ?? { fine: [] })
    }
    return Effect.flatMap(told(error), (error) => {
      const outcome = accessOutcomeOf(request, error, origin)
      return outcome === undefined ? Effect.void : access.report(outcome)
    })
  }
  const reported =
    (request: Request) =>
    <A, E extends KubeError, R>(call: Effect.Effect<A, E, R>) =>
      call.pipe(
        Effect.tap(() => tell(request, undefined)),
        Effect.tapError((error) => tell(request, error))
      )

  return KubeApi.of({
    get: (resource, key) => inner.get(resource, key).pipe(reported({ verb: "get", resource, namespace: key.namespace })),
    list: (resource, options) => inner.list(resource, options).pipe(reported({ verb: "list", resource, namespace: options?.namespace })),
    watch: (resource, options) => {
      const request: Request = { verb: "watch", resource, namespace: options.namespace }
      return inner.watch(resource, options).pipe(
        Stream.tap(() => tell(request, undefined)),
        Stream.tapError((error) => tell(request, error))
      )
    },
    create: (resource, object) =>
      inner.create(resource, object).pipe(reported({ verb: "create", resource, namespace: object.metadata.namespace })),
    update: (resource, object, subresource) =>
      inner
        .update(resource, object, subresource)
        .pipe(reported({ verb: "update", resource, namespace: object.metadata.namespace, subresource })),
    patch: (resource, key, patch, subresource) =>
      inner.patch(resource, key, patch, subresource).pipe(reported({ verb: "patch", resource, namespace: key.namespace, subresource })),
    delete: (resource, key, preconditions) =>
      inner.delete(resource, key, preconditions).pipe(reported({ verb: "delete", resource, namespace: key.namespace }))
  })
}
