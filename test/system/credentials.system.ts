/**
 * Credentials as a real cluster hands them out (issue 23), with the shipped executable: an HTTPS
 * front that authenticates like kube-apiserver (test/support/authFront.ts) stands before the
 * embedded API server, and the controller and a daemon reach it with kubeconfigs holding each kind
 * of credential: exec plugins handing out tokens (rotated, revoked, short-lived) and client
 * certificates (renewed), a plugin that takes 2 s, plugins that fail, a token the front rejects,
 * RBAC the front takes away, and TLS settings that must never work. After each change of
 * credentials a job must complete; the plugins' run counts, the front's counts per credential, the
 * processes' logs and /readyz say how the client got there.
 */
import { Duration } from "effect"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { parse } from "yaml"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { simulatedPullTime } from "../../harness/layers/simulatedRuntime/simulatedNode.ts"
import { AuthFront } from "../support/authFront.ts"
import { type Credential, ExecPlugins, type ExecSection, writeKubeconfig } from "../support/execPlugins.ts"
import { Cluster, type Process } from "./cluster.ts"
import { eventually } from "../support/eventually.ts"
import { freePort } from "../support/freePort.ts"

let cluster: Cluster
let front: AuthFront
let plugins: ExecPlugins
/**
 * A controller whose plugin never answers, started first: the run is stopped after the plugin
 * timeout (1 minute), which the other cases outlast; the last case reads what it said.
 */
let hanging: Running

const installHint = "install the preheat-login plugin: see https://example.invalid/preheat-login"

interface Running {
  readonly process: Process
  readonly port: number
}

beforeAll(async () => {
  cluster = await Cluster.startWith(async () => undefined)
  const upstream = parse(readFileSync(cluster.kubeconfig, "utf8")).clusters[0].cluster.server as string
  const pki = join(cluster.dir, "pki")
  mkdirSync(pki)
  front = await AuthFront.start(upstream, pki)
  const scripts = join(cluster.dir, "plugins")
  mkdirSync(scripts)
  plugins = new ExecPlugins(scripts)
  hanging = await startController("ctl-hanging", kubeconfig("ctl-hanging", exec("hanging", "ctl-hanging")), false)
}, 60_000)

afterAll(async () => {
  await cluster?.stop()
  await front?.stop()
})

beforeEach(({ onTestFailed }) => {
  onTestFailed(() => {
    console.error(cluster.dumpLogs())
  })
})

const kubeconfig = (name: string, credential: Credential, server = front.url, caPem = front.clusterCa.certPem): string =>
  writeKubeconfig(join(cluster.dir, `${name}.kubeconfig`), server, caPem, credential)

/** An exec section running `plugin` as `who` (its runs are counted under that name). */
const exec = (plugin: Parameters<ExecPlugins["path"]>[0], who: string, env: Record<string, string> = {}): { exec: ExecSection } => ({
  exec: {
    command: plugins.path(plugin),
    args: ["--audience", "preheat"],
    env: { WHO: who, RUNS_FILE: plugins.runsFile, ...env },
    installHint,
    provideClusterInfo: true
  }
})

/** A controller (on Deno, as the other system tests run it) with its own Lease, so that none waits for another's. */
const startController = async (name: string, config: string, waitHealthy = true): Promise<Running> => {
  const port = await freePort()
  const process = cluster.spawn(
    name,
    [
      "controller",
      "--kubeconfig",
      config,
      "--metrics-port",
      String(port),
      "--metrics-host",
      "127.0.0.1",
      "--node-ready-delay-seconds",
      "1",
      "--leader-election-namespace",
      "preheat-system",
      "--leader-election-name",
      name
    ],
    { POD_NAME: name },
    "deno"
  )
  if (waitHealthy) await cluster.waitHealthy(process, port)
  return { process, port }
}

