// The CRDs' CEL rules within a real API server's budget (issue 11): kube-apiserver refuses a CRD
// whose rule's estimated cost times the number of times it can run per object exceeds
// StaticEstimatedCostLimit, or whose rules together exceed StaticEstimatedCRDCostLimit
// (apiextensions-apiserver validation). The estimate follows cel-go's checker: test/support/celCost.ts.
import { describe, expect, it } from "vitest"
import { crdOf, kinds } from "../../src/api/crd/manifests.ts"
import { ruleCosts } from "../support/celCost.ts"

const staticEstimatedCostLimit = 10_000_000
const staticEstimatedCrdCostLimit = 100_000_000

describe("CEL cost of the generated CRDs", () => {
  it.each(kinds.flatMap((k) => crdOf(k).spec.versions.map((v) => [`${k.kind} ${v.name}`, v.schema.openAPIV3Schema] as const)))(
    "%s: every rule and the total within kube-apiserver's limits",
    (_, schema) => {
      const costs = ruleCosts(schema as Record<string, unknown>)
      const rows = costs.map((c) => ({
        path: c.path,
        total: c.cost * c.cardinality,
        cost: c.cost,
        cardinality: c.cardinality,
        message: c.messageCost
      }))
      for (const row of rows) {
        expect(row.total, `${row.path}: ${JSON.stringify(row)}`).toBeLessThanOrEqual(staticEstimatedCostLimit)
        expect(row.message, `${row.path} messageExpression`).toBeLessThanOrEqual(staticEstimatedCostLimit)
      }
      const total = rows.reduce((sum, r) => sum + r.total + r.message, 0)
      expect(total).toBeLessThanOrEqual(staticEstimatedCrdCostLimit)
      if (process.env["PREHEAT_PRINT_CEL_COST"] !== undefined) console.log(JSON.stringify({ total, rows }, null, 1))
    }
  )
})
