/**
 * A spread that is stable for one seed: FNV-1a of the seed, scaled into [min, max]. Spreading
 * TTLs avoids every node re-pulling in the same second; stability makes re-deciding idempotent,
 * so an unchanged job never looks "edited" and causes no writes.
 */
export const jitterSeconds = (seed: string, min: number, max: number): number => {
  let hash = 0x811c9dc5
  for (let i = 0; i < seed.length; i++) {
    hash ^= seed.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193)
  }
  return min + ((hash >>> 0) % (max - min + 1))
}