/** A Ready Node and its daemon on the simulated runtime. */
const startDaemon = async (node: string, config: string): Promise<Running> => {
  await cluster.createNodes([node], {})
  const port = await freePort()
  const process = cluster.spawn(`daemon-${node}`, [
    "simulated-daemon",
    "--node-name",
    node,
    "--kubeconfig",
    config,
    "--metrics-port",
    String(port),
    "--metrics-host",
    "127.0.0.1"
  ])
  await cluster.waitHealthy(process, port)
  return { process, port }
}

const stopAll = async (...running: ReadonlyArray<Running>) => {
  await Promise.all(running.map((r) => cluster.kill(r.process)))
}

/** An image the simulated runtime pulls within a second, new for each job. */
const quickImage = (job: string): string => {
  for (let i = 0; i < 1000; i++) {
    const image = `example.com/credentials/${job}-${i}:1.0`
    if (Duration.toMillis(simulatedPullTime(image)) < 1_000) return image
  }
  throw new Error(`no quick image for ${job}`)
}

/** Applies an Always ImagePullJob for `node` with kubectl (straight to the API server) and waits until it completed there. */
const runJob = async (name: string, node: string): Promise<void> => {
  // The node's NodeImage first: a job that selects no NodeImage yet completes at once with nothing to do.
  await eventually(`the NodeImage of ${node}`, async () =>
    (await cluster.kubectl(["get", "nodeimage", node])).code === 0 ? true : undefined
  )
  const applied = await cluster.applyFile(
    name,
    `apiVersion: apps.kruise.io/v1alpha1
kind: ImagePullJob
metadata:
  name: ${name}
spec:
  image: ${quickImage(name)}
  selector:
    names: [${node}]
  completionPolicy:
    type: Always
`
  )
  expect(applied.stderr).toBe("")
  await cluster.ok(["wait", `ipj/${name}`, "--for=jsonpath={.status.completionTime}", "--timeout=60s"])
  expect(await cluster.ok(["get", "ipj", name, "-o", "jsonpath={.status.succeeded}/{.status.failed}"])).toBe("1/0")
}

interface LogLine {
  readonly level: string
  readonly msg: string
  readonly text: string
}

/** The JSON log lines of a process. */
const logLines = (process: Process): Array<LogLine> =>
  readFileSync(process.logFile, "utf8")
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((text) => {
      const record = JSON.parse(text) as { level?: string; msg?: string }
      return { level: String(record.level ?? ""), msg: String(record.msg ?? ""), text }
    })

const warnings = (process: Process, pattern: RegExp): Array<LogLine> =>
  logLines(process).filter((line) => line.level.startsWith("warn") && pattern.test(line.text))

/** The WARN lines saying API access fails (when a cause starts, then at most once a minute). */
const accessWarnings = (process: Process, pattern: RegExp): Array<LogLine> =>
  warnings(process, pattern).filter((line) => /^API access (still )?failing/.test(line.msg))

const readyz = async (running: Running): Promise<{ readonly status: number; readonly body: string }> => {
  const response = await fetch(`http://127.0.0.1:${running.port}/readyz?verbose`)
  return { status: response.status, body: await response.text() }
}

const frontHost = () => front.url

