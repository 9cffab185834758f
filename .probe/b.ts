import { bundleTo } from "../build.ts"
await bundleTo(process.argv[2]!, process.argv[3]!, (process.argv[4] ?? "esm") as "esm")
