import { getAsset } from "node:sea"
import { compileFunction } from "node:vm"
import { type Tree, treeFor } from "./cli/treeFor.ts"

/**
 * The single executable's main script (build.ts `bin`). The executable carries three CommonJS
 * bundles as SEA assets: the product (main.ts), the daemon alone (daemonMain.ts) and every
 * command, the harness's too (harness/main.ts), and this runs the one the command line needs, by
 * the rule main.ts follows (cli/treeFor.ts). Code a process never runs costs it memory all the
 * same: a bundle's source is held and pre-parsed whole (docs/benchmarks.md, "Daemon overhead and
 * memory" and "Each role ships only itself"). `preheat --log-level debug daemon` (a flag first)
 * gets every command.
 */
const assets: Record<Tree, string> = {
  controller: "preheat.cjs",
  daemon: "daemon.cjs",
  product: "preheat.cjs",
  harness: "harness.cjs"
}
const bundle = assets[treeFor(process.argv.slice(2))]

// Run as Node runs a CommonJS module: the body of a function of the module's variables, here the
// SEA main script's own (its `require` loads Node's built-in modules, all a bundle needs). The
// assets carry no hashbang line, which a function body cannot start with.
const main = compileFunction(getAsset(bundle, "utf8"), ["exports", "require", "module", "__filename", "__dirname"], {
  filename: `${process.execPath}#${bundle}`
})
main(exports, require, module, __filename, __dirname)
