/**
 * Waiting in real time for something outside the test's control (a child process, a server, a
 * background task) to come about: one helper for the system and fault suites, the benchmarks and
 * the tests of servers and clients.
 */

const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms))

/**
 * Calls `check` every `intervalMs` until it returns a value other than undefined, and resolves
 * with that value. An error `check` throws counts as "not yet"; after `timeoutMs` the last one is
 * the rejection's cause and ends its message.
 */
export const eventually = async <A>(
  what: string,
  check: () => Promise<A | undefined> | A | undefined,
  timeoutMs = 30_000,
  intervalMs = 250
): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  let last: unknown
  for (;;) {
    try {
      const value = await check()
      if (value !== undefined) return value
    } catch (error) {
      last = error
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}: ${String(last ?? "")}`, { cause: last })
    }
    await sleep(intervalMs)
  }
}
