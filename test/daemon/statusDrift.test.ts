import { describe, expect, it } from "vitest"
import { othersChangedStatus } from "../../src/daemon/statusDrift.ts"
import { applyMergePatch } from "../../src/json/mergePatch.ts"

const pulling = { tag: "a", version: 0, phase: "Pulling" }
const succeeded = { tag: "b", version: 0, phase: "Succeeded", digest: "sha256:1" }

describe("othersChangedStatus: whether a status patch's answer shows another writer", () => {
  const stored = { desired: 2, pulling: 2, failed: 0, imageStatuses: { app: { tags: [pulling] } } }
  const sent = { pulling: 1, succeeded: 1, imageStatuses: { web: { tags: [succeeded] } } }
  const expected = applyMergePatch(stored, sent)

  it("an answer that is what the patch was computed to make shows nobody else", () => {
    expect(othersChangedStatus(structuredClone(expected), expected, sent)).toBe(false)
  })

  it("a tag another writer failed in between, outside what was sent, does", () => {
    const answer = applyMergePatch(
      applyMergePatch(stored, { pulling: 1, failed: 1, imageStatuses: { app: { tags: [{ ...pulling, phase: "Failed" }] } } }),
      sent
    )
    expect(othersChangedStatus(answer, expected, sent)).toBe(true)
  })

  it("a field the server did not keep of what was sent (an older CRD pruning it) does not: writing it again changes nothing", () => {
    const { digest: _, ...pruned } = succeeded
    const answer = applyMergePatch(stored, { ...sent, imageStatuses: { web: { tags: [pruned] } } })
    expect(othersChangedStatus(answer, expected, sent)).toBe(false)
  })

  it("a field another writer added counts too (the check that follows writes nothing: the daemon keeps what it does not own)", () => {
    const answer = { ...(expected as object), note: "by hand" }
    expect(othersChangedStatus(answer, expected, sent)).toBe(true)
  })
})
