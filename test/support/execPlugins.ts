/**
 * client-go exec credential plugins for tests (issue 23), as shell scripts written to a temp dir,
 * and kubeconfigs that use them. Every plugin appends one line per run to `$RUNS_FILE`, `$WHO`
 * and its arguments, so a test counts the runs of each client process (the env and args of the
 * kubeconfig's exec section reach it); with provideClusterInfo it also saves the
 * KUBERNETES_EXEC_INFO it was given to `$RUNS_FILE.$WHO.info`. What each hands out is in files the
 * test rewrites (rotation, renewal) or is made at the run (tokens that expire).
 */
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { stringify } from "yaml"
import type { Issued } from "./testPki.ts"

const execCredential = "client.authentication.k8s.io/v1"

const recordRun = [
  "#!/bin/sh",
  'printf \'%s\\n\' "$WHO $*" >> "$RUNS_FILE"',
  'if [ -n "$KUBERNETES_EXEC_INFO" ]; then printf \'%s\' "$KUBERNETES_EXEC_INFO" > "$RUNS_FILE.$WHO.info"; fi'
]

const scripts = {
  /** The token in `$TOKEN_FILE`, without expiry; after `$DELAY` seconds if set. */
  tokenFromFile: [
    ...recordRun,
    'if [ -n "$DELAY" ]; then sleep "$DELAY"; fi',
    'token=$(cat "$TOKEN_FILE")',
    `printf '{"apiVersion":"${execCredential}","kind":"ExecCredential","status":{"token":"%s"}}\\n' "$token"`
  ],
  /** A new token `$TOKEN_PREFIX<unix seconds>-<pid>` valid for `$LIFETIME` seconds, with its expirationTimestamp. */
  expiringToken: [
    ...recordRun,
    "until=$(( $(date +%s) + LIFETIME ))",
    'stamp=$(date -u -d "@$until" +%Y-%m-%dT%H:%M:%SZ)',
    `printf '{"apiVersion":"${execCredential}","kind":"ExecCredential","status":{"token":"%s%s-%s","expirationTimestamp":"%s"}}\\n' "$TOKEN_PREFIX" "$until" "$$" "$stamp"`
  ],
  /** The whole ExecCredential in `$CREDENTIAL_FILE` (a client certificate and key). */
  credentialFromFile: [...recordRun, 'cat "$CREDENTIAL_FILE"'],
  /** Fails, with output that must never reach a log. */
  failing: [...recordRun, 'echo "plugin-stdout-secret-$WHO"', 'echo "plugin-stderr-$WHO" >&2', "exit 3"],
  /** Succeeds with output that is not an ExecCredential. */
  badJson: [...recordRun, 'echo "plugin-stdout-secret-$WHO {not json"'],
  /** Never answers; gone within a second of the process that ran it, so a killed client leaves no orphan. */
  hanging: [...recordRun, 'while kill -0 "$PPID" 2>/dev/null; do sleep 1; done']
} as const

export type PluginName = keyof typeof scripts

export class ExecPlugins {
  readonly dir: string
  readonly runsFile: string

  constructor(dir: string) {
    this.dir = dir
    this.runsFile = join(dir, "plugin-runs")
    writeFileSync(this.runsFile, "")
    for (const [name, lines] of Object.entries(scripts)) {
      const file = this.path(name as PluginName)
      writeFileSync(file, `${lines.join("\n")}\n`)
      chmodSync(file, 0o755)
    }
  }

  path(name: PluginName): string {
    return join(this.dir, `${name}.sh`)
  }

  /** The lines the runs of `who` recorded: `WHO ARGS...`, one per run. */
  runs(who: string): Array<string> {
    return readFileSync(this.runsFile, "utf8")
      .split("\n")
      .filter((line) => line === who || line.startsWith(`${who} `))
  }

  /** The KUBERNETES_EXEC_INFO the last run of `who` was given, if any. */
  execInfo(who: string): unknown {
    const file = `${this.runsFile}.${who}.info`
    return existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : undefined
  }

  /** Writes the client certificate an ExecCredential-from-file plugin hands out from its next run. */
  static writeCertificateCredential(file: string, certificate: Issued): void {
    writeFileSync(
      file,
      JSON.stringify({
        apiVersion: execCredential,
        kind: "ExecCredential",
        status: { clientCertificateData: certificate.certPem, clientKeyData: certificate.keyPem }
      })
    )
  }
}

export interface ExecSection {
  readonly command: string
  readonly args?: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string>>
  readonly installHint?: string
  readonly provideClusterInfo?: boolean
}

export type Credential =
  | { readonly token: string }
  | { readonly certificate: Issued }
  | { readonly exec: ExecSection }
  | { readonly none: true }

const userOf = (credential: Credential): Record<string, unknown> => {
  if ("token" in credential) return { token: credential.token }
  if ("certificate" in credential) {
    return {
      "client-certificate-data": Buffer.from(credential.certificate.certPem).toString("base64"),
      "client-key-data": Buffer.from(credential.certificate.keyPem).toString("base64")
    }
  }
  if ("exec" in credential) {
    const exec = credential.exec
    return {
      exec: {
        apiVersion: execCredential,
        command: exec.command,
        args: exec.args ?? [],
        env: Object.entries(exec.env).map(([name, value]) => ({ name, value })),
        ...(exec.installHint === undefined ? {} : { installHint: exec.installHint }),
        provideClusterInfo: exec.provideClusterInfo ?? false,
        interactiveMode: "Never"
      }
    }
  }
  return {}
}

/** A kubeconfig for `server`, trusting `caPem`, with one user holding `credential`. */
export const writeKubeconfig = (file: string, server: string, caPem: string, credential: Credential): string => {
  writeFileSync(
    file,
    stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "front", cluster: { server, "certificate-authority-data": Buffer.from(caPem).toString("base64") } }],
      users: [{ name: "front", user: userOf(credential) }],
      contexts: [{ name: "front", context: { cluster: "front", user: "front", namespace: "default" } }],
      "current-context": "front"
    }),
    { mode: 0o600 }
  )
  return file
}
