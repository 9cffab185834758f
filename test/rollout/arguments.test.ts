import { Duration, Result } from "effect"
import { describe, expect, it } from "vitest"
import { parseImageSettings } from "../../src/rollout/imageSettings.ts"
import { parseParallelism, parseTimeout } from "../../src/rollout/rolloutFlags.ts"
import { displayName, parseWorkload } from "../../src/rollout/workloadArgument.ts"

const workload = (...args: Array<string>) => {
  const parsed = parseWorkload(args)
  return Result.isSuccess(parsed) ? displayName(parsed.success) : `error: ${parsed.failure.message}`
}

const failure = <A, E extends { readonly message: string }>(result: Result.Result<A, E>): string =>
  Result.isFailure(result) ? result.failure.message : "no failure"

describe("WORKLOAD, as kubectl takes it", () => {
  it.each([
    [["deployment/web"], "deployment.apps/web"],
    [["deploy/web"], "deployment.apps/web"],
    [["deployments.apps/web"], "deployment.apps/web"],
    [["Deployment/web"], "deployment.apps/web"],
    [["deployment", "web"], "deployment.apps/web"],
    [["statefulset/db"], "statefulset.apps/db"],
    [["sts/db"], "statefulset.apps/db"],
    [["sts", "db"], "statefulset.apps/db"],
    [["daemonset/agent"], "daemonset.apps/agent"],
    [["ds/agent"], "daemonset.apps/agent"],
    [["daemonsets.v1.apps/agent"], "daemonset.apps/agent"]
  ])("%j is %s", (args, display) => {
    expect(workload(...args)).toBe(display)
  })

  it.each([
    [["pod/web"], 'error: preheat rollout cannot roll out "pod": WORKLOAD is TYPE/NAME or TYPE NAME'],
    [["deployment/"], "error: the workload's name is missing"],
    [["web"], "error: the workload's name is missing"],
    [["deploy/web", "web"], "error: there is no need to specify a resource type as a separate argument"],
    [["deploy", "web", "x"], "error: one workload at a time, got 3 arguments"]
  ])("%j is refused", (args, message) => {
    expect(workload(...args)).toContain(message)
  })
})

describe("--image CONTAINER=IMAGE", () => {
  it("keeps the order, takes * and registry ports", () => {
    expect(parseImageSettings(["web=nginx:1.26", "*=registry.local:5000/app:2"])).toEqual(
      Result.succeed([
        { container: "web", image: "nginx:1.26" },
        { container: "*", image: "registry.local:5000/app:2" }
      ])
    )
  })

  it.each([
    [["web"], '--image takes CONTAINER=IMAGE, got "web"'],
    [["=nginx"], '--image takes CONTAINER=IMAGE, got "=nginx"'],
    [["web="], '--image takes CONTAINER=IMAGE, got "web="'],
    [["web=Nginx:1"], 'invalid image "Nginx:1": repository name must be lowercase'],
    [["web=a:1", "web=b:2"], '--image names container "web" twice'],
    [[], "at least one --image CONTAINER=IMAGE is required"]
  ])("%j is refused: %s", (texts, message) => {
    expect(failure(parseImageSettings(texts))).toBe(message)
  })
})

describe("--timeout, a Go duration", () => {
  it.each([
    ["90s", 90_000],
    ["1.5m", 90_000],
    ["1h30m", 5_400_000],
    ["250ms", 250],
    [".5s", 500],
    ["+2s", 2_000]
  ])("%s is %d ms", (text, millis) => {
    const parsed = parseTimeout(text)
    expect(Result.isSuccess(parsed) && parsed.success !== undefined ? Duration.toMillis(parsed.success) : undefined).toBe(millis)
  })

  it.each(["0", "0s", "0h0m"])("%s is no limit", (text) => {
    expect(parseTimeout(text)).toEqual(Result.succeed(undefined))
  })

  it.each(["", "10", "5x", "s", "1m-2s", "-5s", "."])("%j is refused in kubectl's words", (text) => {
    expect(failure(parseTimeout(text))).toBe(`invalid argument "${text}" for "--timeout" flag: time: invalid duration "${text}"`)
  })
})

describe("--parallelism", () => {
  it.each([
    ["10", 10],
    ["1", 1],
    ["25%", "25%"],
    ["100%", "100%"]
  ])("%s is %j", (text, value) => {
    expect(parseParallelism(text)).toEqual(Result.succeed(value))
  })

  it.each(["0", "0%", "101%", "-1", "x", ""])("%j is refused: a paused job would never finish", (text) => {
    expect(failure(parseParallelism(text))).toContain("--parallelism must be a positive integer or a percentage from 1% to 100%")
  })
})
