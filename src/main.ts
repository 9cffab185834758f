#!/usr/bin/env node
import { treeFor } from "./cli/treeFor.ts"

/**
 * The product's entry (dist/preheat.mjs; dist/preheat.cjs in the single executable): `preheat
 * controller`, `daemon`, `rollout`, `status`, `crds`, `version` and `--help`, each run loading
 * only the tree its command line needs (src/cli/treeFor.ts). Any other command line, the harness's
 * commands' (`apiserver`, `dev`, `fleet`, `simulated-daemon`) first, goes to harness/main.ts,
 * every command: the one module of harness/ the product names, and only here, through `import()`.
 * The bundles do not carry it: build.ts makes this `import()` load the harness's own bundle beside
 * this one (dist/preheat-harness.mjs), so what the roles run holds no harness code at all. Nothing
 * else is imported before the tree is known, so a handover evaluates nothing of the product's
 * bundle.
 */
const tree = treeFor(process.argv.slice(2))
if (tree === "harness") {
  import("../harness/main.ts").catch((error: unknown) => {
    // A bundle copied without the harness's beside it, say: one line, not a stack trace.
    process.stderr.write(`error: cannot load the harness's commands: ${error instanceof Error ? error.message : String(error)}\n`)
    process.exitCode = 1
  })
} else {
  void import("./cli/runProduct.ts").then(({ runProduct }) => runProduct(tree))
}
