import { Schema } from "effect"
import { maxQuotedCharacters } from "./goQuote.ts"
import { quoteCel } from "./goQuoteCel.ts"
import { LabelSelector } from "./labelSelector.ts"
import { labelSelectorRules } from "./labelSelectorCel.ts"
import { pullPolicyConflictCelRule } from "./pullPolicySpelling.ts"
import { described, maxInt32, NonNegativeInt32, PositiveInt32, PositiveInt64, StringMap, withDefault, withOpenApi } from "./schemaExtras.ts"

/** Upstream's defaults (SPEC §1); the CRD carries them too, so the API server applies them. */
export const defaultTimeoutSeconds = 600
export const defaultBackoffLimit = 3
const defaultParallelism = 1
/**
 * Bounds the API server's CEL cost estimate needs (see test/api/celCost.test.ts): the duplicate
 * check is quadratic, so 256 names of up to 253 characters stay within one rule's budget.
 */
export const maxNodeNames = 256

export const parallelismMessage = "parallelism must be a non-negative integer or a percentage from 0% to 100%"

export const completionPolicyTypes = ["Always", "Never"] as const
export const imagePullPolicies = ["Always", "IfNotPresent"] as const
export type ImagePullPolicy = (typeof imagePullPolicies)[number]

// Any integer decodes: validation reports a negative one, or one above int32, with the same message the CRD rule gives.
export const Parallelism = Schema.Union([Schema.Int, Schema.String]).pipe(
  withOpenApi({
    "x-kubernetes-int-or-string": true,
    "x-kubernetes-validations": [
      {
        rule: `type(self) == int ? self >= 0 && self <= ${maxInt32} : self.matches('^([0-9]|[1-9][0-9]|100)%$') || self.matches('^[0-9]{1,9}$')`,
        message: parallelismMessage
      }
    ]
  }),
  described(
    'The maximal number of nodes pulling this image at the same time: an integer (also as a string, "4"), ' +
      'or a percentage of the desired nodes ("25%", rounded up). 0 pauses the job. Defaults to 1.'
  )
)
export type Parallelism = typeof Parallelism.Type

export const ImagePullJobNodeSelector = Schema.Struct({
  names: Schema.optionalKey(
    Schema.Array(Schema.String.pipe(withOpenApi({ maxLength: 253 }))).pipe(
      withOpenApi({
        maxItems: maxNodeNames,
        "x-kubernetes-validations": [
          {
            rule: "self.all(n, self.exists_one(m, m == n))",
            message: "duplicated name in selector names"
          }
        ]
      }),
      described("Names of the nodes to pull on, in this order. Cannot be combined with a label selector.")
    )
  ),
  ...LabelSelector.fields
}).pipe(
  withOpenApi({
    // Replaced whole by server-side apply, as in upstream's CRDs.
    "x-kubernetes-map-type": "atomic",
    "x-kubernetes-validations": [
      {
        rule:
          "!(has(self.names) && size(self.names) > 0 && " +
          "((has(self.matchLabels) && size(self.matchLabels) > 0) || " +
          "(has(self.matchExpressions) && size(self.matchExpressions) > 0)))",
        message: "can not set both names and labelSelector in this spec.selector"
      }
    ]
  }),
  described("Which nodes to pull on: a list of names or a label selector (not both). Absent or empty: all nodes.")
)
export type ImagePullJobNodeSelector = typeof ImagePullJobNodeSelector.Type

const CompletionPolicy = Schema.Struct({
  type: Schema.String.pipe(
    // A rule rather than an enum, so the API server refuses in upstream's words.
    withOpenApi({
      maxLength: 64,
      "x-kubernetes-validations": [
        {
          rule: `self in [${completionPolicyTypes.map((t) => `'${t}'`).join(", ")}]`,
          messageExpression: `'unknown type of completionPolicy: ' + ${quoteCel("self", maxQuotedCharacters)}`
        }
      ]
    }),
    described(
      "Always: the job runs once and completes when every node succeeded or failed. " +
        "Never: the job never completes, re-pulls about once a day and covers new nodes. Defaults to Always."
    ),
    withDefault("Always")
  ),
  activeDeadlineSeconds: Schema.optionalKey(
    PositiveInt64.pipe(described("Deadline in seconds from the job's start; unfinished nodes then count as failed. Always only."))
  ),
  ttlSecondsAfterFinished: Schema.optionalKey(
    NonNegativeInt32.pipe(described("Seconds after completion when the job is deleted. Always only."))
  )
}).pipe(
  withOpenApi({
    "x-kubernetes-validations": [
      {
        rule: "!has(self.type) || self.type == 'Always' || (!has(self.activeDeadlineSeconds) && !has(self.ttlSecondsAfterFinished))",
        message: "activeDeadlineSeconds and ttlSecondsAfterFinished can only work with Always CompletionPolicyType"
      }
    ]
  }),
  described("When the job completes and when it is cleaned up.")
)
export type CompletionPolicy = typeof CompletionPolicy.Type

