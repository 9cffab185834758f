import { inspect } from "node:util"
import { Equal, Formatter, Result } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  credentialsFor,
  InvalidPullSecret,
  keyringLookup,
  matchesRepository,
  normaliseRegistryKey,
  ParsedSecret,
  parsePullSecret,
  registryCredential,
  type SecretLike
} from "../../src/cri/credentials.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"

const b64 = (text: string): string => Buffer.from(text, "utf8").toString("base64")

const dockerConfigJson = (name: string, config: unknown): SecretLike => ({
  metadata: { namespace: "preheat", name },
  type: "kubernetes.io/dockerconfigjson",
  data: { ".dockerconfigjson": b64(JSON.stringify(config)) }
})

const dockercfg = (name: string, config: unknown): SecretLike => ({
  metadata: { namespace: "preheat", name },
  type: "kubernetes.io/dockercfg",
  data: { ".dockercfg": b64(JSON.stringify(config)) }
})

const parseOk = (secret: SecretLike): ParsedSecret => {
  const result = parsePullSecret(secret)
  if (Result.isFailure(result)) throw new Error(`expected to parse: ${result.failure.message}`)
  return result.success
}

const parseError = (secret: SecretLike): InvalidPullSecret => {
  const result = parsePullSecret(secret)
  if (Result.isSuccess(result)) throw new Error("expected a malformed secret")
  return result.failure
}

/** A secret whose keys map to credentials of user `name` (password `pw-name`). */
const keyring = (name: string, keys: Readonly<Record<string, string>>): ParsedSecret =>
  new ParsedSecret({
    namespace: "preheat",
    name,
    entries: Object.entries(keys).map(([registry, user]) => ({
      registry,
      credential: registryCredential({ username: user, password: `pw-${user}` })
    }))
  })

const usersFor = (image: string, secrets: ReadonlyArray<ParsedSecret>): ReadonlyArray<string | undefined> =>
  credentialsFor(image, secrets).map(({ credential }) => credential.username)

describe("normaliseRegistryKey", () => {
  it.each([
    ["quay.io", "quay.io"],
    ["quay.io/", "quay.io"],
    ["https://quay.io", "quay.io"],
    ["http://quay.io/coreos", "quay.io/coreos"],
    ["https://quay.io/v2/coreos", "quay.io/coreos"],
    ["https://index.docker.io/v1/", "docker.io"],
    ["index.docker.io", "docker.io"],
    ["registry-1.docker.io", "docker.io"],
    ["docker.io/myorg", "docker.io/myorg"],
    ["localhost:5000", "localhost:5000"],
    ["https://user:pass@quay.io/x", "quay.io/x"],
    ["https://quay.io/x?q=1", "quay.io/x"],
    ["", undefined],
    ["https://", undefined]
  ])("%j -> %j", (raw, expected) => {
    expect(normaliseRegistryKey(raw)).toBe(expected)
  })
})