describe("exec plugin tokens without expiry", () => {
  const tokenFile = () => join(cluster.dir, "rotating-token")
  const user = "system:serviceaccount:preheat-system:preheat"
  const running = new Map<string, Array<Running>>()

  it("runs the plugin once per process, not per request, and gives it its env, args and the cluster", async () => {
    writeFileSync(tokenFile(), "token-1")
    front.acceptToken("token-1", user)
    const controller = await startController(
      "ctl-rotate",
      kubeconfig("ctl-rotate", exec("tokenFromFile", "ctl-rotate", { TOKEN_FILE: tokenFile() }))
    )
    const daemon = await startDaemon(
      "node-rotate",
      kubeconfig("node-rotate", exec("tokenFromFile", "node-rotate", { TOKEN_FILE: tokenFile() }))
    )
    running.set("rotate", [controller, daemon])
    await runJob("rotate-1", "node-rotate")
    // Every informer, the Lease and the job's writes went out at once and since: one run each.
    expect(plugins.runs("ctl-rotate")).toEqual(["ctl-rotate --audience preheat"])
    expect(plugins.runs("node-rotate")).toEqual(["node-rotate --audience preheat"])
    expect(front.counts("token-1").requests).toBeGreaterThan(10)
    expect(plugins.execInfo("ctl-rotate")).toMatchObject({
      apiVersion: "client.authentication.k8s.io/v1",
      kind: "ExecCredential",
      spec: { cluster: { server: front.url }, interactive: false }
    })
  })

  it("after a rotation, a 401 for the old token runs the plugin once and the request succeeds with the new one", async () => {
    writeFileSync(tokenFile(), "token-2")
    front.acceptToken("token-2", user)
    front.revokeToken("token-1")
    await runJob("rotate-2", "node-rotate")
    expect(front.counts("token-1").unauthorized).toBeGreaterThan(0)
    expect(front.counts("token-2").requests).toBeGreaterThan(0)
    // One run for the burst of 401s of each process.
    expect(plugins.runs("ctl-rotate")).toHaveLength(2)
    expect(plugins.runs("node-rotate")).toHaveLength(2)
    // The refused requests were sent again with the new token: none failed for it.
    for (const { process } of running.get("rotate")!) expect(warnings(process, /401|Unauthorized/)).toEqual([])
  })

  it("while the plugin keeps handing out a revoked token, /readyz names the 401 and the WARN is logged once; a new token ends it", async () => {
    const [controller, daemon] = running.get("rotate")!
    front.revokeToken("token-2")
    const locked = await eventually(
      "the controller not ready for a 401",
      async () => {
        const answer = await readyz(controller!)
        return answer.status !== 200 && answer.body.includes("401 Unauthorized") ? answer.body : undefined
      },
      30_000,
      500
    )
    expect(locked).toContain(`[-]api-access failed: 401 Unauthorized from ${frontHost()}`)
    // A few seconds of refused requests (the Lease is renewed every 2 s): still one WARN.
    await new Promise((done) => setTimeout(done, 6_000))
    expect(accessWarnings(controller!.process, /401 Unauthorized/)).toHaveLength(1)

    writeFileSync(tokenFile(), "token-3")
    front.acceptToken("token-3", user)
    await runJob("rotate-3", "node-rotate")
    await eventually("the controller ready again", async () => ((await readyz(controller!)).status === 200 ? true : undefined))
    expect(front.counts("token-3").requests).toBeGreaterThan(0)
    // Nothing a plugin printed or a token reaches a log.
    for (const process of [controller!.process, daemon!.process]) {
      expect(readFileSync(process.logFile, "utf8")).not.toMatch(/token-[123]/)
    }
    await stopAll(controller!, daemon!)
  })
})

describe("short-lived exec tokens", () => {
  it("runs the plugin again after status.expirationTimestamp, not per request", async () => {
    const lifetime = 6
    front.acceptExpiringTokens("expiring-", "preheat-expiring")
    const env = { TOKEN_PREFIX: "expiring-", LIFETIME: String(lifetime) }
    const started = Date.now()
    const controller = await startController("ctl-expiring", kubeconfig("ctl-expiring", exec("expiringToken", "ctl-expiring", env)))
    const daemon = await startDaemon("node-expiring", kubeconfig("node-expiring", exec("expiringToken", "node-expiring", env)))
    await runJob("expiring-1", "node-expiring")
    // Past the first tokens' end: the next requests need new ones.
    await new Promise((done) => setTimeout(done, (lifetime + 1) * 1000))
    await runJob("expiring-2", "node-expiring")
    const elapsedSeconds = (Date.now() - started) / 1000
    for (const who of ["ctl-expiring", "node-expiring"]) {
      const runs = plugins.runs(who).length
      expect({ who, atLeastTwo: runs >= 2 }).toEqual({ who, atLeastTwo: true })
      expect({ who, runs, perLifetime: runs <= elapsedSeconds / lifetime + 2 }).toEqual({ who, runs, perLifetime: true })
    }
    // Renewed before use, not after a 401: at most the requests sent in the last moment of a token.
    const refused = [...front.byCredential.entries()]
      .filter(([credential]) => credential.startsWith("expiring-"))
      .reduce((sum, [, counts]) => sum + counts.unauthorized, 0)
    expect(refused).toBeLessThanOrEqual(plugins.runs("ctl-expiring").length + plugins.runs("node-expiring").length)
    const served = front.userCounts("preheat-expiring").requests
    expect(served).toBeGreaterThan(5 * (plugins.runs("ctl-expiring").length + plugins.runs("node-expiring").length))
    await stopAll(controller, daemon)
  })
})

