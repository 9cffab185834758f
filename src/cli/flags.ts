import { Flag } from "effect/cli"

/** A string flag with its help text. */
export const text = (name: string, description: string) => Flag.String(name).pipe(Flag.withDescription(description))

/** An integer flag whose help text names its default. */
export const integer = (name: string, description: string, fallback: number) =>
  Flag.Int(name).pipe(Flag.withDescription(`${description} (default ${fallback})`), Flag.withDefault(fallback))
