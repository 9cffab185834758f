// The CredentialProviderConfig against the kubelet's own tests (pkg/credentialprovider/plugin
// config_test.go: Test_readCredentialProviderConfig, Test_validateCredentialProviderConfig), case
// for case, plus the places a problem names (file, provider, field).
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { stringify } from "yaml"
import {
  type CredentialProviderConfig,
  decodeCredentialProviderConfig,
  InvalidCredentialProviderConfig
} from "../../src/cri/credentialProvider/config.ts"
import { matchImageProblem } from "../../src/cri/credentialProvider/matchImageSyntax.ts"

const file = "/etc/kubernetes/credential-providers.yaml"

const decode = (text: string, path = file) => decodeCredentialProviderConfig([{ path, text }])

const ok = (text: string): CredentialProviderConfig => {
  const result = decode(text)
  if (Result.isFailure(result)) throw new Error(`expected a valid config: ${result.failure.message}`)
  return result.success
}

const error = (text: string): string => {
  const result = decode(text)
  if (Result.isSuccess(result)) throw new Error("expected an invalid config")
  expect(result.failure).toBeInstanceOf(InvalidCredentialProviderConfig)
  return result.failure.message
}

const yamlConfig = (version: string, providers: ReadonlyArray<Record<string, unknown>>) =>
  stringify({ kind: "CredentialProviderConfig", apiVersion: `kubelet.config.k8s.io/${version}`, providers })

const provider = (fields: Record<string, unknown> = {}) => ({
  name: "foobar",
  matchImages: ["foobar.registry.io"],
  defaultCacheDuration: "1m",
  apiVersion: "credentialprovider.kubelet.k8s.io/v1alpha1",
  ...fields
})

