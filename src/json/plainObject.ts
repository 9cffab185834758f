// JSON as objects: what a decoded document is made of, and how a member is set on one.

export type JsonObject = { readonly [key: string]: unknown }

/** Whether `u` is an object as JSON.parse makes them (not an array, a class instance or null). */
export const isPlainObject = (u: unknown): u is JsonObject => {
  if (typeof u !== "object" || u === null || Array.isArray(u)) return false
  const proto = Object.getPrototypeOf(u)
  return proto === Object.prototype || proto === null
}

export const setOwn = (target: Record<string, unknown>, key: string, value: unknown): void => {
  // A JSON key "__proto__" is data, not the prototype.
  if (key === "__proto__") Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
  else target[key] = value
}
