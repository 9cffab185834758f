// What the pre-download reconciler remembers between reconciles.

export interface WorkloadBooks {
  /** What pre-download last settled for the workload (decide.ts), if it was for this uid (a re-created workload starts afresh). */
  readonly settled: (key: string, uid: string) => string | undefined
  /** Remembers what was settled for the workload; undefined forgets it (the workload went, or nothing is settled). */
  readonly settle: (key: string, settled: { readonly uid: string; readonly settled: string } | undefined) => void
  readonly size: () => number
}

/** The pre-download reconciler's books, one set per controller. */
export const makeWorkloadBooks = (): WorkloadBooks => {
  const preDownloads = new Map<string, { readonly uid: string; readonly settled: string }>()
  return {
    settled: (key, uid) => {
      const remembered = preDownloads.get(key)
      return remembered?.uid === uid ? remembered.settled : undefined
    },
    settle: (key, settled) => {
      if (settled === undefined) preDownloads.delete(key)
      else preDownloads.set(key, settled)
    },
    size: () => preDownloads.size
  }
}
