import { stringify } from "yaml"

/**
 * A kubeconfig for a server over plain http that both kubectl and @kubernetes/client-node 2
 * accept: client-node refuses an http:// server unless insecure-skip-tls-verify is set.
 */
export const kubeconfigFor = (options: {
  readonly url: string
  readonly token?: string
  readonly namespace?: string
  readonly name?: string
}): string => {
  const name = options.name ?? "preheat"
  return stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name, cluster: { server: options.url, "insecure-skip-tls-verify": true } }],
    users: [{ name, user: options.token === undefined ? {} : { token: options.token } }],
    contexts: [{ name, context: { cluster: name, user: name, namespace: options.namespace ?? "default" } }],
    "current-context": name,
    preferences: {}
  })
}