describe("Test_readCredentialProviderConfig", () => {
  const test = {
    name: "test",
    matchImages: ["registry.io/foobar"],
    defaultCacheMillis: 600_000,
    apiVersion: "credentialprovider.kubelet.k8s.io/v1alpha1",
    args: ["--v=5"],
    env: [{ name: "FOO", value: "BAR" }],
    tokenAttributes: undefined
  }

  it("config with 1 plugin and 1 image matcher", () => {
    expect(
      ok(`---
kind: CredentialProviderConfig
apiVersion: kubelet.config.k8s.io/v1alpha1
providers:
  - name: test
    matchImages:
    - "registry.io/foobar"
    defaultCacheDuration: 10m
    apiVersion: credentialprovider.kubelet.k8s.io/v1alpha1
    args:
    - --v=5
    env:
    - name: FOO
      value: BAR`)
    ).toEqual({ providers: [test] })
  })

  it("config with 1 plugin and 1 image matcher (JSON!)", () => {
    expect(
      ok(`{
        "kind": "CredentialProviderConfig",
        "apiVersion": "kubelet.config.k8s.io/v1alpha1",
        "providers": [{"name": "test", "matchImages": ["registry.io/foobar"], "defaultCacheDuration": "10m",
          "apiVersion": "credentialprovider.kubelet.k8s.io/v1alpha1", "args": ["--v=5"], "env": [{"name": "FOO", "value": "BAR"}]}]
      }`)
    ).toEqual({ providers: [test] })
  })

  it("config with 1 plugin and a wildcard image match, and with multiple image matchers", () => {
    expect(ok(yamlConfig("v1alpha1", [provider({ matchImages: ["registry.io/*"] })])).providers[0]?.matchImages).toEqual(["registry.io/*"])
    expect(
      ok(yamlConfig("v1alpha1", [provider({ matchImages: ["registry.io/*", "foobar.registry.io/*"] })])).providers[0]?.matchImages
    ).toEqual(["registry.io/*", "foobar.registry.io/*"])
  })

  it.each(["v1alpha1", "v1beta1", "v1"])("%s config with multiple providers", (version) => {
    const apiVersion = `credentialprovider.kubelet.k8s.io/${version}`
    const config = ok(
      yamlConfig(version, [
        { name: "test1", matchImages: ["registry.io/one"], defaultCacheDuration: "10m", apiVersion },
        {
          name: "test2",
          matchImages: ["registry.io/two"],
          defaultCacheDuration: "10m",
          apiVersion,
          args: ["--v=5"],
          env: [{ name: "FOO", value: "BAR" }]
        }
      ])
    )
    expect(config.providers.map((p) => [p.name, p.apiVersion, p.args, p.env])).toEqual([
      ["test1", apiVersion, [], []],
      ["test2", apiVersion, ["--v=5"], [{ name: "FOO", value: "BAR" }]]
    ])
  })

  it("config with wrong Kind", () => {
    expect(error(stringify({ kind: "WrongKind", apiVersion: "kubelet.config.k8s.io/v1alpha1", providers: [provider()] }))).toContain(
      'no kind "WrongKind" is registered for version "kubelet.config.k8s.io/v1alpha1"'
    )
  })

  it("config with wrong apiversion", () => {
    expect(error(stringify({ kind: "CredentialProviderConfig", apiVersion: "foobar/v1alpha1", providers: [provider()] }))).toContain(
      'no kind "CredentialProviderConfig" is registered for version "foobar/v1alpha1"'
    )
  })

  it("config with invalid typo: strict decoding", () => {
    expect(error(yamlConfig("v1", [provider({ unknownField: "should not be here" })]))).toBe(
      `invalid credential provider config: ${file}: provider "foobar" (providers[0]): unknownField: unknown field`
    )
  })

  it.each(["v1alpha1", "v1beta1"])("%s config with token attributes should fail", (version) => {
    expect(error(yamlConfig(version, [provider({ tokenAttributes: { serviceAccountTokenAudience: "audience" } })]))).toContain(
      'provider "foobar" (providers[0]): tokenAttributes: unknown field'
    )
  })

  it("directory with multiple config files in lexicographic order, mixed versions, YAML and JSON", () => {
    const result = decodeCredentialProviderConfig([
      { path: "/d/a.yaml", text: yamlConfig("v1beta1", [provider({ name: "test-beta" })]) },
      {
        path: "/d/b.json",
        text: JSON.stringify({
          kind: "CredentialProviderConfig",
          apiVersion: "kubelet.config.k8s.io/v1",
          providers: [provider({ name: "test-v1" })]
        })
      }
    ])
    expect(Result.map(result, (c) => c.providers.map((p) => p.name))).toEqual(Result.succeed(["test-beta", "test-v1"]))
  })

  it("directory with duplicate provider names, throw error (naming the second file)", () => {
    const result = decodeCredentialProviderConfig([
      { path: "/d/a.yaml", text: yamlConfig("v1", [provider({ name: "duplicate" })]) },
      { path: "/d/b.yaml", text: yamlConfig("v1", [provider({ name: "duplicate" })]) }
    ])
    expect(Result.isFailure(result) && result.failure.message).toBe(
      'invalid credential provider config: /d/b.yaml: provider "duplicate" (providers[0]): name: Duplicate value: "duplicate"'
    )
  })

  it("directory with one invalid config file", () => {
    const result = decodeCredentialProviderConfig([
      { path: "/d/a.yaml", text: yamlConfig("v1", [provider()]) },
      { path: "/d/b.yaml", text: stringify({ kind: "WrongKind", apiVersion: "kubelet.config.k8s.io/v1", providers: [provider()] }) }
    ])
    expect(Result.isFailure(result) && result.failure.message).toBe(
      'invalid credential provider config: /d/b.yaml: no kind "WrongKind" is registered for version "kubelet.config.k8s.io/v1"'
    )
  })

  it("neither YAML nor JSON: said with its position, the text not quoted", () => {
    const message = error('kind: CredentialProviderConfig\nproviders: [{"name": "x", env: [{value: "hunter2"')
    expect(message).toMatch(
      /^invalid credential provider config: \/etc\/kubernetes\/credential-providers.yaml: not YAML or JSON \(\w+ at line \d+, column \d+\)/
    )
    expect(message).not.toContain("hunter2")
  })
})