describe("client certificates from an exec plugin", () => {
  it("uses a renewed certificate for new connections once the plugin hands it out, and ends the old certificate's connections", async () => {
    // A certificate per process, so that the front tells whose connections are left.
    const clients = ["ctl-cert", "node-cert"] as const
    const fileOf = (who: string) => join(cluster.dir, `${who}-credential.json`)
    const issue = (generation: number) =>
      Object.fromEntries(clients.map((who) => [who, front.issueClientCertificate(`${who}-${generation}`, "preheat-cert")]))
    const first = issue(1)
    for (const who of clients) ExecPlugins.writeCertificateCredential(fileOf(who), first[who]!)
    const controller = await startController(
      "ctl-cert",
      kubeconfig("ctl-cert", exec("credentialFromFile", "ctl-cert", { CREDENTIAL_FILE: fileOf("ctl-cert") }))
    )
    const daemon = await startDaemon(
      "node-cert",
      kubeconfig("node-cert", exec("credentialFromFile", "node-cert", { CREDENTIAL_FILE: fileOf("node-cert") }))
    )
    await runJob("cert-1", "node-cert")
    for (const who of clients) {
      expect({ who, used: front.counts(`cert:${first[who]!.fingerprint}`).requests > 0 }).toEqual({ who, used: true })
      expect({ who, open: front.openConnections(first[who]!.fingerprint) > 0 }).toEqual({ who, open: true })
    }

    const second = issue(2)
    for (const who of clients) {
      ExecPlugins.writeCertificateCredential(fileOf(who), second[who]!)
      front.revokeCertificate(first[who]!.fingerprint)
    }
    await runJob("cert-2", "node-cert")
    for (const who of clients) {
      expect({ who, used: front.counts(`cert:${second[who]!.fingerprint}`).requests > 0 }).toEqual({ who, used: true })
      expect(plugins.runs(who)).toHaveLength(2)
    }
    for (const running of [controller, daemon]) expect(warnings(running.process, /401|Unauthorized/)).toEqual([])
    // The old connections end, the controller's on Deno as the daemon's on Node: their watches
    // resume on the new certificate's pool.
    await eventually(
      "no connection of the controller or the daemon left with its old certificate",
      async () => (clients.every((who) => front.openConnections(first[who]!.fingerprint) === 0) ? true : undefined),
      30_000,
      500
    )
    expect(front.openConnections(second["node-cert"]!.fingerprint)).toBeGreaterThan(0)
    await stopAll(controller, daemon)
  })
})

describe("a plugin that takes 2 s", () => {
  it("is run once for all the requests that wait for it", async () => {
    const tokenFile = join(cluster.dir, "slow-token")
    writeFileSync(tokenFile, "slow-token-1")
    front.acceptToken("slow-token-1", "preheat-slow")
    const env = { TOKEN_FILE: tokenFile, DELAY: "2" }
    const controller = await startController("ctl-slow", kubeconfig("ctl-slow", exec("tokenFromFile", "ctl-slow", env)))
    const daemon = await startDaemon("node-slow", kubeconfig("node-slow", exec("tokenFromFile", "node-slow", env)))
    await runJob("slow-1", "node-slow")
    expect(plugins.runs("ctl-slow")).toHaveLength(1)
    expect(plugins.runs("node-slow")).toHaveLength(1)
    await stopAll(controller, daemon)
  })
})

