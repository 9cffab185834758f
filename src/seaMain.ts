import { getAsset } from "node:sea"
import { compileFunction } from "node:vm"

/**
 * The single executable's main script (build.ts `bin`). The executable carries two CommonJS
 * bundles as SEA assets: the whole of preheat (main.ts) and the daemon alone (daemonMain.ts), and
 * this runs the one the command line asks for. The daemon runs on every node, and the code it
 * never runs cost it memory all the same: the whole bundle's source is 0.5 MB more to hold and
 * parse, 1.6 MiB of idle RSS (docs/benchmarks.md). Everything else, `preheat --log-level debug
 * daemon` (a flag first) included, gets the whole bundle.
 */
const bundle = process.argv[2] === "daemon" ? "daemon.cjs" : "preheat.cjs"

// Run as Node runs a CommonJS module: the body of a function of the module's variables, here the
// SEA main script's own (its `require` loads Node's built-in modules, all a bundle needs). The
// assets carry no hashbang line, which a function body cannot start with.
const main = compileFunction(getAsset(bundle, "utf8"), ["exports", "require", "module", "__filename", "__dirname"], {
  filename: `${process.execPath}#${bundle}`
})
main(exports, require, module, __filename, __dirname)