const PullPolicy = Schema.Struct({
  timeoutSeconds: PositiveInt32.pipe(
    described("Timeout of one pull attempt, in seconds. Defaults to 600."),
    withDefault(defaultTimeoutSeconds)
  ),
  backoffLimit: NonNegativeInt32.pipe(
    described("Retries after a failed attempt before the node is marked failed. Defaults to 3."),
    withDefault(defaultBackoffLimit)
  ),
  // The seed's spelling (pullPolicySpelling.ts); upstream's CRD has no such field.
  type: Schema.optionalKey(
    Schema.Literals(imagePullPolicies).pipe(
      described(
        "Deprecated: use spec.imagePullPolicy. Always or IfNotPresent, the spelling of the pull request that proposed " +
          "the feature; read only when spec.imagePullPolicy is unset, and must equal it when both are set."
      )
    )
  )
}).pipe(described("Per-node pull attempts: their timeout and how often to retry."))
export type PullPolicy = typeof PullPolicy.Type

export const SandboxConfig = Schema.Struct({
  labels: Schema.optionalKey(StringMap.pipe(described("Labels of the PodSandboxConfig metadata."))),
  annotations: Schema.optionalKey(StringMap.pipe(described("Annotations of the PodSandboxConfig metadata.")))
}).pipe(described("Metadata passed to the CRI PullImage call as its PodSandboxConfig, as the kubelet does."))
export type SandboxConfig = typeof SandboxConfig.Type

/** The fields an ImagePullJob shares with the template of an ImageListPullJob. */
export const jobTemplateFields = {
  parallelism: Parallelism.pipe(withDefault(defaultParallelism)),
  selector: Schema.optionalKey(ImagePullJobNodeSelector),
  podSelector: Schema.optionalKey(
    LabelSelector.pipe(
      withOpenApi({ "x-kubernetes-map-type": "atomic" }),
      described(
        "Pull on the nodes running active pods of the job's namespace that match this selector. " + "Cannot be combined with selector."
      )
    )
  ),
  completionPolicy: CompletionPolicy.pipe(withDefault({})),
  pullPolicy: PullPolicy.pipe(withDefault({})),
  pullSecrets: Schema.optionalKey(
    Schema.Array(Schema.String.pipe(withOpenApi({ maxLength: 253 }))).pipe(
      described("Names of image pull secrets (dockerconfigjson or dockercfg) in the job's namespace.")
    )
  ),
  sandboxConfig: Schema.optionalKey(SandboxConfig),
  // No default in the schema: the API server would write it, and a job spelling the policy the
  // deprecated way (pullPolicy.type) could then never be told from one that set both.
  imagePullPolicy: Schema.optionalKey(
    Schema.Literals(imagePullPolicies).pipe(
      described(
        "IfNotPresent: skip nodes that already have the image. Always: pull every time, " +
          "for mutable tags such as latest; a new generation of the job (an edit of its spec) pulls again on every node, " +
          "so that they converge on the digest the tag names now. Defaults to the deprecated pullPolicy.type if set, else IfNotPresent."
      )
    )
  )
}

export const deadlineMessage = `completionPolicy.activeDeadlineSeconds must be greater than pullPolicy.timeoutSeconds(default ${defaultTimeoutSeconds})`

/** Rules across fields of a job spec (the API server checks them through the CRD). */
export const jobSpecCelRules = [
  { rule: "!(has(self.selector) && has(self.podSelector))", message: "can not set both selector and podSelector" },
  pullPolicyConflictCelRule,
  ...labelSelectorRules("selector"),
  ...labelSelectorRules("podSelector")
] as const

/**
 * As upstream's ImagePullJob webhook, only a timeout above the deadline is refused, so equal values
 * (its own e2e jobs use 50/50) pass. An ImageListPullJob has the rule too, though upstream's webhook
 * for it does not: the ImagePullJobs it creates would all be refused (issue 24).
 */
export const deadlineCelRule = {
  rule:
    "!has(self.completionPolicy) || !has(self.completionPolicy.activeDeadlineSeconds) || " +
    "self.completionPolicy.activeDeadlineSeconds >= " +
    `(has(self.pullPolicy) && has(self.pullPolicy.timeoutSeconds) ? self.pullPolicy.timeoutSeconds : ${defaultTimeoutSeconds})`,
  message: deadlineMessage
} as const
