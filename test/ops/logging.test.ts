import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Redacted, References } from "effect"
import { vi } from "vitest"
import { Forbidden } from "../../src/kube/errors.ts"
import { loggingLayer, redactSecrets } from "../../src/ops/logging.ts"
import { rawControls, titleEscapeReference } from "../support/hostileText.ts"

/** Runs `program` with the chosen logger writing into an array. */
const captured = <A, E>(program: Effect.Effect<A, E>, options: { format?: "json" | "text"; level?: "Info" | "Warn" | "Debug" } = {}) =>
  Effect.gen(function* () {
    const lines: Array<string> = []
    yield* program.pipe(
      Effect.provide(loggingLayer({ format: options.format ?? "json", level: options.level ?? "Info", sink: (line) => lines.push(line) }))
    )
    return lines
  })

const parsed = (lines: ReadonlyArray<string>) => lines.map((line) => JSON.parse(line) as Record<string, unknown>)

const dockerConfigSecret = {
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name: "regcred", namespace: "apps" },
  type: "kubernetes.io/dockerconfigjson",
  data: { ".dockerconfigjson": "eyJhdXRocyI6e319" }
}

describe("JSON logs", () => {
  it.effect("one object per line with time, level, msg and the annotations at the top level", () =>
    Effect.gen(function* () {
      const lines = yield* captured(
        Effect.gen(function* () {
          yield* Effect.logInfo("pulled image", 3, "layers")
          yield* Effect.logWarning("slow registry")
        }).pipe(Effect.annotateLogs({ node: "node-1", image: "nginx:1.27" }))
      )
      expect(lines).toHaveLength(2)
      for (const line of lines) expect(line).not.toContain("\n")
      const [first, second] = parsed(lines)
      expect(first).toEqual({
        time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        level: "info",
        msg: "pulled image 3 layers",
        node: "node-1",
        image: "nginx:1.27"
      })
      expect(second).toMatchObject({ level: "warn", msg: "slow registry", node: "node-1" })
    })
  )

  it.effect("structured message parts go to args; log spans, the typed error and the cause are kept", () =>
    Effect.gen(function* () {
      const lines = yield* captured(
        Effect.logError(
          "reconcile failed",
          { key: "default/job-1" },
          Cause.fail(new Forbidden({ kind: "NodeImage", objectName: "n1", verb: "patch", message: "rbac" }))
        ).pipe(Effect.withLogSpan("reconcile"))
      )
      const [record] = parsed(lines)
      expect(record).toMatchObject({ level: "error", msg: "reconcile failed", args: [{ key: "default/job-1" }] })
      expect(record!["spans"]).toEqual({ reconcile: expect.any(Number) })
      expect(record!["error"]).toEqual({
        _tag: "Forbidden",
        name: "Forbidden",
        kind: "NodeImage",
        objectName: "n1",
        verb: "patch",
        message: "rbac"
      })
      expect(record!["cause"]).toContain("rbac\n    at ")
    })
  )

  it.effect("annotations named like the logger's own fields do not overwrite them", () =>
    Effect.gen(function* () {
      const [record] = parsed(yield* captured(Effect.log("hello").pipe(Effect.annotateLogs({ level: "custom", msg: "x" }))))
      expect(record).toMatchObject({ level: "info", msg: "hello", "annotation.level": "custom", "annotation.msg": "x" })
    })
  )

  it.effect("the level filters what is written", () =>
    Effect.gen(function* () {
      const program = Effect.gen(function* () {
        yield* Effect.logDebug("debug")
        yield* Effect.logInfo("info")
        yield* Effect.logWarning("warn")
      })
      expect(parsed(yield* captured(program, { level: "Warn" })).map((r) => r["msg"])).toEqual(["warn"])
      expect(parsed(yield* captured(program, { level: "Debug" })).map((r) => r["msg"])).toEqual(["debug", "info", "warn"])
    })
  )

  it.effect("secrets in annotations and message parts are redacted", () =>
    Effect.gen(function* () {
      const lines = yield* captured(
        Effect.log("copied pull secret", dockerConfigSecret).pipe(
          Effect.annotateLogs({ token: "abc", registry: { auth: "dXNlcjpwYXNz", username: "bob" }, apiKey: Redacted.make("k") })
        )
      )
      expect(lines.join("\n")).not.toMatch(/abc|dXNlcjpwYXNz|eyJhdXRocyI6e319|"k"/)
      const [record] = parsed(lines)
      expect(record).toMatchObject({
        token: "<redacted>",
        registry: { auth: "<redacted>", username: "bob" },
        apiKey: "<redacted>",
        args: [{ kind: "Secret", metadata: { name: "regcred" }, data: { ".dockerconfigjson": "<redacted>" } }]
      })
    })
  )

  it.effect("without a level, the minimum level already in place (the CLI's --log-level) applies", () =>
    Effect.gen(function* () {
      const lines: Array<string> = []
      yield* Effect.gen(function* () {
        yield* Effect.logInfo("info")
        yield* Effect.logError("error")
      }).pipe(
        Effect.provide(loggingLayer({ format: "json", sink: (line) => lines.push(line) })),
        Effect.provideService(References.MinimumLogLevel, "Error")
      )
      expect(parsed(lines).map((r) => r["msg"])).toEqual(["error"])
    })
  )

  it.effect("writes to stderr by default", () =>
    Effect.gen(function* () {
      const written: Array<string> = []
      const spy = vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
        written.push(String(chunk))
        return true
      })
      try {
        yield* Effect.log("to stderr").pipe(Effect.provide(loggingLayer({ format: "json", level: "Info" })))
      } finally {
        spy.mockRestore()
      }
      expect(written).toHaveLength(1)
      expect(written[0]!.endsWith("}\n")).toBe(true)
      expect(JSON.parse(written[0]!)).toMatchObject({ level: "info", msg: "to stderr" })
    })
  )
})

