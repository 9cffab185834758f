/**
 * Which command tree a command line needs, read off the arguments before anything else is loaded:
 * the entries (main.ts, and seaMain.ts for the single executable's bundles) load that tree alone.
 *
 * - `controller`, `daemon`: that role's command alone (roleOnlyCommand.ts);
 * - `product`: the product's commands, the harness's listed by name only (harnessListing.ts);
 * - `harness`: every command, the harness's too (harness/main.ts).
 *
 * Only a command line that is plainly the product's gets a product tree: a product command first,
 * or nothing but `--help`/`--version`. Everything else gets every command, which parses it exactly
 * as one tree of all commands always did: the harness's commands (`apiserver`, `dev`, ...), but
 * also a flag first (`preheat --log-level debug dev`: which word is the command depends on which
 * flags take a value), `--completions` and `--wizard` (they walk every command's flags), an unknown
 * command.
 * Nothing here imports a module: the executable's main script bundles it.
 */
export type Tree = "controller" | "daemon" | "product" | "harness"

/** The product's commands but the roles (their names are the subcommands of preheatCommand.ts). */
export const productCommands: ReadonlySet<string> = new Set(["allowlist", "crds", "rollout", "status", "version"])

/** Effect's global flags that take no value and need no command: help and version, of `preheat` itself. */
const rootFlags: ReadonlySet<string> = new Set(["--help", "-h", "--version", "-v"])

export const treeFor = (args: ReadonlyArray<string>): Tree => {
  const first = args[0]
  if (first === "controller" || first === "daemon") return first
  if (first !== undefined && productCommands.has(first)) return "product"
  return args.every((arg) => rootFlags.has(arg)) ? "product" : "harness"
}
