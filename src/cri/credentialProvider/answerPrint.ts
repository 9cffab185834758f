// What a credential provider answered for an image, reduced to what the daemon needs to tell a new
// answer from one a registry refused (daemon/providerRenewal/): a digest of the credentials, held
// in memory only and redacted in every printed form. It is never written to an API object, a log,
// an event or a metric.
import { createHash } from "node:crypto"
import { Redacted } from "effect"
import type { RegistryCredential } from "../dockerConfig.ts"

export type AnswerPrint = Redacted.Redacted<string>

const fields = ["username", "password", "auth", "identityToken", "registryToken"] as const

/** The digest of the credentials a provider gives for an image, in their order. */
export const printOf = (credentials: ReadonlyArray<RegistryCredential>): AnswerPrint =>
  Redacted.make(
    createHash("sha256")
      .update(JSON.stringify(credentials.map((credential) => fields.map((field) => credential[field] ?? null))))
      .digest("base64")
  )

export const samePrint = (a: AnswerPrint, b: AnswerPrint): boolean => Redacted.value(a) === Redacted.value(b)
