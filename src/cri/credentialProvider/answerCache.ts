// Where a provider's answer is kept and for how long, as the kubelet keeps it
// (pkg/credentialprovider/plugin plugin.go: provide, getCachedCredentials): pure decisions on
// Clock milliseconds.
import type { CacheKeyType, ProviderResponse } from "./response.ts"

const globalKey = "global"

/** The registry of a repository: what is before its first slash, port included (the kubelet's parseRegistry). */
const registryOf = (repository: string): string => repository.split("/")[0] ?? repository

/** The key an answer is kept under. */
export const cacheKeyOf = (type: CacheKeyType, repository: string): string =>
  type === "Image" ? repository : type === "Registry" ? registryOf(repository) : globalKey

/** The keys looked up for a repository, in the kubelet's order: the image, its registry, then the global one. */
export const lookupKeys = (repository: string): ReadonlyArray<string> => [repository, registryOf(repository), globalKey]

/**
 * When an answer received at `now` stops being used, or undefined when it is not kept at all: a
 * cacheDuration of 0, or none with a defaultCacheDuration of 0.
 */
export const expiryOf = (response: ProviderResponse, defaultCacheMillis: number, now: number): number | undefined => {
  const millis = response.cacheMillis ?? defaultCacheMillis
  return millis === 0 ? undefined : now + millis
}

/** Still used at `now`: the kubelet's entries expire once the clock is after their time. */
export const isFresh = (expiresAt: number, now: number): boolean => now <= expiresAt
