// Polls a benchmark's condition until it holds; the last error explains a timeout.
const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms))

/** `check` again every `intervalMs` until it returns a value other than undefined. */
export const eventually = async <A>(what: string, check: () => Promise<A | undefined>, timeoutMs: number, intervalMs = 500): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  let last: unknown
  for (;;) {
    try {
      const value = await check()
      if (value !== undefined) return value
    } catch (error) {
      last = error
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${String(last ?? "")}`)
    await sleep(intervalMs)
  }
}