/** The line of a process's output that explains why `plugin` gave no credential. */
const pluginExplanation = (process: Process, plugin: Parameters<ExecPlugins["path"]>[0]): string | undefined =>
  readFileSync(process.logFile, "utf8")
    .split("\n")
    .find((line) => line.includes(plugins.path(plugin)) && line.includes(installHint))

/** Nothing the plugin printed, on stdout or stderr, reached the process's output. */
const expectNoPluginOutput = (process: Process) => {
  const output = readFileSync(process.logFile, "utf8")
  expect(output).not.toContain("plugin-stdout-secret")
  expect(output).not.toContain("plugin-stderr")
}

/** Still running and not ready, or exited with an error: never running as if it had credentials. */
const expectNotServing = async (running: Running) => {
  if (running.process.child.exitCode === null) expect((await readyz(running)).status).not.toBe(200)
  else expect(running.process.child.exitCode).not.toBe(0)
}

describe("plugins that do not hand out a credential", () => {
  it("give one clear error naming the command and the install hint, never the plugin's output", async () => {
    const broken = ["failing", "badJson"] as const
    const controllers = await Promise.all(
      broken.map((plugin) => startController(`ctl-${plugin}`, kubeconfig(`ctl-${plugin}`, exec(plugin, `ctl-${plugin}`)), false))
    )
    for (const [i, plugin] of broken.entries()) {
      const controller = controllers[i]!
      await eventually(`ctl-${plugin} explaining its plugin`, async () => pluginExplanation(controller.process, plugin), 30_000, 500)
      expectNoPluginOutput(controller.process)
      await expectNotServing(controller)
    }
    // Several seconds of informers and the Lease retrying: still one WARN each, and /readyz says why.
    await new Promise((done) => setTimeout(done, 5_000))
    for (const [i, plugin] of broken.entries()) {
      const controller = controllers[i]!
      expect(warnings(controller.process, new RegExp(plugins.path(plugin).replaceAll(".", "\\.")))).toHaveLength(1)
      expect((await readyz(controller)).body).toContain(plugins.path(plugin))
    }
    await stopAll(...controllers)
  })
})

