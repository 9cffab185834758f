/**
 * How a credential provider's new answer shows in a NodeImage (issue 37): a Failed tag whose
 * registry refused the providers' credentials names them (`credentialProviders`), and the daemon
 * sets `renewedAt` on those it later finds answering otherwise. The controller reads it to give a
 * job's failed tag its next version. The status is writable by hand, so it is read defensively.
 */
import type { ImageTagStatus } from "./nodeImage.ts"

/** The providers a Failed tag's status marks as answering anew, by name, in its order; none for any other phase. */
export const renewedProviders = (status: ImageTagStatus | undefined): ReadonlyArray<string> => {
  const asked: unknown = status?.phase === "Failed" ? status.credentialProviders : undefined
  if (!Array.isArray(asked)) return []
  return asked.flatMap((p: unknown) =>
    typeof p === "object" &&
    p !== null &&
    typeof (p as { name?: unknown }).name === "string" &&
    typeof (p as { renewedAt?: unknown }).renewedAt === "string"
      ? [(p as { name: string }).name]
      : []
  )
}
