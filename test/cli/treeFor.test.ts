import { describe, expect, it } from "vitest"
import { harnessCommands } from "../../harness/commands.ts"
import { harnessDescriptions, harnessListing } from "../../src/cli/harnessListing.ts"
import { preheatCommand } from "../../src/cli/preheatCommand.ts"
import { productCommands, treeFor } from "../../src/cli/treeFor.ts"

const names = (tree: ReturnType<typeof preheatCommand>, group: string | undefined) =>
  tree.subcommands.filter((g) => g.group === group).flatMap((g) => g.commands.map((c) => c.name))

describe("treeFor: which tree a command line needs", () => {
  it.each([
    [["controller", "--kubeconfig", "k"], "controller"],
    [["controller", "--help"], "controller"],
    [["daemon", "--runtime-socket", "/run/containerd/containerd.sock"], "daemon"],
    [["crds", "--out", "d"], "product"],
    [["rollout", "deploy/web", "--image", "web=nginx:1.27"], "product"],
    [["status", "--watch"], "product"],
    [["version"], "product"],
    [["version", "--log-level", "debug"], "product"],
    [[], "product"],
    [["--help"], "product"],
    [["-h"], "product"],
    [["--version"], "product"],
    [["-v"], "product"],
    [["--help", "--version"], "product"]
  ])("%j: %s", (args, tree) => {
    expect(treeFor(args)).toBe(tree)
  })

  it.each([
    [["apiserver", "--port", "0"]],
    [["dev", "--nodes", "3"]],
    [["fleet"]],
    [["simulated-daemon", "--node-name", "n1"]],
    // A flag first: whether the next word is the command or the flag's value is the parser's call.
    [["--log-level", "debug", "dev"]],
    [["--log-level=debug", "dev"]],
    [["--log-level", "debug", "controller"]],
    [["--log-level", "debug", "daemon"]],
    [["-v", "dev"]],
    // They walk every command's flags.
    [["--completions", "bash"]],
    [["--wizard"]],
    // Unknown: every command says so, as it always did.
    [["bogus"]],
    [["help"]],
    [["-hv"]],
    [["--", "version"]]
  ])("%j: every command (the harness's tree)", (args) => {
    expect(treeFor(args)).toBe("harness")
  })

  it("knows the product's commands by the names the product's tree gives them, and none of the harness's", () => {
    const product = preheatCommand(harnessListing)
    expect(names(product, undefined).sort()).toEqual(["controller", "daemon", ...productCommands].sort())
    for (const name of names(product, undefined)) expect(treeFor([name])).not.toBe("harness")
    for (const { name } of harnessCommands) expect(treeFor([name, "--help"])).toBe("harness")
  })

  it("the product's tree lists exactly the harness's commands, with their descriptions", () => {
    const listed = preheatCommand(harnessListing)
    const every = preheatCommand(harnessCommands)
    const group = "Local clusters and tests (the harness)"
    expect(names(listed, group)).toEqual(names(every, group))
    expect(names(every, group)).toEqual(Object.keys(harnessDescriptions))
    for (const command of harnessCommands) {
      expect(command.description).toBe(harnessDescriptions[command.name])
    }
  })
})
