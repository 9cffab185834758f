// `limit` and `continue` on lists. The first page takes a snapshot of the whole result (stored
// objects are immutable, so a snapshot is just an array of references) and later pages read from
// it, so a paginated list is consistent at one resourceVersion, as on a real server. Snapshots are
// kept for a while; a token whose snapshot is gone is answered 410 Expired with an inconsistent
// continuation token, as kube-apiserver does after an etcd compaction.
import { randomUUID } from "node:crypto"
import { Result } from "effect"
import type { KubeObject } from "../../../src/kube/KubeApi.ts"
import { ApiFailure, badRequest } from "../http/apiStatus.ts"

interface Snapshot {
  readonly items: ReadonlyArray<KubeObject>
  readonly resourceVersion: string
  readonly takenAt: number
}

export interface ContinueToken {
  readonly v: "meta.k8s.io/v1"
  readonly rv: string
  /** The key of the last object already returned. */
  readonly start: string
  /** The snapshot to continue from; absent in an inconsistent token. */
  readonly snapshot?: string
}

export interface Page {
  readonly items: ReadonlyArray<KubeObject>
  readonly resourceVersion: string
  readonly continue?: string
  readonly remainingItemCount?: number
}

const keyOf = (object: KubeObject): string =>
  object.metadata.namespace === undefined ? (object.metadata.name ?? "") : `${object.metadata.namespace}/${object.metadata.name ?? ""}`

const encode = (token: ContinueToken): string => Buffer.from(JSON.stringify(token)).toString("base64url")

const decode = (text: string): ContinueToken | undefined => {
  try {
    const token = JSON.parse(Buffer.from(text, "base64url").toString("utf8")) as Partial<ContinueToken>
    return token.v === "meta.k8s.io/v1" && typeof token.rv === "string" && typeof token.start === "string"
      ? { v: token.v, rv: token.rv, start: token.start, ...(typeof token.snapshot === "string" ? { snapshot: token.snapshot } : {}) }
      : undefined
  } catch {
    return undefined
  }
}

export class Pager {
  private readonly snapshots = new Map<string, Snapshot>()
  private readonly maxSnapshots: number
  private readonly ttlMillis: number

  constructor(options: { readonly maxSnapshots?: number; readonly ttlMillis?: number } = {}) {
    this.maxSnapshots = options.maxSnapshots ?? 64
    this.ttlMillis = options.ttlMillis ?? 5 * 60_000
  }

  /** Parses a continue token before the list is read: a malformed one is a bad request. */
  parse(text: string | null): Result.Result<ContinueToken | undefined, ApiFailure> {
    if (text === null || text === "") return Result.succeed(undefined)
    const token = decode(text)
    return token === undefined ? Result.fail(badRequest("continue key is not valid: illegal base64 data or JSON")) : Result.succeed(token)
  }

  /**
   * One page of `current` (the list as it is now, in key order): the first page, or the one after
   * `token` from its snapshot. Without a limit, everything.
   */
  page(
    current: { readonly items: ReadonlyArray<KubeObject>; readonly resourceVersion: string },
    limit: number | undefined,
    token: ContinueToken | undefined,
    now: number
  ): Result.Result<Page, ApiFailure> {
    this.expire(now)
    let source: Snapshot
    let start = 0
    if (token === undefined) {
      source = { items: current.items, resourceVersion: current.resourceVersion, takenAt: now }
    } else if (token.snapshot !== undefined) {
      const found = this.snapshots.get(token.snapshot)
      if (found === undefined) return Result.fail(this.expired(token))
      source = found
      start = source.items.findIndex((o) => keyOf(o) > token.start)
      if (start < 0) start = source.items.length
    } else {
      // An inconsistent continuation: what is there now, after the last key returned.
      source = { items: current.items.filter((o) => keyOf(o) > token.start), resourceVersion: current.resourceVersion, takenAt: now }
    }
    if (limit === undefined || limit <= 0 || start + limit >= source.items.length) {
      return Result.succeed({ items: source.items.slice(start), resourceVersion: source.resourceVersion })
    }
    const items = source.items.slice(start, start + limit)
    const id = token?.snapshot ?? this.keep(source)
    return Result.succeed({
      items,
      resourceVersion: source.resourceVersion,
      continue: encode({ v: "meta.k8s.io/v1", rv: source.resourceVersion, start: keyOf(items[items.length - 1]!), snapshot: id }),
      remainingItemCount: source.items.length - start - items.length
    })
  }

  private keep(snapshot: Snapshot): string {
    const id = randomUUID()
    this.snapshots.set(id, snapshot)
    while (this.snapshots.size > this.maxSnapshots) this.snapshots.delete(this.snapshots.keys().next().value!)
    return id
  }

  private expire(now: number): void {
    for (const [id, snapshot] of this.snapshots) if (now - snapshot.takenAt > this.ttlMillis) this.snapshots.delete(id)
  }

  private expired(token: ContinueToken): ApiFailure {
    const inconsistent = encode({ v: "meta.k8s.io/v1", rv: token.rv, start: token.start })
    return new ApiFailure({
      code: 410,
      reason: "Expired",
      message:
        "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.",
      continue: inconsistent
    })
  }
}
