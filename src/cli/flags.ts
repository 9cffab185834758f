import { Option, Result } from "effect"
import { Flag } from "effect/cli"
import { defaultMinFreeDisk, parseBytes, parseMinFreeDisk } from "../daemon/minFreeDisk.ts"

/** A string flag with its help text. */
export const text = (name: string, description: string) => Flag.String(name).pipe(Flag.withDescription(description))

/** An integer flag whose help text names its default. */
export const integer = (name: string, description: string, fallback: number) =>
  Flag.Int(name).pipe(Flag.withDescription(`${description} (default ${fallback})`), Flag.withDefault(fallback))

/** `--min-free-disk`, checked as it is parsed: a bad value stops the command with parseMinFreeDisk's sentence. */
export const minFreeDiskFlag = Flag.String("min-free-disk").pipe(
  Flag.withDescription(
    "Free room the runtime's image filesystem must have before a pull starts, in bytes (5Gi, 500M) or as a share of " +
      `it (10%); below it the tag fails with InsufficientDisk instead of pulling. 0 turns the check off (default ${defaultMinFreeDisk.text})`
  ),
  Flag.withDefault(defaultMinFreeDisk.text),
  Flag.filterMap(
    (value) => Result.getSuccess(parseMinFreeDisk(value)),
    (value) => Result.match(parseMinFreeDisk(value), { onFailure: (problem) => problem, onSuccess: () => "" })
  )
)

/** A size in bytes written as a Kubernetes quantity (100Gi, 500M), whose help text names its default. */
export const bytesFlag = (name: string, description: string, fallback: string) =>
  Flag.String(name).pipe(
    Flag.withDescription(`${description} (default ${fallback})`),
    Flag.withDefault(fallback),
    Flag.filterMap(
      (value) => Option.fromUndefinedOr(parseBytes(value)),
      () => "bytes as a Kubernetes quantity (such as 100Gi, 500M or 1000000000)"
    )
  )
