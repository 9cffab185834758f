import { readdirSync, readFileSync } from "node:fs"
import { dirname, join, normalize } from "node:path"

/**
 * The unit tests `npm run test:fast` (vitest.fast.config.ts) leaves out, because they spawn a
 * process or listen on a socket; `npx vitest run` and `npm test` run them as before.
 * test/architecture/testTiers.test.ts checks that this list is exactly what `slowTestFiles` finds:
 * add a file here when it starts a process or a server, directly or through a test/ module.
 */
export const slowTests: ReadonlyArray<string> = [
  "test/build/artifacts.test.ts",
  "test/cli/commands.test.ts",
  "test/controller/role.test.ts",
  "test/daemon/readyAccess.test.ts",
  "test/deploy/cloudComponents.test.ts",
  "test/deploy/manifests.test.ts",
  "test/harness/apiserver/badInput.test.ts",
  "test/harness/apiserver/command.test.ts",
  "test/harness/apiserver/discovery.test.ts",
  "test/harness/apiserver/kubectl.test.ts",
  "test/harness/apiserver/kubectlAuth.test.ts",
  "test/harness/apiserver/kubectlQuotedErrors.test.ts",
  "test/harness/apiserver/kubectlUpstream.test.ts",
  "test/harness/apiserver/kubectlWorkloads.test.ts",
  "test/harness/apiserver/listWatch.test.ts",
  "test/harness/apiserver/pythonClient.test.ts",
  "test/harness/apiserver/rest.test.ts",
  "test/harness/apiserver/serverSideApply.test.ts",
  "test/harness/apiserver/serverSideApplySelectors.test.ts",
  "test/harness/apiserver/validation.test.ts",
  "test/harness/apiserver/versions.test.ts",
  "test/image/rootfs.test.ts",
  "test/image/tar.test.ts",
  "test/layers/cri/live/credentialProviderPlugins.test.ts",
  "test/layers/cri/live/criLiveFake.test.ts",
  "test/layers/kube/live/connectionPool.test.ts",
  "test/layers/kube/live/execCredentials.test.ts",
  "test/layers/kube/live/execTransport.test.ts",
  "test/layers/kube/live/kubeLive.test.ts",
  "test/layers/kube/live/kubeLiveConformance.test.ts",
  "test/layers/kube/live/liveAccess.test.ts",
  "test/layers/kube/live/liveRetries.test.ts",
  "test/layers/kube/live/tlsErrors.test.ts",
  "test/layers/kube/live/tokenFile.test.ts",
  "test/ops/server.test.ts",
  "test/rollout/rolloutCommand.test.ts",
  "test/statusView/terminal.test.ts",
  "test/support/authFront.test.ts",
  "test/support/faultProxy.test.ts"
]

/**
 * What makes a test file slow for the edit loop: it spawns a process (kubectl, python, the CLI, an
 * exec plugin, a credential provider plugin, a child daemon), or starts something that listens on a
 * socket (the embedded API server, the ops server, an HTTP or gRPC server of its own, a proxy).
 */
export const processOrServer =
  /node:child_process|node:net\b|node:worker_threads|\.listen\(|create(?:Secure)?Server\(|startEmbeddedApiServer\(|serveOps\(|runDaemon\(|runControllerRole\(|startDevCluster\(|KubeLive\.|CriLive\.|makeExecAuthentication\(|runPlugin\(|credentialProvidersLayer\(/

const importPattern = /^(?:import|export)\s[^;]*?from\s+"(\.[^"]+\.ts)"|^import\s+"(\.[^"]+\.ts)"/gms

/**
 * The test files (paths from the repository's root) that spawn a process or listen, themselves or
 * through the test/ modules they import: the ones `npm run test:fast` leaves out.
 */
export const slowTestFiles = (root: string): Array<string> => {
  const text = new Map<string, string>()
  const read = (file: string) => {
    let t = text.get(file)
    if (t === undefined) text.set(file, (t = readFileSync(join(root, file), "utf8")))
    return t
  }
  const reaches = (file: string, seen = new Set<string>()): boolean => {
    // This module and test/architecture/ name those markers as text; they run none of them.
    if (seen.has(file) || file === "test/tiers.ts" || file.startsWith("test/architecture/")) return false
    seen.add(file)
    const source = read(file)
    if (processOrServer.test(source)) return true
    return [...source.matchAll(importPattern)]
      .map((m) => normalize(join(dirname(file), m[1] ?? m[2]!)))
      .some((to) => to.startsWith("test/") && reaches(to, seen))
  }
  return readdirSync(join(root, "test"), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".test.ts") && !/^(e2e|system|faults)\//.test(f))
    .map((f) => join("test", f))
    .filter((f) => reaches(f))
    .sort()
}