describe("credentialsFor: kubelet keyring matching", () => {
  const cases: ReadonlyArray<{
    readonly rule: string
    readonly keys: Readonly<Record<string, string>>
    readonly image: string
    readonly expected: ReadonlyArray<string>
  }> = [
    { rule: "exact host", keys: { "quay.io": "q" }, image: "quay.io/coreos/etcd:v3.5", expected: ["q"] },
    { rule: "other host", keys: { "quay.io": "q" }, image: "gcr.io/project/app:1", expected: [] },
    { rule: "host is not a suffix match", keys: { "example.com": "e" }, image: "a.example.com/x", expected: [] },
    { rule: "host:port", keys: { "localhost:5000": "l" }, image: "localhost:5000/a/b:c", expected: ["l"] },
    { rule: "port must match (key has one)", keys: { "localhost:5000": "l" }, image: "localhost/a", expected: [] },
    { rule: "port must match (image has one)", keys: { localhost: "l" }, image: "localhost:5000/a", expected: [] },
    { rule: "port must match (different)", keys: { "reg.example.com:443": "r" }, image: "reg.example.com:5000/a", expected: [] },
    { rule: "glob label", keys: { "*.example.com": "g" }, image: "a.example.com/x", expected: ["g"] },
    { rule: "glob needs a label", keys: { "*.example.com": "g" }, image: "example.com/x", expected: [] },
    { rule: "glob is one label", keys: { "*.example.com": "g" }, image: "a.b.example.com/x", expected: [] },
    { rule: "two globs, two labels", keys: { "*.*.example.com": "g" }, image: "a.b.example.com/x", expected: ["g"] },
    { rule: "glob inside a label", keys: { "reg-*.example.com": "g" }, image: "reg-eu.example.com/x", expected: ["g"] },
    // url.Parse reads "?" as the start of a query, so the kubelet never sees a "?" glob.
    { rule: "? starts a URL query, not a glob", keys: { "reg?.example.com": "g" }, image: "reg1.example.com/x", expected: [] },
    { rule: "class glob", keys: { "reg-[a-c].example.com": "g" }, image: "reg-b.example.com/x", expected: ["g"] },
    { rule: "class glob miss", keys: { "reg-[a-c].example.com": "g" }, image: "reg-d.example.com/x", expected: [] },
    { rule: "negated class glob", keys: { "reg-[^a-c].example.com": "g" }, image: "reg-d.example.com/x", expected: ["g"] },
    { rule: "glob with port", keys: { "*.example.com:5000": "g" }, image: "a.example.com:5000/x", expected: ["g"] },
    { rule: "bad glob matches nothing", keys: { "reg-[a.example.com": "g" }, image: "a.example.com/x", expected: [] },
    { rule: "path prefix", keys: { "quay.io/coreos": "c" }, image: "quay.io/coreos/etcd", expected: ["c"] },
    { rule: "path not a prefix", keys: { "quay.io/coreos": "c" }, image: "quay.io/other/etcd", expected: [] },
    {
      rule: "path prefix is a string prefix, as in the kubelet",
      keys: { "quay.io/core": "c" },
      image: "quay.io/coreos/etcd",
      expected: ["c"]
    },
    { rule: "trailing slash keeps the path segment", keys: { "quay.io/core/": "c" }, image: "quay.io/coreos/etcd", expected: [] },
    { rule: "https scheme stripped", keys: { "https://quay.io": "s" }, image: "quay.io/a", expected: ["s"] },
    { rule: "http scheme stripped", keys: { "http://quay.io/coreos": "s" }, image: "quay.io/coreos/etcd", expected: ["s"] },
    { rule: "API version path dropped", keys: { "https://quay.io/v2/": "s" }, image: "quay.io/a", expected: ["s"] },
    { rule: "docker.io for an official image", keys: { "docker.io": "hub" }, image: "nginx", expected: ["hub"] },
    { rule: "index.docker.io", keys: { "index.docker.io": "hub" }, image: "nginx:1.25", expected: ["hub"] },
    { rule: "registry-1.docker.io", keys: { "registry-1.docker.io": "hub" }, image: "user/app", expected: ["hub"] },
    {
      rule: "https://index.docker.io/v1/",
      keys: { "https://index.docker.io/v1/": "hub" },
      image: "docker.io/library/nginx",
      expected: ["hub"]
    },
    {
      rule: "docker hub image named with index.docker.io",
      keys: { "docker.io": "hub" },
      image: "index.docker.io/user/app",
      expected: ["hub"]
    },
    { rule: "docker hub key is not another registry", keys: { "docker.io": "hub" }, image: "quay.io/nginx", expected: [] },
    { rule: "docker hub org path", keys: { "docker.io/myorg": "org" }, image: "myorg/app:1", expected: ["org"] },
    { rule: "docker hub org path miss", keys: { "docker.io/myorg": "org" }, image: "nginx", expected: [] },
    {
      rule: "longest key first",
      keys: { "quay.io": "host", "quay.io/coreos/etcd": "repo", "quay.io/coreos": "org" },
      image: "quay.io/coreos/etcd:v3",
      expected: ["repo", "org", "host"]
    },
    {
      rule: "exact host before glob",
      keys: { "*.example.com": "glob", "a.example.com": "exact" },
      image: "a.example.com/x",
      expected: ["exact", "glob"]
    },
    {
      rule: "aliases of docker hub merge under one key, in entry order",
      keys: { "https://index.docker.io/v1/": "first", "docker.io": "second" },
      image: "nginx",
      expected: ["first", "second"]
    },
    { rule: "unparsable image", keys: { "quay.io": "q" }, image: "quay.io/UPPER", expected: [] }
  ]

  it.each(cases)("$rule", ({ keys, image, expected }) => {
    expect(usersFor(image, [keyring("s", keys)])).toEqual(expected)
  })

  it("tries matches from several secrets in secret order", () => {
    const secrets = [keyring("a", { "quay.io": "first" }), keyring("b", { "quay.io": "second" }), keyring("c", { "gcr.io": "x" })]
    expect(usersFor("quay.io/a/b", secrets)).toEqual(["first", "second"])
  })

  it("orders by key across secrets", () => {
    const secrets = [keyring("a", { "quay.io": "host" }), keyring("b", { "quay.io/org": "org" })]
    expect(usersFor("quay.io/org/app", secrets)).toEqual(["org", "host"])
  })

  it("tries the same credentials once", () => {
    const secrets = [keyring("a", { "quay.io": "same" }), keyring("b", { "quay.io/org": "same" })]
    expect(usersFor("quay.io/org/app", secrets)).toEqual(["same"])
  })

  it("returns nothing without secrets", () => {
    expect(credentialsFor("nginx", [])).toEqual([])
  })

  it("returns the credentials themselves, comparable and usable", () => {
    const secret = parseOk(dockerConfigJson("s", { auths: { "quay.io": { username: "u", password: "p" } } }))
    const [sourced] = credentialsFor("quay.io/a", [secret])
    expect(sourced?.source).toBe("pull secret preheat/s")
    const auth = sourced?.credential
    expect(auth).toEqual(registryCredential({ username: "u", password: "p" }))
    expect(Equal.equals(auth, registryCredential({ username: "u", password: "p" }))).toBe(true)
    expect(Equal.equals(auth, registryCredential({ username: "u", password: "other" }))).toBe(false)
    expect(auth?.password).toBe("p")
  })
})

