import { Option, Result } from "effect"
import { Flag } from "effect/cli"
import { parseGoDuration } from "../api/goDuration.ts"
import { defaultMinFreeDisk, parseBytes, parseMinFreeDisk } from "../daemon/minFreeDisk.ts"
import { validateDns1123Label } from "../api/objectNames.ts"
import { kubeletDefaultMaxImages } from "../api/nodeStatusImages.ts"

/** A string flag with its help text. */
export const text = (name: string, description: string) => Flag.String(name).pipe(Flag.withDescription(description))

/** `--kubeconfig` and `--context`, as every command that talks to the API server takes them (loadKubeConfig's order). */
export const kubeconfigFlags = {
  kubeconfig: text("kubeconfig", "Kubeconfig file; default: $KUBECONFIG, the in-cluster service account, ~/.kube/config.").pipe(
    Flag.optional
  ),
  context: text("context", "Kubeconfig context to use instead of its current-context.").pipe(Flag.optional)
}

/** The kubeconfig to load, from `kubeconfigFlags`. */
export const kubeconfigSource = (flags: {
  readonly kubeconfig: Option.Option<string>
  readonly context: Option.Option<string>
}): { readonly kubeconfig: string | undefined; readonly context: string | undefined } => ({
  kubeconfig: Option.getOrUndefined(flags.kubeconfig),
  context: Option.getOrUndefined(flags.context)
})

/** `-n`/`--namespace` of a command that reads namespaced objects, as kubectl's. */
export const namespaceFlag = (what: string) =>
  text("namespace", `Namespace of ${what}; default: the kubeconfig context's, else default.`).pipe(Flag.withAlias("n"), Flag.optional)

/** As kubectl: -n, else the namespace of the kubeconfig's current context, else default. */
export const namespaceOf = (
  flag: Option.Option<string>,
  config: { getCurrentContext(): string; getContextObject(name: string): { readonly namespace?: string } | null }
): string => Option.getOrElse(flag, () => config.getContextObject(config.getCurrentContext())?.namespace ?? "default")

/** An integer flag whose help text names its default. */
export const integer = (name: string, description: string, fallback: number) =>
  Flag.Int(name).pipe(Flag.withDescription(`${description} (default ${fallback})`), Flag.withDefault(fallback))

/**
 * A TCP port to listen on, checked as it is parsed: out of range it stops the command with a
 * sentence naming the flag, where node:net would throw a RangeError with a stack at the listen.
 */
export const portNumber = () =>
  Flag.filterMap(
    (port: number) => (port >= 0 && port <= 65535 ? Option.some(port) : Option.none()),
    () => "a port from 0 (a free one) to 65535"
  )

/** A port flag whose help text names its default. */
export const port = (name: string, description: string, fallback: number) => integer(name, description, fallback).pipe(portNumber())

/** `--min-free-disk`, checked as it is parsed: a bad value stops the command with parseMinFreeDisk's sentence. */
export const minFreeDiskFlag = Flag.String("min-free-disk").pipe(
  Flag.withDescription(
    "Free room the runtime's image filesystem must have before a pull starts, in bytes (5Gi, 500M) or as a share of " +
      `it (10%); below it the tag fails with InsufficientDisk instead of pulling. 0 turns the check off (default ${defaultMinFreeDisk.text})`
  ),
  Flag.withDefault(defaultMinFreeDisk.text),
  Flag.filterMap(
    (value) => Result.getSuccess(parseMinFreeDisk(value)),
    (value) => Result.match(parseMinFreeDisk(value), { onFailure: (problem) => problem, onSuccess: () => "" })
  )
)

/** A duration as Go writes one (90s, 2m, 1m30s), not negative: milliseconds. */
export const parseTimeout = (text: string): number | undefined => {
  const millis = parseGoDuration(text.trim())
  return millis === undefined || millis < 0 ? undefined : millis
}

/** A duration flag (Go's form), in milliseconds; a bad value stops the command saying what is expected. */
const durationFlag = (name: string, description: string, fallback: string, expected: string) =>
  Flag.String(name).pipe(
    Flag.withDescription(`${description} (default ${fallback})`),
    Flag.withDefault(fallback),
    Flag.filterMap(
      (value) => Option.fromUndefinedOr(parseTimeout(value)),
      () => expected
    )
  )