describe("credentials the cluster refuses", () => {
  it("tells a rejected token (401) from missing RBAC (403) in /readyz and in one WARN line each", async () => {
    front.acceptToken("limited-token", "limited")
    front.deny({ user: "limited", verb: "list", group: "apps.kruise.io", resource: "imagepulljobs" })
    const [rejected, forbidden] = await Promise.all([
      startController("ctl-rejected", kubeconfig("ctl-rejected", { token: "never-accepted" }), false),
      startController("ctl-forbidden", kubeconfig("ctl-forbidden", { token: "limited-token" }), false)
    ])
    const rejectedReady = await eventually("ctl-rejected unready for a 401", async () => {
      const answer = await readyz(rejected)
      return answer.status !== 200 && answer.body.includes("401") ? answer.body : undefined
    })
    expect(rejectedReady).toContain(`[-]api-access failed: 401 Unauthorized from ${frontHost()}`)
    const forbiddenLine = await eventually("ctl-forbidden naming the missing rule", async () =>
      warnings(forbidden.process, /forbidden|403/i).find(
        (l) => /list/.test(l.text) && /imagepulljobs/.test(l.text) && /apps\.kruise\.io/.test(l.text)
      )
    )
    expect(forbiddenLine.text).not.toContain("limited-token")
    const forbiddenReady = await readyz(forbidden)
    expect(forbiddenReady.status).not.toBe(200)
    expect(forbiddenReady.body).toMatch(/\[-\]api-access failed: .*list imagepulljobs\.apps\.kruise\.io/)
    expect(forbiddenReady.body).not.toContain("401")
    expect(front.counts("limited-token").forbidden).toBeGreaterThan(0)
    // Several seconds of refusals: one WARN per cause.
    await new Promise((done) => setTimeout(done, 5_000))
    expect(accessWarnings(rejected.process, /401 Unauthorized/)).toHaveLength(1)
    expect(accessWarnings(forbidden.process, /forbidden/)).toHaveLength(1)
    // Nothing else repeats them at WARN (watches and the Lease retry all along).
    expect(warnings(rejected.process, /401|Unauthorized/)).toHaveLength(1)
    expect(warnings(forbidden.process, /forbidden|403/i)).toHaveLength(1)
    expect(front.counts("never-accepted").unauthorized).toBeGreaterThan(1)
    await stopAll(rejected, forbidden)
  })

  it("explains TLS failures in a WARN line and never falls back to an insecure connection", async () => {
    const other = front.pki.authority("other-ca")
    const foreignClientCert = front.pki.issue(other, "foreign-client", { commonName: "preheat", usage: "clientAuth" })
    const cases: ReadonlyArray<{ name: string; config: string; token?: string }> = [
      {
        name: "ctl-unknown-ca",
        config: kubeconfig("ctl-unknown-ca", { token: "tls-unknown-ca" }, front.url, other.certPem),
        token: "tls-unknown-ca"
      },
      {
        name: "ctl-wrong-host",
        config: kubeconfig("ctl-wrong-host", { token: "tls-wrong-host" }, front.wrongHostUrl),
        token: "tls-wrong-host"
      },
      {
        name: "ctl-expired",
        config: kubeconfig("ctl-expired", { token: "tls-expired" }, front.expiredUrl),
        token: "tls-expired"
      },
      {
        name: "ctl-foreign-cert",
        config: kubeconfig("ctl-foreign-cert", { certificate: foreignClientCert }, front.clientCertificateUrl)
      }
    ]
    for (const { token } of cases) if (token !== undefined) front.acceptToken(token, "preheat-tls")
    const controllers = await Promise.all(cases.map((c) => startController(c.name, c.config, false)))
    const explanations: Record<string, RegExp> = {
      "ctl-unknown-ca": /not signed by a CA this client trusts.*certificate-authority/,
      "ctl-wrong-host": /does not cover the host name.*the certificate covers DNS:other\.example/,
      "ctl-expired": /has expired/,
      "ctl-foreign-cert": /refused this client's certificate.*client-certificate/
    }
    for (const [i, { name }] of cases.entries()) {
      const controller = controllers[i]!
      await eventually(`${name} explaining the TLS failure`, async () => warnings(controller.process, explanations[name]!)[0], 30_000, 500)
      const ready = await readyz(controller)
      expect(ready.status).not.toBe(200)
      expect(ready.body).toMatch(explanations[name]!)
    }
    // No request of theirs got through the TLS handshake, with or without verification.
    expect(front.userCounts("preheat-tls").requests).toBe(0)
    await stopAll(...controllers)
  })
})