describe("text logs", () => {
  it.effect("one line per entry for a person: time, level, msg, key=value, then the cause", () =>
    Effect.gen(function* () {
      const lines = yield* captured(
        Effect.logWarning("slow registry", Cause.fail("timeout")).pipe(
          Effect.annotateLogs({ node: "node-1", reason: "took 30 s", password: "hunter2" })
        ),
        { format: "text" }
      )
      expect(lines).toHaveLength(1)
      const [first, ...rest] = lines[0]!.split("\n")
      expect(first).toMatch(/^\d{4}-\d\d-\d\dT\S+Z WARN {2}slow registry node=node-1 reason="took 30 s" password=<redacted>$/)
      expect(rest.join("\n")).toContain("timeout")
    })
  )
})

describe("redactSecrets", () => {
  it("masks credential-like keys at any depth and keeps the rest", () => {
    const config = {
      auths: {
        "registry.example.com": { username: "bob", password: "p", auth: "YjpwCg==", identitytoken: "t" }
      },
      headers: { Authorization: "Bearer x" },
      ".dockercfg": "e30=",
      pullSecrets: ["regcred"],
      author: "alice"
    }
    expect(redactSecrets(config)).toEqual({
      auths: {
        "registry.example.com": { username: "bob", password: "<redacted>", auth: "<redacted>", identitytoken: "<redacted>" }
      },
      headers: { Authorization: "<redacted>" },
      ".dockercfg": "<redacted>",
      pullSecrets: ["regcred"],
      author: "alice"
    })
    expect(config.auths["registry.example.com"].password).toBe("p") // a copy, not in place
  })

  it("masks every data and stringData value of a Secret, also as a list item without kind", () => {
    const listItem = {
      metadata: { name: "opaque", namespace: "apps" },
      type: "Opaque",
      data: { "config.yaml": "c2VjcmV0" },
      stringData: { "note.txt": "plain secret" }
    }
    expect(redactSecrets({ items: [listItem, dockerConfigSecret] })).toEqual({
      items: [
        { ...listItem, data: { "config.yaml": "<redacted>" }, stringData: { "note.txt": "<redacted>" } },
        { ...dockerConfigSecret, data: { ".dockerconfigjson": "<redacted>" } }
      ]
    })
  })

  it("leaves a ConfigMap's data and primitives alone, turns errors into their fields and survives cycles", () => {
    const configMap = { kind: "ConfigMap", metadata: { name: "c" }, data: { key: "value" } }
    expect(redactSecrets(configMap)).toEqual(configMap)
    expect(redactSecrets("token")).toBe("token")
    expect(redactSecrets(42)).toBe(42)
    expect(redactSecrets(new Error("x"))).toEqual({ name: "Error", message: "x" })
    expect(redactSecrets(Object.assign(new Error("401"), { password: "p" }))).toEqual({
      name: "Error",
      message: "401",
      password: "<redacted>"
    })
    const cyclic: Record<string, unknown> = { name: "a" }
    cyclic["self"] = cyclic
    expect(redactSecrets(cyclic)).toEqual({ name: "a", self: "[Circular]" })
    const shared = { v: 1 }
    expect(redactSecrets([shared, shared])).toEqual([{ v: 1 }, { v: 1 }])
  })
})

describe("user strings in log lines (issue 24)", () => {
  const hostile = Effect.logWarning(`pull failed for ${titleEscapeReference}`).pipe(
    Effect.annotateLogs({ image: titleEscapeReference, failure: `runtime said ${titleEscapeReference}\u2066` })
  )

  it.effect("JSON: DEL, C1, bidi and zero-width characters are \\u escapes too, the values unchanged", () =>
    Effect.gen(function* () {
      const lines = yield* captured(hostile)
      expect(rawControls(lines.join("\n"))).toEqual([])
      expect(parsed(lines)[0]).toMatchObject({ image: titleEscapeReference, msg: `pull failed for ${titleEscapeReference}` })
      expect(lines[0]).toContain('"image":"nginx\\u001b]0;pwned\\u0007\\u202e:latest"')
    })
  )

  it.effect("text: values quoted as Go's %q, the message and the cause escaped", () =>
    Effect.gen(function* () {
      const lines = yield* captured(Effect.andThen(hostile, Effect.logError("failed", Cause.fail(new Error(titleEscapeReference)))), {
        format: "text"
      })
      const text = lines.join("\n")
      expect(rawControls(text)).toEqual([])
      expect(lines[0]).toContain('WARN  pull failed for nginx\\x1b]0;pwned\\a\\u202e:latest image="nginx\\x1b]0;pwned\\a\\u202e:latest"')
      expect(lines[1]).toContain("nginx\\x1b]0;pwned\\a\\u202e:latest")
    })
  )

  it.effect("text: a 5,000-character value is cut", () =>
    Effect.gen(function* () {
      const [line] = yield* captured(Effect.logInfo("x").pipe(Effect.annotateLogs({ image: `r/${"a".repeat(5000)}` })), { format: "text" })
      expect(line!.length).toBeLessThan(1200)
      expect(line!.endsWith('aaa"...')).toBe(true)
    })
  )
})