/** `--pull-progress-timeout` (src/daemon/stallClock.ts). */
export const pullProgressTimeoutFlag = durationFlag(
  "pull-progress-timeout",
  "Fail a pull attempt with PullStalled, retried within backoffLimit, when its byte count has not moved for this long while " +
    "the runtime awaits bytes from the registry (a duration: 90s, 2m); unpacking after the last byte does not count, and " +
    "runtimes that show no byte progress are not watched. 0 turns it off",
  "2m",
  "a duration such as 90s, 2m or 1m30s (0 turns it off)"
)

/**
 * `--unreported-grace`: how long the kubelet is given to list a pulled image in its Node's
 * status.images before the tag is marked unreported (src/daemon/unreportedTags.ts).
 */
export const unreportedGraceFlag = durationFlag(
  "unreported-grace",
  "How long after a tag succeeded the node's kubelet is given to list its image in the Node's status.images before the " +
    "tag is marked unreported (a duration: 90s, 5m); the kubelet lists the images it found within 30 s and writes its status " +
    "every 10 s (nodeStatusUpdateFrequency): raise it with that",
  "2m",
  "a duration such as 90s, 2m or 1m30s"
)

/** `--eraser-exclusion-namespace` (controller, dev): a namespace name, checked as it is parsed. */
export const eraserExclusionNamespaceFlag = Flag.String("eraser-exclusion-namespace").pipe(
  Flag.withDescription(
    "Namespace eraser (eraser-dev/eraser) reads its exclusion lists from, its own (eraser-system): the controller keeps the " +
      "ConfigMap preheat-excluded-images there, labelled eraser.sh/exclude.list=true, listing the images Never jobs keep warm, " +
      "so that eraser does not remove them (default: none kept; RBAC: deploy/components/eraser)."
  ),
  Flag.filterMap(
    (value) => (validateDns1123Label(value).length === 0 ? Option.some(value) : Option.none()),
    (value) => `a namespace name is a DNS-1123 label: ${validateDns1123Label(value).join("; ")}`
  ),
  Flag.optional
)

/** `--node-status-max-images` (daemon, dev): the kubelet's nodeStatusMaxImages, -1 or more. */
export const nodeStatusMaxImagesFlag = Flag.Int("node-status-max-images").pipe(
  Flag.withDescription(
    "The kubelet's nodeStatusMaxImages: a Node listing this many images in its status may leave smaller ones out, " +
      "and a succeeded tag whose image it leaves out is marked unreported (its jobs get the condition ImageUnreported); " +
      `-1 (no limit) or 0 (no list) turns that off (default ${kubeletDefaultMaxImages}, the kubelet's)`
  ),
  Flag.withDefault(kubeletDefaultMaxImages),
  Flag.filterMap(
    (value) => (value >= -1 ? Option.some(value) : Option.none()),
    () => "-1 (no limit), 0 or a positive count, as the kubelet's nodeStatusMaxImages"
  )
)

/** A size in bytes written as a Kubernetes quantity (100Gi, 500M), whose help text names its default. */
export const bytesFlag = (name: string, description: string, fallback: string) =>
  Flag.String(name).pipe(
    Flag.withDescription(`${description} (default ${fallback})`),
    Flag.withDefault(fallback),
    Flag.filterMap(
      (value) => Option.fromUndefinedOr(parseBytes(value)),
      () => "bytes as a Kubernetes quantity (such as 100Gi, 500M or 1000000000)"
    )
  )

/** `--image-credential-provider-config` (the kubelet's name; OpenKruise's daemon calls it --plugin-config-file). */
export const credentialProviderConfigFlag = text(
  "image-credential-provider-config",
  "The kubelet's CredentialProviderConfig (kubelet.config.k8s.io v1, v1beta1 or v1alpha1; YAML or JSON; a file, or a " +
    "directory of *.yaml, *.yml and *.json): the plugins are asked for credentials of the images they match, as the kubelet " +
    "asks them, after the job's pull secrets. Default: none (pull secrets only). --plugin-config-file is OpenKruise's name for it."
).pipe(Flag.withAlias("plugin-config-file"), Flag.optional)

/** `--image-credential-provider-bin-dir` (OpenKruise's --plugin-bin-dir). */
export const credentialProviderBinDirFlag = text(
  "image-credential-provider-bin-dir",
  "The directory of the credential provider plugins the config names (the node's, mounted in the pod). " +
    "--plugin-bin-dir is OpenKruise's name for it."
).pipe(Flag.withAlias("plugin-bin-dir"), Flag.optional)

/** A config without its plugins' directory: the kubelet needs both flags too. */
export class MissingBinDir extends Error {
  override readonly message =
    "--image-credential-provider-config needs --image-credential-provider-bin-dir (the directory of the plugins it names)"
}