describe("Test_validateCredentialProviderConfig", () => {
  const cases: ReadonlyArray<readonly [string, ReadonlyArray<Record<string, unknown>>, string]> = [
    ["no providers provided", [], "providers: Required value: at least 1 item in plugins is required"],
    ["no matchImages provided", [provider({ matchImages: [] })], "matchImages: Required value: at least 1 item in matchImages is required"],
    ["no default cache duration provided", [provider({ defaultCacheDuration: undefined })], "defaultCacheDuration: Required value"],
    ["name contains '/'", [provider({ name: "foo/../bar" })], `name: Invalid value: "foo/../bar": provider name cannot contain '/'`],
    ["name is '.'", [provider({ name: "." })], `name: Invalid value: ".": provider name cannot be '.'`],
    ["name is '..'", [provider({ name: ".." })], `name: Invalid value: "..": provider name cannot be '..'`],
    ["name contains spaces", [provider({ name: "foo bar" })], `name: Invalid value: "foo bar": provider name cannot contain spaces`],
    ["duplicate names", [provider(), provider({ matchImages: ["bar.registry.io"] })], `name: Duplicate value: "foobar"`],
    ["no apiVersion", [provider({ apiVersion: "" })], "apiVersion: Required value"],
    [
      "invalid apiVersion",
      [provider({ apiVersion: "credentialprovider.kubelet.k8s.io/v1alpha0" })],
      `apiVersion: Unsupported value: "credentialprovider.kubelet.k8s.io/v1alpha0": supported values: "credentialprovider.kubelet.k8s.io/v1", "credentialprovider.kubelet.k8s.io/v1alpha1", "credentialprovider.kubelet.k8s.io/v1beta1"`
    ],
    [
      "negative default cache duration",
      [provider({ defaultCacheDuration: "-1m" })],
      `defaultCacheDuration: Invalid value: "-1m": defaultCacheDuration must be greater than or equal to 0`
    ],
    [
      "invalid match image",
      [provider({ matchImages: ["%invalid%"] })],
      `matchImages[0]: Invalid value: "%invalid%": match image is invalid: parse "https://%invalid%": invalid URL escape "%in"`
    ],
    [
      "token attributes not nil but empty ServiceAccountTokenAudience",
      [
        provider({
          apiVersion: "credentialprovider.kubelet.k8s.io/v1",
          tokenAttributes: { requireServiceAccount: true, cacheType: "Token" }
        })
      ],
      "tokenAttributes.serviceAccountTokenAudience: Required value"
    ],
    [
      "token attributes not nil but empty ServiceAccountTokenRequired",
      [
        provider({
          apiVersion: "credentialprovider.kubelet.k8s.io/v1",
          tokenAttributes: { serviceAccountTokenAudience: "audience", cacheType: "Token" }
        })
      ],
      "tokenAttributes.requireServiceAccount: Required value"
    ],
    [
      "required service account annotation keys not qualified name",
      [
        provider({
          apiVersion: "credentialprovider.kubelet.k8s.io/v1",
          tokenAttributes: {
            serviceAccountTokenAudience: "audience",
            requireServiceAccount: true,
            cacheType: "Token",
            requiredServiceAccountAnnotationKeys: ["cantendwithadash-", "now-with-dashes/simple"]
          }
        })
      ],
      `tokenAttributes.requiredServiceAccountAnnotationKeys: Invalid value: "cantendwithadash-": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`
    ],
    [
      "token attributes with a provider apiVersion other than v1",
      [provider({ tokenAttributes: { serviceAccountTokenAudience: "a", requireServiceAccount: true, cacheType: "Token" } })],
      "tokenAttributes: Forbidden: tokenAttributes is only supported for credentialprovider.kubelet.k8s.io/v1 API version"
    ],
    [
      "requireServiceAccount false with required annotation keys",
      [
        provider({
          apiVersion: "credentialprovider.kubelet.k8s.io/v1",
          tokenAttributes: {
            serviceAccountTokenAudience: "a",
            requireServiceAccount: false,
            cacheType: "Token",
            requiredServiceAccountAnnotationKeys: ["a.io/b"]
          }
        })
      ],
      "tokenAttributes.requiredServiceAccountAnnotationKeys: Forbidden: requireServiceAccount cannot be false when requiredServiceAccountAnnotationKeys is set"
    ],
    [
      "no cacheType",
      [
        provider({
          apiVersion: "credentialprovider.kubelet.k8s.io/v1",
          tokenAttributes: { serviceAccountTokenAudience: "a", requireServiceAccount: true }
        })
      ],
      "tokenAttributes.cacheType: Required value: cacheType is required to be set when tokenAttributes is specified. Supported values are: ServiceAccount, Token"
    ]
  ]

  it.each(cases)("%s", (_, providers, expected) => {
    expect(error(yamlConfig("v1", providers))).toContain(expected)
  })

  it("valid config, and one with tokenAttributes", () => {
    expect(ok(yamlConfig("v1", [provider()])).providers).toHaveLength(1)
    const withToken = ok(
      yamlConfig("v1", [
        provider({
          apiVersion: "credentialprovider.kubelet.k8s.io/v1",
          tokenAttributes: { serviceAccountTokenAudience: "aud", requireServiceAccount: true, cacheType: "ServiceAccount" }
        })
      ])
    )
    expect(withToken.providers[0]?.tokenAttributes).toEqual({ serviceAccountTokenAudience: "aud", requireServiceAccount: true })
  })

  it("names the file, the provider and the field of every problem at once, never an env value", () => {
    const message = error(
      yamlConfig("v1", [
        provider({ name: "ecr", env: [{ name: "AWS_SECRET", value: "hunter2" }] }),
        provider({ name: "acr/x", matchImages: ["ok.io", "bad host.io"], defaultCacheDuration: "soon" })
      ])
    )
    expect(message).toBe(
      `invalid credential provider config: ${file}: provider "acr/x" (providers[1]): name: Invalid value: "acr/x": provider name cannot contain '/'; ` +
        `${file}: provider "acr/x" (providers[1]): matchImages[1]: Invalid value: "bad host.io": match image is invalid: parse "https://bad host.io": invalid character " " in host name; ` +
        `${file}: provider "acr/x" (providers[1]): defaultCacheDuration: Invalid value: "soon": time: invalid duration "soon"`
    )
    expect(message).not.toContain("hunter2")
  })
})

describe("matchImages syntax: what Go's url.Parse refuses", () => {
  it.each([
    ["%invalid%", 'parse "https://%invalid%": invalid URL escape "%in"'],
    ["registry.io:port", 'parse "https://registry.io:port": invalid port ":port" after host'],
    ["[::1", `parse "https://[::1": missing ']' in host`],
    ["reg istry.io", 'parse "https://reg istry.io": invalid character " " in host name'],
    ["registry.io/path%zz", 'parse "https://registry.io/path%zz": invalid URL escape "%zz"'],
    ["tab\there", 'parse "https://tab\\there": net/url: invalid control character in URL']
  ])("%j", (pattern, expected) => {
    expect(matchImageProblem(pattern)).toBe(expected)
  })

  it.each([
    "registry.io",
    "*.azurecr.io",
    "*.*.registry.io",
    "registry.io:8080/path",
    "123456789.dkr.ecr.us-east-1.amazonaws.com",
    "registry.io/*",
    "[::1]:5000/x",
    "reg-[a-c].example.com",
    "k8s.*"
  ])("%j is accepted", (pattern) => {
    expect(matchImageProblem(pattern)).toBeUndefined()
  })
})
