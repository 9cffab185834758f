// Server-side apply: a PATCH with `application/apply-patch+yaml` and a `fieldManager`. The
// configuration is merged into the live object (created when absent) by the kind's field types,
// the manager comes to own exactly the fields it sets, fields it applied before and leaves out
// now are removed unless another manager owns them, and a value another manager owns is a 409
// conflict unless `force` (kubectl's --force-conflicts) takes it over. See apply/ownership.ts.
import { Effect, Result } from "effect"
import { parse as parseYaml } from "yaml"
import { KubeApi } from "../../../src/kube/KubeApi.ts"
import type { KubeObject, Subresource } from "../../../src/kube/KubeApi.ts"
import { isPlainObject } from "../../../src/json/plainObject.ts"
import type { JsonObject } from "../../../src/json/plainObject.ts"
import { badRequest } from "../http/apiStatus.ts"
import { isDryRun, isTrue, query } from "../http/apiRequest.ts"
import type { ApiRequest } from "../http/apiRequest.ts"
import { configurationError } from "./apply/configErrors.ts"
import { conflictFailure } from "./apply/conflictFailure.ts"
import { typeOfKind } from "./apply/fieldTypes.ts"
import { encodeManagedFields } from "./apply/managers.ts"
import type { ManagerEntry } from "./apply/managers.ts"
import { applyConfiguration, recordUpdate } from "./apply/ownership.ts"
import type { Writer } from "./apply/ownership.ts"
import { managerName, managersOf, optionsInvalid, writerFor } from "./fieldManagement.ts"
import { admitIntoNamespace } from "../admission/namespaceLifecycle.ts"
import { admitted, keyOf, metadataOf, placed, respond, storeError, withMetadata } from "../http/objectContext.ts"
import type { ObjectContext } from "../http/objectContext.ts"

// The configuration as applied: YAML (or JSON) naming this kind's group version, without
// managedFields; on /status only its status counts, on the main resource of a kind with a status
// subresource everything but its status (kube-apiserver resets the rest).
const configurationOf = (context: ObjectContext, request: ApiRequest, name: string, subresource: Subresource) =>
  Effect.gen(function* () {
    let parsed: unknown
    try {
      parsed = parseYaml(request.body.toString("utf8"))
    } catch (error) {
      return yield* Effect.fail(badRequest(`error decoding YAML: ${(error as Error).message}`))
    }
    if (!isPlainObject(parsed)) return yield* Effect.fail(badRequest("error decoding YAML: an apply configuration must be an object"))
    const expected = context.kind.resource.apiVersion
    if (parsed["apiVersion"] !== expected) {
      return yield* Effect.fail(
        badRequest(
          `Incorrect version specified in apply patch. Specified patch version: ${String(parsed["apiVersion"] ?? "")}, expected: ${expected}`
        )
      )
    }
    if (metadataOf(parsed)["managedFields"] !== undefined && metadataOf(parsed)["managedFields"] !== null) {
      return yield* Effect.fail(badRequest("metadata.managedFields must be nil"))
    }
    const problem = configurationError(parsed, typeOfKind(context.kind))
    if (problem !== undefined) {
      const { group, version, resource } = context.kind
      return yield* Effect.fail(badRequest(`failed to create typed patch object (${group}/${version}, Kind=${resource.kind}): ${problem}`))
    }
    const config = yield* placed(context, parsed, name)
    const { status, ...rest } = config
    if (subresource === "status") {
      const { name: n, namespace } = metadataOf(config)
      const identity = { apiVersion: config["apiVersion"], kind: config["kind"], metadata: { name: n, namespace } }
      return (status === undefined ? identity : { ...identity, status }) as JsonObject
    }
    return context.kind.statusSubresource ? rest : config
  })

// An object nobody has tracked (written before field management): its fields are first recorded
// as those of "before-first-apply", as kube-apiserver does, so that an apply can conflict with them.
const untrackedAsManager = (live: KubeObject, writer: Writer): Array<ManagerEntry> =>
  recordUpdate(undefined, live, [], { ...writer, manager: "before-first-apply", subresource: "" })

const maxApplyAttempts = 5

export const applyObject = (context: ObjectContext, request: ApiRequest, name: string, subresource: Subresource) =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    if ((query(request, "fieldManager") ?? "") === "") {
      return yield* Effect.fail(optionsInvalid("PatchOptions", "fieldManager", "Required value: is required for apply patch"))
    }
    const writer = yield* writerFor(context.kind, yield* managerName(request, "PatchOptions"), subresource)
    const force = isTrue(query(request, "force"))
    const config = yield* configurationOf(context, request, name, subresource)
    const key = keyOf(context.namespace, name)
    for (let attempt = 1; ; attempt++) {
      const found = yield* api.get(context.kind.resource, key).pipe(Effect.result)
      if (Result.isFailure(found) && (found.failure._tag !== "NotFound" || subresource === "status")) {
        return yield* Effect.fail(storeError(context.kind)(found.failure))
      }
      const live = Result.isSuccess(found) ? found.success : undefined
      const known = managersOf(live)
      const entries = live !== undefined && known.length === 0 ? untrackedAsManager(live, writer) : known
      const outcome = applyConfiguration(live, config, entries, writer, force)
      if (Result.isFailure(outcome)) return yield* Effect.fail(conflictFailure(outcome.failure))
      const encoded = encodeManagedFields(outcome.success.managers)
      const managedFields = encoded.length === 0 ? undefined : encoded
      if (live === undefined) {
        // Create-on-apply: the object did not exist.
        const { object, warnings } = yield* admitted(context, outcome.success.object, "create", "main")
        if (context.namespace !== undefined) yield* admitIntoNamespace(context.kind, context.namespace, name)
        const candidate = withMetadata(object, { managedFields }) as KubeObject
        if (isDryRun(request)) return yield* respond(201, context, candidate, warnings)
        const created = yield* api.create(context.kind.resource, candidate).pipe(Effect.result)
        if (Result.isSuccess(created)) return yield* respond(201, context, created.success, warnings)
        if (created.failure._tag === "AlreadyExists" && attempt < maxApplyAttempts) continue
        return yield* Effect.fail(storeError(context.kind)(created.failure))
      }
      const { object, warnings } = yield* admitted(context, outcome.success.object, "patch", subresource, live)
      // Guarded by the resourceVersion of the object the apply was computed on.
      const candidate = withMetadata(object, { managedFields, resourceVersion: live.metadata.resourceVersion }) as KubeObject
      if (isDryRun(request)) return yield* respond(200, context, candidate, warnings)
      const written = yield* api.update(context.kind.resource, candidate, subresource).pipe(Effect.result)
      if (Result.isSuccess(written)) return yield* respond(200, context, written.success, warnings)
      if (written.failure._tag === "Conflict" && attempt < maxApplyAttempts) continue
      return yield* Effect.fail(storeError(context.kind)(written.failure))
    }
  })