describe("pull-secret copies", () => {
  const dockerConfig = (password: string) =>
    Buffer.from(JSON.stringify({ auths: { "registry.example.com": { username: "preheat", password } } })).toString("base64")
  const secret = (name: string, password: string) => `apiVersion: v1
kind: Secret
metadata:
  name: ${name}
type: kubernetes.io/dockerconfigjson
data:
  .dockerconfigjson: ${dockerConfig(password)}
`
  const copyData = async (name: string): Promise<string | undefined> => {
    const result = await cluster.kubectl([
      "get",
      "secret",
      name,
      "-n",
      "preheat-daemon-config",
      "-o",
      "jsonpath={.data.\\.dockerconfigjson}"
    ])
    return result.code === 0 ? result.stdout : undefined
  }

  it("follow their rotated source Secret and are released when no unfinished job references them", async () => {
    const certificate = front.issueClientCertificate("secrets-client", "preheat-secrets")
    const controller = await startController("ctl-secrets", kubeconfig("ctl-secrets", { certificate }))
    const daemon = await startDaemon("node-secrets", kubeconfig("node-secrets", { certificate }))
    expect((await cluster.applyFile("regcred-never", secret("regcred-never", "first"))).stderr).toBe("")
    expect((await cluster.applyFile("regcred-always", secret("regcred-always", "first"))).stderr).toBe("")
    const job = (name: string, type: string, pullSecret: string, node = "node-secrets") => `apiVersion: apps.kruise.io/v1alpha1
kind: ImagePullJob
metadata:
  name: ${name}
spec:
  image: registry.example.com/${quickImage(name).split("/").slice(1).join("/")}
  pullSecrets: [${pullSecret}]
  selector:
    names: [${node}]
  completionPolicy:
    type: ${type}
`
    expect((await cluster.applyFile("secrets-never", job("secrets-never", "Never", "regcred-never"))).stderr).toBe("")
    await eventually("the Never job's copy", () => copyData("default.regcred-never"))
    expect(await copyData("default.regcred-never")).toBe(dockerConfig("first"))

    // The source rotated: the copy follows, for the Never job that keeps pulling with it.
    expect((await cluster.applyFile("regcred-never", secret("regcred-never", "second"))).stderr).toBe("")
    await eventually("the rotated data in the Never job's copy", async () =>
      (await copyData("default.regcred-never")) === dockerConfig("second") ? true : undefined
    )

    // Two Always jobs share a copy: one completes; the other waits for a node no daemon serves.
    await cluster.createNodes(["node-without-daemon"], {})
    // Its NodeImage first: a job that selects no NodeImage yet completes at once with nothing to do.
    await eventually("the NodeImage of the node without a daemon", async () =>
      (await cluster.kubectl(["get", "nodeimage", "node-without-daemon"])).code === 0 ? true : undefined
    )
    const stuck = job("secrets-always-unfinished", "Always", "regcred-always", "node-without-daemon")
    expect((await cluster.applyFile("secrets-always-unfinished", stuck)).stderr).toBe("")
    expect((await cluster.applyFile("secrets-always", job("secrets-always", "Always", "regcred-always"))).stderr).toBe("")
    await cluster.ok(["wait", "ipj/secrets-always", "--for=jsonpath={.status.completionTime}", "--timeout=60s"])
    expect(await cluster.ok(["get", "ipj", "secrets-always-unfinished", "-o", "jsonpath={.status.completionTime}"])).toBe("")
    await eventually("the Always jobs' copy", () => copyData("default.regcred-always"))
    // Rotated while an Always job is unfinished: the copy follows.
    expect((await cluster.applyFile("regcred-always", secret("regcred-always", "second"))).stderr).toBe("")
    await eventually("the rotated data in the Always jobs' copy", async () =>
      (await copyData("default.regcred-always")) === dockerConfig("second") ? true : undefined
    )
    // The last unfinished job that references it goes: the copy is released.
    await cluster.ok(["delete", "ipj", "secrets-always-unfinished"])
    await eventually("the Always jobs' copy released", async () =>
      (await copyData("default.regcred-always")) === undefined ? true : undefined
    )
    // The Never job never finishes: its copy stays until the job is deleted.
    expect(await copyData("default.regcred-never")).toBe(dockerConfig("second"))
    await cluster.ok(["delete", "ipj", "secrets-never"])
    await eventually("the Never job's copy released", async () =>
      (await copyData("default.regcred-never")) === undefined ? true : undefined
    )
    await stopAll(controller, daemon)
  })
})

describe("a plugin that never answers", () => {
  it("is stopped after its timeout with one clear error naming the command and the install hint", async () => {
    await eventually("ctl-hanging explaining its plugin", async () => pluginExplanation(hanging.process, "hanging"), 90_000, 1_000)
    expect(pluginExplanation(hanging.process, "hanging")).toMatch(/no answer within|timed out|timeout/i)
    expectNoPluginOutput(hanging.process)
    await expectNotServing(hanging)
    await stopAll(hanging)
  }, 120_000)
})
