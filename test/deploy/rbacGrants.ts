/**
 * RBAC as flat grants, `role verb group/resource[/sub] @scope [names]`: what apiUsage.ts asks for,
 * and what a set of manifests (deploy/ alone, or rendered with a component) grants, so that tests
 * compare the two as sets.
 */
import { expect } from "vitest"
import { resources } from "../../src/kube/resources.ts"
import type { ApiUse, Role } from "./apiUsage.ts"

type Obj = Record<string, any>
type ResourceKey = keyof typeof resources

const grantKey = (role: string, verb: string, group: string, resource: string, scope: string, names: ReadonlyArray<string>) =>
  `${role} ${verb} ${group}/${resource} @${scope}${names.length === 0 ? "" : ` [${[...names].sort().join(",")}]`}`

const groupOf = (kind: string) => {
  const apiVersion = resources[kind as ResourceKey].apiVersion
  return apiVersion.includes("/") ? apiVersion.split("/")[0]! : ""
}

/** The grants `uses` need, a namespace flag's scope and a name flag read with `flagValue`. */
export const expectedGrants = (uses: ReadonlyArray<ApiUse>, flagValue: (role: Role, flag: string) => string): Set<string> =>
  new Set(
    uses.map((use) => {
      const resource = resources[use.kind as ResourceKey]
      const scope = use.scope === "cluster" ? "cluster" : flagValue(use.role, use.scope.namespaceFlag)
      const names =
        use.resourceNameFlag !== undefined
          ? [flagValue(use.role, use.resourceNameFlag)]
          : use.resourceName !== undefined
            ? [use.resourceName]
            : []
      const plural = `${resource.plural}${use.subresource === undefined ? "" : `/${use.subresource}`}`
      return grantKey(use.role, use.verb, groupOf(use.kind), plural, scope, names)
    })
  )

/**
 * What the bindings among `docs` grant the roles' service accounts (`roleOfAccount`: by
 * `namespace/name`), checking on the way that no rule has a wildcard, a non-resource URL, or binds
 * a Role of another namespace, and that every subject runs a workload.
 */
export const grantsOf = (docs: ReadonlyArray<Obj>, roleOfAccount: ReadonlyMap<string, Role>): Set<string> => {
  const one = (kind: string, name: string, namespace?: string): Obj => {
    const found = docs.filter(
      (m) => m.kind === kind && m.metadata?.name === name && (namespace === undefined || m.metadata?.namespace === namespace)
    )
    expect(found, `${kind} ${name}`).toHaveLength(1)
    return found[0]!
  }
  const grants = new Set<string>()
  for (const binding of docs.filter((d) => d.kind === "ClusterRoleBinding" || d.kind === "RoleBinding")) {
    const namespaced = binding.kind === "RoleBinding"
    const ref = binding.roleRef
    expect(ref.apiGroup).toBe("rbac.authorization.k8s.io")
    const target = namespaced && ref.kind === "Role" ? one("Role", ref.name, binding.metadata.namespace) : one("ClusterRole", ref.name)
    const scope = namespaced ? binding.metadata.namespace : "cluster"
    for (const subject of binding.subjects as Array<Obj>) {
      expect(subject.kind).toBe("ServiceAccount")
      const role = roleOfAccount.get(`${subject.namespace}/${subject.name}`)
      expect(role, `${subject.namespace}/${subject.name} runs a workload`).toBeDefined()
      for (const rule of target.rules as Array<Obj>) {
        for (const field of ["apiGroups", "resources", "verbs", "resourceNames"]) {
          expect(rule[field] ?? [], `${target.kind} ${target.metadata.name} ${field}`).not.toContain("*")
        }
        expect(rule.nonResourceURLs).toBeUndefined()
        for (const group of rule.apiGroups) {
          for (const resource of rule.resources) {
            for (const verb of rule.verbs) grants.add(grantKey(role!, verb, group, resource, scope, rule.resourceNames ?? []))
          }
        }
      }
    }
  }
  return grants
}
