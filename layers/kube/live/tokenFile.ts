// A bearer token read from a file, as client-go's cached file token source reads one
// (transport/token_source.go): at the first request, then again once the token read is a minute
// old, so a token the file's owner rotates (the kubelet's projected service account token, a
// kubeconfig's `tokenFile`) is used within a minute. Where client-go keeps the token read before
// when a later read fails, so does this, saying so once (client-go logs every request meanwhile).
// The one reader of token files: client-node's own (its in-cluster user's) is left out of the config.
import { readFileSync } from "node:fs"
import type { KubeConfig, User } from "@kubernetes/client-node"
import { Data, Duration, Effect } from "effect"

/** No token could be read from the file yet: requests cannot be authenticated. */
export class TokenFileError extends Data.TaggedError("TokenFileError")<{ readonly message: string }> {}

/** How long a token read is used before the file is read again (client-go's period). */
const tokenFilePeriod = Duration.minutes(1)

export interface TokenFile {
  /** The token to send now. Throws TokenFileError only while no read of the file has worked. */
  readonly token: () => string
}

/** The file's token, trimmed as client-go trims it, or why there is none (naming the file, never its content). */
const readToken = (path: string): string | TokenFileError => {
  let text: string
  try {
    text = readFileSync(path, "utf8")
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    return new TokenFileError({ message: `cannot read the token file ${path}: ${reason}` })
  }
  const token = text.trim()
  return token === "" ? new TokenFileError({ message: `the token file ${path} is empty` }) : token
}

/** Reads `path`, timed on the Effect clock of the caller (TestClock in tests). */
export const makeTokenFile = (path: string): Effect.Effect<TokenFile> =>
  Effect.gen(function* () {
    const log = Effect.runSyncWith(yield* Effect.context<never>())
    const clock = yield* Effect.clockWith(Effect.succeed)
    const periodMillis = Duration.toMillis(tokenFilePeriod)
    let held: { readonly token: string; readonly readAt: number } | undefined
    let failing = false
    return {
      token: () => {
        const now = clock.currentTimeMillisUnsafe()
        if (held !== undefined && now - held.readAt < periodMillis) return held.token
        const read = readToken(path)
        if (typeof read === "string") {
          if (failing) log(Effect.logInfo("token file read again").pipe(Effect.annotateLogs({ path })))
          failing = false
          held = { token: read, readAt: now }
          return read
        }
        if (held === undefined) throw read
        if (!failing) {
          log(
            Effect.logWarning("token file unreadable: the token read before is used until a read works").pipe(
              Effect.annotateLogs({ path, error: read.message })
            )
          )
        }
        failing = true
        // Tried again a period later, not on every request.
        held = { token: held.token, readAt: now }
        return held.token
      }
    }
  })

/**
 * `config` without client-node's own token file reader: its in-cluster user names the service
 * account's token as a `tokenFile` auth provider, which client-node reads every minute and fails
 * the request when a read fails. The transport reads it here instead.
 */
export const withoutTokenFileProvider = (config: KubeConfig): KubeConfig => {
  const user = config.getCurrentUser()
  if (user === null || user.authProvider?.name !== "tokenFile") return config
  const { authProvider: _, ...rest } = user
  const replaced: User = rest
  const derived: KubeConfig = Object.create(config)
  derived.getCurrentUser = () => replaced
  return derived
}
