import { Console } from "effect"
import { CliOutput } from "effect/cli"
import { escapeForeignText } from "../api/goQuote.ts"

/**
 * kubectl-style usage errors: one line on stderr naming the problem and where help is,
 * instead of the whole help page. Requested help and the version still print as usual.
 */
export const usagePresenter = CliOutput.layerPresenter({
  present: (event) =>
    event._tag === "InvalidInvocation"
      ? // The errors repeat the arguments as typed: escaped, and bounded.
        Console.error(
          `error: ${escapeForeignText(event.errors.map((error) => error.message).join("; "))}. ` +
            `See '${event.commandPath.join(" ")} --help'.`
        )
      : CliOutput.defaultPresenter.present(event)
})
