/**
 * node --experimental-strip-types --no-warnings bench/heapDiff.ts LARGER.heapsnapshot SMALLER.heapsnapshot NODES [ROWS]
 *
 * What one controller holds more than another, per node: two V8 heap snapshots (bench:scale
 * `--heap-snapshot-at`, at N = 5000 and N = 2000 say), their objects' own sizes summed by kind
 * (strings together; plain objects and arrays by their first property names, which tell a
 * NodeImage's tag status from a Node's labels), the difference divided by NODES (3000 for that
 * pair), largest first. Own sizes, not retained ones: what each kind of object costs, wherever it is held.
 */
import { readFileSync } from "node:fs"

interface Snapshot {
  readonly snapshot: {
    readonly meta: {
      readonly node_fields: ReadonlyArray<string>
      readonly node_types: readonly [ReadonlyArray<string>, ...Array<unknown>]
      readonly edge_fields: ReadonlyArray<string>
      readonly edge_types: readonly [ReadonlyArray<string>, ...Array<unknown>]
    }
  }
  readonly nodes: ReadonlyArray<number>
  readonly edges: ReadonlyArray<number>
  readonly strings: ReadonlyArray<string>
}

/** Own bytes and object count by kind. */
const byKind = (file: string): Map<string, { bytes: number; count: number }> => {
  const snap = JSON.parse(readFileSync(file, "utf8")) as Snapshot
  const { meta } = snap.snapshot
  const nodeFields = meta.node_fields.length
  const edgeFields = meta.edge_fields.length
  const [type, name, selfSize, edgeCount] = ["type", "name", "self_size", "edge_count"].map((f) => meta.node_fields.indexOf(f)) as [
    number,
    number,
    number,
    number
  ]
  const [edgeType, edgeName] = ["type", "name_or_index"].map((f) => meta.edge_fields.indexOf(f)) as [number, number]
  const kinds = new Map<string, { bytes: number; count: number }>()
  let edge = 0
  for (let n = 0; n < snap.nodes.length; n += nodeFields) {
    const t = meta.node_types[0][snap.nodes[n + type]!]!
    const objectName = snap.strings[snap.nodes[n + name]!]!
    const edges = snap.nodes[n + edgeCount]! * edgeFields
    let kind: string
    if (t.includes("string")) kind = "string"
    else if (t === "object" && (objectName === "Object" || objectName === "Array")) {
      const names: Array<string> = []
      for (let e = edge; e < edge + edges && names.length < 6; e += edgeFields) {
        const property = snap.strings[snap.edges[e + edgeName]!]!
        if (meta.edge_types[0][snap.edges[e + edgeType]!] === "property" && property !== "__proto__") names.push(property)
      }
      kind = `${objectName} {${names.join(",")}}`
    } else kind = t === "object" || t === "closure" || t === "hidden" || t === "array" ? `${t} ${objectName.slice(0, 50)}` : t
    edge += edges
    const entry = kinds.get(kind) ?? { bytes: 0, count: 0 }
    entry.bytes += snap.nodes[n + selfSize]!
    entry.count++
    kinds.set(kind, entry)
  }
  return kinds
}

const [larger, smaller, nodesArg, rowsArg] = process.argv.slice(2)
if (larger === undefined || smaller === undefined || nodesArg === undefined) {
  console.error("usage: bench/heapDiff.ts LARGER.heapsnapshot SMALLER.heapsnapshot NODES [ROWS]")
  process.exit(2)
}
const nodes = Number(nodesArg)
const a = byKind(larger)
const b = byKind(smaller)
const rows = [...new Set([...a.keys(), ...b.keys()])].map((kind) => ({
  kind,
  bytes: (a.get(kind)?.bytes ?? 0) - (b.get(kind)?.bytes ?? 0),
  count: (a.get(kind)?.count ?? 0) - (b.get(kind)?.count ?? 0)
}))
rows.sort((x, y) => y.bytes - x.bytes)
const total = (kinds: Map<string, { bytes: number }>) => [...kinds.values()].reduce((sum, k) => sum + k.bytes, 0)
const mib = (bytes: number) => (bytes / 1048576).toFixed(1)
console.log(
  `live heap ${mib(total(a))} MiB and ${mib(total(b))} MiB: ${mib(total(a) - total(b))} MiB more, ${Math.round((total(a) - total(b)) / nodes)} bytes per node`
)
for (const row of rows.slice(0, Number(rowsArg ?? 20))) {
  console.log(
    `${String(Math.round(row.bytes / nodes)).padStart(6)} B/node ${String(row.count).padStart(8)} objects  ${row.kind.slice(0, 100)}`
  )
}
