import pkg from "../package.json" with { type: "json" }

/** The release this build reports; bundled from package.json so every runtime prints the same. */
export const version: string = pkg.version