// The kubelet's own tables (kubernetes/kubernetes pkg/credentialprovider/keyring_test.go), case for case.
describe("the kubelet's keyring tests", () => {
  // TestURLsMatch: URLsMatchStr(globURL, targetURL), which also matches a provider's matchImages.
  it.each([
    ["*.kubernetes.io", "prefix.kubernetes.io", true],
    ["prefix.*.io", "prefix.kubernetes.io", true],
    ["prefix.kubernetes.*", "prefix.kubernetes.io", true],
    ["*-good.kubernetes.io", "prefix-good.kubernetes.io", true],
    ["*.kubernetes.io/blah", "prefix.kubernetes.io/blah", true],
    ["prefix.*.io/foo", "prefix.kubernetes.io/foo/bar", true],
    ["*.kubernetes.io:1111/blah", "prefix.kubernetes.io:1111/blah", true],
    ["prefix.*.io:1111/foo", "prefix.kubernetes.io:1111/foo/bar", true],
    ["*.kubernetes.io", "kubernetes.io", false],
    ["*.*.kubernetes.io", "prefix.kubernetes.io", false],
    ["*.*.kubernetes.io", "kubernetes.io", false],
    ["kubernetes.io", "kubernetes.com", false],
    ["k*.io", "quay.io", false],
    ["*.kubernetes.io:1234/blah", "prefix.kubernetes.io:1111/blah", false],
    ["prefix.*.io/foo", "prefix.kubernetes.io:1111/foo/bar", false]
  ])("TestURLsMatch %s vs %s: %s", (glob, target, expected) => {
    expect(matchesRepository(glob, target)).toBe(expected)
  })

  // TestDockerKeyringForGlob: each key finds TARGET/foo/bar.
  it.each([
    ["https://hello.kubernetes.io", "hello.kubernetes.io"],
    ["https://*.docker.io", "prefix.docker.io"],
    ["https://prefix.*.io", "prefix.docker.io"],
    ["https://prefix.docker.*", "prefix.docker.io"],
    ["https://*.docker.io/path", "prefix.docker.io/path"],
    ["https://prefix.*.io/path", "prefix.docker.io/path/subpath"],
    ["https://prefix.docker.*/path", "prefix.docker.io/path"],
    ["https://*.docker.io:8888", "prefix.docker.io:8888"],
    ["https://prefix.*.io:8888", "prefix.docker.io:8888"],
    ["https://prefix.docker.*:8888", "prefix.docker.io:8888"],
    ["https://*.docker.io/path:1111", "prefix.docker.io/path:1111"],
    ["https://*.docker.io/v1/", "prefix.docker.io/path:1111"],
    ["https://*.docker.io/v2/", "prefix.docker.io/path:1111"],
    ["https://prefix.docker.*/path:1111", "prefix.docker.io/path:1111"],
    ["prefix.docker.io:1111", "prefix.docker.io:1111/path"],
    ["*.docker.io:1111", "prefix.docker.io:1111/path"]
  ])("TestDockerKeyringForGlob %s finds %s/foo/bar", (key, target) => {
    expect(keyringLookup(`${target}/foo/bar`, [{ key, value: "foo" }])).toEqual(["foo"])
  })

  // TestKeyringMiss: none finds LOOKUP/foo/bar.
  it.each([
    ["https://hello.kubernetes.io", "world.mesos.org/foo/bar"],
    ["https://*.docker.com", "prefix.docker.io"],
    ["https://suffix.*.io", "prefix.docker.io"],
    ["https://prefix.docker.c*", "prefix.docker.io"],
    ["https://prefix.*.io/path:1111", "prefix.docker.io/path/subpath:1111"],
    ["suffix.*.io", "prefix.docker.io"]
  ])("TestKeyringMiss %s misses %s/foo/bar", (key, lookup) => {
    expect(keyringLookup(`${lookup}/foo/bar`, [{ key, value: "foo" }])).toEqual([])
  })

  // TestDockerKeyringLookup: two keys, the deeper one first.
  it.each([
    ["bar.example.com", ["ada"]],
    ["bar.example.com/pong", ["grace", "ada"]],
    ["bar.example.com/ping", ["ada"]],
    ["bar.example.com/pongz", ["grace", "ada"]],
    ["bar.example.com/pong/pang", ["grace", "ada"]],
    ["example.com", []],
    ["foo.example.com", []]
  ])("TestDockerKeyringLookup %s", (image, expected) => {
    const entries = [
      { key: "bar.example.com/pong", value: "grace" },
      { key: "bar.example.com", value: "ada" }
    ]
    expect(keyringLookup(image, entries)).toEqual(expected)
  })

  // TestIssue3797: a key with a scheme and the registry API's path matches by host.
  it.each(["quay.io", "quay.io/foo", "quay.io/foo/bar"])("TestIssue3797 %s", (image) => {
    expect(keyringLookup(image, [{ key: "https://quay.io/v1/", value: "rex" }])).toEqual(["rex"])
  })
})

