// An apply's conflicts as kube-apiserver reports them: 409 Conflict, one cause per field, and a
// message naming each manager with the fields it owns that the apply would change.
import { ApiFailure } from "../../http/apiStatus.ts"
import { formatPath } from "./fieldSet.ts"
import { describeManager, identityOf } from "./managers.ts"
import type { ApplyConflicts } from "./ownership.ts"

export const conflictFailure = ({ conflicts }: ApplyConflicts): ApiFailure => {
  const causes = conflicts.map((c) => ({
    reason: "FieldManagerConflict",
    message: `conflict with ${describeManager(c.manager)}`,
    field: formatPath(c.path)
  }))
  let message: string
  if (conflicts.length === 1) {
    message = `Apply failed with 1 conflict: conflict with ${describeManager(conflicts[0]!.manager)}: ${formatPath(conflicts[0]!.path)}`
  } else {
    const byManager = new Map<string, { readonly name: string; readonly paths: Array<string> }>()
    for (const c of conflicts) {
      const key = identityOf(c.manager)
      const group = byManager.get(key) ?? { name: describeManager(c.manager), paths: [] }
      group.paths.push(formatPath(c.path))
      byManager.set(key, group)
    }
    const lines = [...byManager.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .flatMap(([, { name, paths }]) => [`conflicts with ${name}:`, ...paths.map((p) => `- ${p}`)])
    message = `Apply failed with ${conflicts.length} conflicts: ${lines.join("\n")}`
  }
  return new ApiFailure({ code: 409, reason: "Conflict", message, details: { causes } })
}
