// The plugin protocol against the kubelet's tests (plugin_test.go Test_encodeRequest,
// Test_decodeResponse), and the problems a bad answer gives, which never quote it.
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { providerApiVersions } from "../../src/cri/credentialProvider/config.ts"
import { decodeResponse, encodeRequest } from "../../src/cri/credentialProvider/response.ts"

const usersOf = (stdout: string, apiVersion: (typeof providerApiVersions)[number]) =>
  Result.map(decodeResponse(stdout, apiVersion), (r) => ({
    cacheKeyType: r.cacheKeyType,
    cacheMillis: r.cacheMillis,
    auth: r.auth.map(({ key, credential }) => [key, credential.username, credential.password])
  }))

describe("Test_encodeRequest", () => {
  it.each(providerApiVersions)("%s: the kubelet's bytes", (apiVersion) => {
    expect(encodeRequest(apiVersion, "test.registry.io/foobar")).toBe(
      `{"kind":"CredentialProviderRequest","apiVersion":"${apiVersion}","image":"test.registry.io/foobar"}\n`
    )
  })
})

describe("Test_decodeResponse", () => {
  it.each(providerApiVersions)("success with %s", (apiVersion) => {
    const data = `{"kind":"CredentialProviderResponse","apiVersion":"${apiVersion}","cacheKeyType":"Registry","cacheDuration":"1m","auth":{"*.registry.io":{"username":"user","password":"password"}}}`
    expect(usersOf(data, apiVersion)).toEqual(
      Result.succeed({ cacheKeyType: "Registry", cacheMillis: 60_000, auth: [["*.registry.io", "user", "password"]] })
    )
  })

  it("no cacheDuration: the provider's default (undefined here); no auth: no credentials", () => {
    const data = `{"kind":"CredentialProviderResponse","apiVersion":"credentialprovider.kubelet.k8s.io/v1","cacheKeyType":"Image"}`
    expect(usersOf(data, "credentialprovider.kubelet.k8s.io/v1")).toEqual(
      Result.succeed({ cacheKeyType: "Image", cacheMillis: undefined, auth: [] })
    )
  })

  const v1 = "credentialprovider.kubelet.k8s.io/v1"
  const secret = "hunter2-do-not-print"
  it.each([
    [
      "wrong Kind",
      `{"kind":"WrongKind","apiVersion":"${v1}","cacheKeyType":"Registry"}`,
      "printed JSON that is not a CredentialProviderResponse"
    ],
    [
      "wrong Group",
      `{"kind":"CredentialProviderResponse","apiVersion":"foobar.kubelet.k8s.io/v1alpha1","cacheKeyType":"Registry"}`,
      `answered with another apiVersion where the config asks for ${v1}`
    ],
    ["not JSON", `user ${secret}`, "printed something that is not JSON"],
    [
      "an unknown field",
      `{"kind":"CredentialProviderResponse","apiVersion":"${v1}","cacheKeyType":"Registry","${secret}":1}`,
      "printed a CredentialProviderResponse that does not decode (an unknown field, or a value of the wrong type)"
    ],
    [
      "a password that is no string",
      `{"kind":"CredentialProviderResponse","apiVersion":"${v1}","cacheKeyType":"Registry","auth":{"r.io":{"username":"u","password":7}}}`,
      "printed a CredentialProviderResponse that does not decode (an unknown field, or a value of the wrong type)"
    ],
    [
      "no cacheKeyType",
      `{"kind":"CredentialProviderResponse","apiVersion":"${v1}"}`,
      "did not return a valid cacheKeyType (Image, Registry or Global)"
    ],
    [
      "a bad cacheDuration",
      `{"kind":"CredentialProviderResponse","apiVersion":"${v1}","cacheKeyType":"Global","cacheDuration":"${secret}"}`,
      "returned a cacheDuration that is not a duration"
    ],
    [
      "serviceAccountTokenCacheType before v1",
      `{"kind":"CredentialProviderResponse","apiVersion":"credentialprovider.kubelet.k8s.io/v1beta1","cacheKeyType":"Global","serviceAccountTokenCacheType":"Pod"}`,
      "printed a CredentialProviderResponse with an unknown field"
    ]
  ])("%s", (_, data, problem) => {
    const apiVersion = data.includes("v1beta1") ? "credentialprovider.kubelet.k8s.io/v1beta1" : v1
    expect(decodeResponse(data, apiVersion)).toEqual(Result.fail(problem))
    expect(problem).not.toContain(secret)
  })
})