describe("parsePullSecret: formats", () => {
  it("reads kubernetes.io/dockerconfigjson with username and password", () => {
    const secret = parseOk(
      dockerConfigJson("regcred", {
        auths: { "quay.io": { username: "alice", password: "s3cret", email: "a@example.com" } }
      })
    )
    expect(secret.namespace).toBe("preheat")
    expect(secret.name).toBe("regcred")
    expect(secret.entries).toEqual([{ registry: "quay.io", credential: registryCredential({ username: "alice", password: "s3cret" }) }])
  })

  it("splits auth at the first colon and lets it win over username/password", () => {
    const secret = parseOk(
      dockerConfigJson("regcred", {
        auths: { "quay.io": { username: "ignored", password: "ignored", auth: b64("bob:pa:ss") } }
      })
    )
    expect(secret.entries[0]?.credential).toStrictEqual(registryCredential({ username: "bob", password: "pa:ss" }))
  })

  it("keeps identity and registry tokens", () => {
    const secret = parseOk(
      dockerConfigJson("tokens", {
        auths: { "example.azurecr.io": { identitytoken: "id-token", registrytoken: "reg-token" } }
      })
    )
    expect(secret.entries[0]?.credential).toStrictEqual(registryCredential({ identityToken: "id-token", registryToken: "reg-token" }))
  })

  it("treats empty and null fields as absent, like Go's zero values", () => {
    const secret = parseOk(
      dockerConfigJson("empty", {
        auths: { "quay.io": { username: "u", password: "", auth: null, identitytoken: "" } }
      })
    )
    expect(secret.entries[0]?.credential).toStrictEqual(registryCredential({ username: "u" }))
  })

  it("reads kubernetes.io/dockercfg (registries at the top level)", () => {
    const secret = parseOk(
      dockercfg("legacy", {
        "https://index.docker.io/v1/": { auth: b64("carol:pw") },
        "quay.io": { username: "dave", password: "pw2" }
      })
    )
    expect(secret.entries).toEqual([
      { registry: "https://index.docker.io/v1/", credential: registryCredential({ username: "carol", password: "pw" }) },
      { registry: "quay.io", credential: registryCredential({ username: "dave", password: "pw2" }) }
    ])
  })

  it("takes a Secret as KubeApi returns it", () => {
    const object: KubeObject = {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { namespace: "preheat", name: "from-api" },
      type: "kubernetes.io/dockerconfigjson",
      data: { ".dockerconfigjson": b64(JSON.stringify({ auths: { "quay.io": { auth: b64("u:p") } } })) }
    }
    expect(parseOk(object).entries).toHaveLength(1)
  })

  it("refuses a docker config without auths (a workstation's credsStore): no node has its helper", () => {
    expect(parseError(dockerConfigJson("helpers", { credsStore: "desktop" })).reason).toBe(`.dockerconfigjson has no "auths"`)
  })

  it("takes an empty auths as a config with no credentials", () => {
    expect(parseOk(dockerConfigJson("none", { auths: {} })).entries).toEqual([])
  })

  it("works end to end with credentialsFor", () => {
    const secrets = [
      parseOk(dockercfg("legacy", { "https://index.docker.io/v1/": { auth: b64("hub:pw") } })),
      parseOk(dockerConfigJson("quay", { auths: { "quay.io/org": { username: "org", password: "pw" } } }))
    ]
    expect(usersFor("nginx:1.25", secrets)).toEqual(["hub"])
    expect(usersFor("quay.io/org/app", secrets)).toEqual(["org"])
    expect(usersFor("ghcr.io/x/y", secrets)).toEqual([])
  })
})

