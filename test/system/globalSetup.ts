import { execFileSync } from "node:child_process"

/** The tests run the bundle, so it must be current; `npm test` builds it first and sets PREHEAT_SKIP_BUILD=1. */
export default function setup(): void {
  if (process.env["PREHEAT_SKIP_BUILD"] === "1") return
  execFileSync("npm", ["run", "build"], { stdio: "inherit" })
}
