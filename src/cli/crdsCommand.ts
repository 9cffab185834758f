import { Console, Effect } from "effect"
import { Command } from "effect/cli"
import { renderCrds } from "../api/crd/manifests.ts"

export const crdsCommand = Command.make("crds", {}, () => Effect.flatMap(Effect.sync(renderCrds), Console.log)).pipe(
  Command.withDescription("Print the CustomResourceDefinitions (YAML) for kubectl apply -f -.")
)