describe("parsePullSecret: malformed secrets", () => {
  const secretText = "hunter2-TOPSECRET"
  // A registry key is a URL: its user info, path and query (a token) never show, only its host.
  const registry = `https://robot:${secretText}@private-registry.example.com:5000/v2/?token=${secretText}`
  const entry = `entry "private-registry.example.com:5000"`
  const withData = (type: string, key: string, value: string): SecretLike => ({
    metadata: { namespace: "team", name: "broken" },
    type,
    data: { [key]: value }
  })
  const json = "kubernetes.io/dockerconfigjson"

  const cases: ReadonlyArray<{ readonly problem: string; readonly secret: SecretLike; readonly reason: string }> = [
    {
      problem: "another type",
      secret: { metadata: { namespace: "team", name: "broken" }, type: "Opaque", data: { password: b64(secretText) } },
      reason: `type "Opaque" is not kubernetes.io/dockerconfigjson or kubernetes.io/dockercfg`
    },
    {
      problem: "no type",
      secret: { metadata: { namespace: "team", name: "broken" }, data: {} },
      reason: "type (none) is not kubernetes.io/dockerconfigjson or kubernetes.io/dockercfg"
    },
    {
      problem: "the other format's key",
      secret: withData(json, ".dockercfg", b64(JSON.stringify({ [registry]: { password: secretText } }))),
      reason: `data has no ".dockerconfigjson"`
    },
    {
      problem: "no data",
      secret: { metadata: { namespace: "team", name: "broken" }, type: json },
      reason: `data has no ".dockerconfigjson"`
    },
    {
      problem: "not base64",
      secret: withData(json, ".dockerconfigjson", `{${secretText}}`),
      reason: `data[".dockerconfigjson"] is not base64`
    },
    {
      problem: "not JSON",
      secret: withData(json, ".dockerconfigjson", b64(`{"auths": ${secretText}`)),
      reason: ".dockerconfigjson is not JSON"
    },
    {
      problem: "no auths",
      secret: withData(json, ".dockerconfigjson", b64(JSON.stringify({ [registry]: { auth: b64(`u:${secretText}`) } }))),
      reason: `.dockerconfigjson has no "auths"`
    },
    {
      problem: "an empty registry key",
      secret: withData(json, ".dockerconfigjson", b64(JSON.stringify({ auths: { "": { auth: b64(`u:${secretText}`) } } }))),
      reason: ".dockerconfigjson has an entry with an empty registry key"
    },
    {
      problem: "a registry key without a host",
      secret: withData(
        json,
        ".dockerconfigjson",
        b64(JSON.stringify({ auths: { [`https://u:${secretText}@/v2/`]: { auth: b64("u:p") } } }))
      ),
      reason: ".dockerconfigjson has an entry whose registry key names no host"
    },
    {
      problem: "an empty dockercfg registry key",
      secret: withData("kubernetes.io/dockercfg", ".dockercfg", b64(JSON.stringify({ " ": { username: "u", password: secretText } }))),
      reason: ".dockercfg has an entry with an empty registry key"
    },
    {
      problem: "a JSON array",
      secret: withData(json, ".dockerconfigjson", b64(JSON.stringify([secretText]))),
      reason: ".dockerconfigjson is not a JSON object"
    },
    {
      problem: "auths not an object",
      secret: withData(json, ".dockerconfigjson", b64(JSON.stringify({ auths: secretText }))),
      reason: `"auths" in .dockerconfigjson is not an object`
    },
    {
      problem: "an entry not an object",
      secret: withData(json, ".dockerconfigjson", b64(JSON.stringify({ auths: { [registry]: secretText } }))),
      reason: `${entry} of .dockerconfigjson is not an object`
    },
    {
      problem: "a password that is not a string",
      secret: withData(
        json,
        ".dockerconfigjson",
        b64(JSON.stringify({ auths: { [registry]: { username: secretText, password: 12345 } } }))
      ),
      reason: `${entry} of .dockerconfigjson: "password" is not a string`
    },
    {
      problem: "dockercfg entry not an object",
      secret: withData("kubernetes.io/dockercfg", ".dockercfg", b64(JSON.stringify({ [registry]: [secretText] }))),
      reason: `${entry} of .dockercfg is not an object`
    },
    {
      problem: "auth not base64",
      secret: withData(json, ".dockerconfigjson", b64(JSON.stringify({ auths: { [registry]: { auth: `${secretText}!` } } }))),
      reason: `${entry} of .dockerconfigjson: "auth" is not base64 of username:password`
    },
    {
      problem: "auth not base64, under a key whose user info holds a slash (its host cannot be told apart: not named)",
      secret: withData(
        json,
        ".dockerconfigjson",
        b64(JSON.stringify({ auths: { [`https://robot:${secretText}/x@private-registry.example.com`]: { auth: "!" } } }))
      ),
      reason: `an entry of .dockerconfigjson: "auth" is not base64 of username:password`
    },
    {
      problem: "auth without a colon",
      secret: withData(json, ".dockerconfigjson", b64(JSON.stringify({ auths: { [registry]: { auth: b64(secretText) } } }))),
      reason: `${entry} of .dockerconfigjson: "auth" is not base64 of username:password`
    }
  ]

  it.each(cases)("$problem", ({ secret, reason }) => {
    const error = parseError(secret)
    expect(error).toBeInstanceOf(InvalidPullSecret)
    expect(error._tag).toBe("InvalidPullSecret")
    expect(error.namespace).toBe("team")
    expect(error.name).toBe("broken")
    expect(error.reason).toBe(reason)
    expect(error.message).toBe(`pull secret team/broken is unusable: ${reason}`)
    const dataKey = { [json]: ".dockerconfigjson", "kubernetes.io/dockercfg": ".dockercfg" }[String(secret.type)]
    expect(error.key).toBe(dataKey)
    for (const text of [String(error), JSON.stringify(error), inspect(error), Formatter.format(error)]) {
      expect(text).not.toContain(secretText)
      expect(text).not.toContain(b64(secretText))
      expect(text).not.toContain(registry)
      expect(text).not.toContain("12345")
    }
  })
})

