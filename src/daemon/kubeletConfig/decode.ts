// What the kubelet's configuration file says of pull-credential verification for preloaded images,
// decoded as the kubelet reads it: the fields of k8s.io/kubelet/config/v1beta1 KubeletConfiguration,
// drop-in files merged over it, its defaults and its validation (pkg/kubelet/apis/config).
import { Result } from "effect"
import { parse as parseYaml } from "yaml"
import { allowlistProblem, type KubeletImageVerification, type KubeletPolicy, kubeletPolicies } from "../../api/kubeletImageVerification.ts"
import { applyMergePatch } from "../../json/mergePatch.ts"

/** One configuration file as read: its path on the node and its text. */
export interface ConfigFile {
  readonly path: string
  readonly text: string
}

const featureGate = "KubeletEnsureSecretPulledImages"
const kind = "KubeletConfiguration"
const apiVersion = "kubelet.config.k8s.io/v1beta1"
const defaultPolicy: KubeletPolicy = "NeverVerifyPreloadedImages"

type Json = Readonly<Record<string, unknown>>

const isObject = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

const unknown = (source: string, message: string): KubeletImageVerification => ({ policy: "Unknown", source, message })

/** A file as a KubeletConfiguration object, or why the kubelet would not take it. */
const documentOf = (file: ConfigFile): Result.Result<Json, string> => {
  let document: unknown
  try {
    // YAML 1.1, as the kubelet's sigs.k8s.io/yaml (go-yaml v2) reads it: `KubeletEnsureSecretPulledImages: no` is false.
    document = parseYaml(file.text, { version: "1.1" })
  } catch (error) {
    return Result.fail(`${file.path} is not YAML or JSON: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`)
  }
  if (document === null || document === undefined) return Result.fail(`${file.path} is empty`)
  if (!isObject(document)) return Result.fail(`${file.path} is not a KubeletConfiguration object`)
  if (document["kind"] !== kind || document["apiVersion"] !== apiVersion) {
    return Result.fail(
      `${file.path} is not a ${kind} of ${apiVersion} (kind ${JSON.stringify(document["kind"] ?? null)}, ` +
        `apiVersion ${JSON.stringify(document["apiVersion"] ?? null)})`
    )
  }
  return Result.succeed(document)
}

/** Whether the feature gate is on: as the file sets it, else off with `AllBeta: false`, else its default from 1.35 (on). */
const gateOn = (gates: Json | undefined): boolean => {
  const own = gates?.[featureGate]
  if (typeof own === "boolean") return own
  return gates?.["AllBeta"] !== false
}

const quoted = (values: ReadonlyArray<string>) => values.map((v) => JSON.stringify(v))

/** The kubelet's words when its validation refuses the file: it does not start with it. */
const refused = (source: string, why: string) => unknown(source, `the kubelet refuses this configuration: ${why}`)

const describeSource = (main: ConfigFile, dropIns: ReadonlyArray<ConfigFile>): string =>
  dropIns.length === 0 ? main.path : `${main.path} with drop-ins ${dropIns.map((f) => f.path).join(", ")}`

/**
 * The verification a kubelet with this configuration applies. `dropIns` are the `--config-dir`
 * files in the kubelet's order (lexical, `.conf` only), each merged over the result so far as a
 * JSON merge patch, as the kubelet merges them (cmd/kubelet/app/server.go mergeKubeletConfigurations).
 *
 * Where the feature gate is not set, it is taken on, as on kubelets from 1.35: a 1.33 or 1.34
 * kubelet has it off (nothing verified, which lets pods start preloaded images just as
 * NeverVerifyPreloadedImages does) and refuses a file that sets the policy without turning it on.
 * Flags on the kubelet's command line (`--feature-gates`) are not seen.
 */
export const verificationOf = (main: ConfigFile, dropIns: ReadonlyArray<ConfigFile> = []): KubeletImageVerification => {
  const source = describeSource(main, dropIns)
  let merged: unknown
  for (const file of [main, ...dropIns]) {
    const document = documentOf(file)
    if (Result.isFailure(document)) return unknown(source, document.failure)
    merged = merged === undefined ? document.success : applyMergePatch(merged, document.success)
  }
  const config = merged as Json
  const gates = config["featureGates"]
  if (gates !== undefined && (!isObject(gates) || Object.values(gates).some((v) => typeof v !== "boolean"))) {
    return unknown(source, "featureGates is not a map of feature names to true or false")
  }
  const policy = config["imagePullCredentialsVerificationPolicy"]
  const allowlist = config["preloadedImagesVerificationAllowlist"]
  if (policy !== undefined && typeof policy !== "string") return unknown(source, "imagePullCredentialsVerificationPolicy is not a string")
  if (allowlist !== undefined && (!Array.isArray(allowlist) || allowlist.some((p) => typeof p !== "string"))) {
    return unknown(source, "preloadedImagesVerificationAllowlist is not a list of strings")
  }
  const patterns = (allowlist ?? []) as ReadonlyArray<string>
  // The kubelet's defaulting leaves an empty policy unset, and its validation treats "" as not set.
  const setPolicy = policy === undefined || policy === "" ? undefined : policy
  if (!gateOn(gates as Json | undefined)) {
    if (setPolicy !== undefined) {
      return refused(source, `\`imagePullCredentialsVerificationPolicy\` must not be set if ${featureGate} feature gate is not enabled`)
    }
    if (patterns.length > 0) {
      return refused(source, `\`preloadedImagesVerificationAllowlist\` must not be set if ${featureGate} feature gate is not enabled`)
    }
    return { policy: "Disabled", source, message: `feature gate ${featureGate} is off: the kubelet verifies no image's credentials` }
  }
  const effective = setPolicy ?? defaultPolicy
  if (!(kubeletPolicies as ReadonlyArray<string>).includes(effective)) {
    return refused(
      source,
      `option ${JSON.stringify(effective)} specified for imagePullCredentialsVerificationPolicy. Valid options are ${quoted(kubeletPolicies).join(", ")}`
    )
  }
  if (patterns.length > 0 && effective !== "NeverVerifyAllowlistedImages") {
    return refused(
      source,
      'can\'t set `preloadedImagesVerificationAllowlist` if `imagePullCredentialsVerificationPolicy` is not "NeverVerifyAllowlistedImages"'
    )
  }
  const problem = allowlistProblem(patterns)
  if (problem !== undefined) return refused(source, `invalid image pattern in \`preloadedImagesVerificationAllowlist\`: ${problem}`)
  return {
    policy: effective as KubeletPolicy,
    ...(effective === "NeverVerifyAllowlistedImages" ? { allowlist: patterns } : {}),
    source,
    ...(setPolicy === undefined
      ? { message: `imagePullCredentialsVerificationPolicy not set: the kubelet's default, ${defaultPolicy}` }
      : {})
  }
}