describe("credentials never print", () => {
  const renderings = (value: unknown): ReadonlyArray<string> => [
    String(value),
    `${value}`,
    JSON.stringify(value),
    JSON.stringify({ nested: [value] }),
    inspect(value, { depth: 10, showHidden: true }),
    inspect({ nested: [value] }, { depth: 10 }),
    Formatter.format(value),
    Formatter.formatJson(value)
  ]

  const reference = parseOk(dockerConfigJson("s", { auths: { "r.example.com": { username: "u", password: "p" } } }))
  const referenceRenderings = {
    credential: renderings(reference.entries[0]?.credential),
    secret: renderings(reference)
  }

  it("prints <redacted>", () => {
    expect(String(reference.entries[0]?.credential)).toBe("<redacted>")
    expect(JSON.stringify(reference.entries[0]?.credential)).toBe(`"<redacted>"`)
    expect(inspect(reference.entries[0]?.credential)).toBe("<redacted>")
    expect(String(reference)).toBe("ParsedSecret(preheat/s: <redacted>)")
  })

  const credentialArbitrary = fc.record({
    registry: fc.constantFrom("quay.io", "https://index.docker.io/v1/", "localhost:5000", "*.example.com"),
    username: fc.string({ minLength: 1 }).filter((s) => !s.includes(":")),
    password: fc.string({ minLength: 1 }),
    identitytoken: fc.option(fc.string({ minLength: 1 }), { nil: undefined }),
    useAuth: fc.boolean(),
    format: fc.constantFrom("dockerconfigjson" as const, "dockercfg" as const)
  })

  it("renders the same whatever the content, so no content can show (fast-check)", () => {
    fc.assert(
      fc.property(credentialArbitrary, ({ registry, username, password, identitytoken, useAuth, format }) => {
        const auth = b64(`${username}:${password}`)
        const entry = {
          ...(useAuth ? { auth } : { username, password }),
          ...(identitytoken === undefined ? {} : { identitytoken })
        }
        const secret = parseOk(
          format === "dockerconfigjson" ? dockerConfigJson("s", { auths: { [registry]: entry } }) : dockercfg("s", { [registry]: entry })
        )
        const credential = secret.entries[0]?.credential
        expect(credential?.password).toBe(password)
        const [sourced] = credentialsFor(
          registry === "*.example.com"
            ? "a.example.com/x"
            : registry === "localhost:5000"
              ? "localhost:5000/x"
              : registry === "quay.io"
                ? "quay.io/x"
                : "nginx",
          [secret]
        )
        expect(renderings(credential)).toEqual(referenceRenderings.credential)
        expect(renderings(sourced?.credential)).toEqual(referenceRenderings.credential)
        expect(renderings(secret)).toEqual(referenceRenderings.secret)
        // And directly: neither the password nor the auth string appears, unless it is a piece of
        // the fixed rendering itself (a password of "red" is inside "<redacted>").
        const fixed = [...referenceRenderings.credential, ...referenceRenderings.secret].join("\n")
        for (const text of [...renderings(credential), ...renderings(secret)]) {
          for (const secretValue of [password, auth, identitytoken]) {
            if (secretValue !== undefined && !fixed.includes(secretValue)) expect(text).not.toContain(secretValue)
          }
        }
      }),
      { numRuns: 300 }
    )
  })
})
