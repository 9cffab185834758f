/**
 * Kubelet image credential provider plugins for tests, as shell scripts in a bin directory, and
 * CredentialProviderConfig files that use them. Every plugin appends its request (one JSON line)
 * and its arguments to `$RUNS_FILE`; `static` hands out `$USERNAME`/`$PASSWORD` under the key
 * `$REGISTRY` (the config's env, so env passing is proven by the answer itself); `file` those of
 * `$CREDENTIALS_FILE` as it reads at the run.
 */
import { chmodSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { stringify } from "yaml"

export const providerApiVersion = "credentialprovider.kubelet.k8s.io/v1"

const recordRun = ["#!/bin/sh", "request=$(cat)", 'printf \'%s %s\\n\' "$request" "$*" >> "$RUNS_FILE"']

const scripts = {
  /** Credentials from its env, kept for `$CACHE_DURATION` (default 0s: never kept) by registry. */
  static: [
    ...recordRun,
    `printf '{"kind":"CredentialProviderResponse","apiVersion":"${providerApiVersion}","cacheKeyType":"Registry","cacheDuration":"%s","auth":{"%s":{"username":"%s","password":"%s"}}}\\n' "\${CACHE_DURATION:-0s}" "$REGISTRY" "$USERNAME" "$PASSWORD"`
  ],
  /** As `static`, with the credentials read at each run from `$CREDENTIALS_FILE` (`user:password`), which a test rewrites. */
  file: [
    ...recordRun,
    'IFS=: read -r username password < "$CREDENTIALS_FILE"',
    `printf '{"kind":"CredentialProviderResponse","apiVersion":"${providerApiVersion}","cacheKeyType":"Registry","cacheDuration":"%s","auth":{"%s":{"username":"%s","password":"%s"}}}\\n' "\${CACHE_DURATION:-0s}" "$REGISTRY" "$username" "$password"`
  ],
  /** Exits 1, printing what must never reach a message or a log. */
  failing: [
    ...recordRun,
    'echo "plugin-stdout-secret {\\"password\\":\\"$PASSWORD\\"}"',
    'echo "plugin-stderr-secret $PASSWORD" >&2',
    "exit 1"
  ],
  /** Never answers, and starts a child of its own (a process group to kill); records its process group as `pgid N`. */
  hanging: [...recordRun, "sleep 3600 &", 'echo "pgid $$" >> "$RUNS_FILE"', "wait"],
  /** Exits 0 with something that is not a CredentialProviderResponse. */
  "bad-json": [...recordRun, 'echo "username=admin password=$PASSWORD"']
} as const

export type ProviderPluginName = keyof typeof scripts

/** The scripts written to `binDir` (executable), with the file their runs are recorded in. */
export const writeProviderPlugins = (binDir: string): { readonly runsFile: string; readonly runs: () => ReadonlyArray<string> } => {
  const runsFile = join(binDir, "runs.log")
  writeFileSync(runsFile, "")
  for (const [name, lines] of Object.entries(scripts)) {
    const file = join(binDir, name)
    writeFileSync(file, `${lines.join("\n")}\n`)
    chmodSync(file, 0o755)
  }
  return {
    runsFile,
    runs: () =>
      readFileSync(runsFile, "utf8")
        .split("\n")
        .filter((line) => line !== "")
  }
}

export interface TestProvider {
  /** One of the scripts, or a name with no plugin behind it. */
  readonly name: ProviderPluginName | (string & {})
  readonly matchImages: ReadonlyArray<string>
  readonly env?: Readonly<Record<string, string>>
  readonly args?: ReadonlyArray<string>
  readonly defaultCacheDuration?: string
}

/** A CredentialProviderConfig (kubelet.config.k8s.io/v1, YAML) for these providers, each recording to `runsFile`. */
export const providerConfigYaml = (providers: ReadonlyArray<TestProvider>, runsFile: string): string =>
  stringify({
    apiVersion: "kubelet.config.k8s.io/v1",
    kind: "CredentialProviderConfig",
    providers: providers.map((p) => ({
      name: p.name,
      matchImages: p.matchImages,
      defaultCacheDuration: p.defaultCacheDuration ?? "0s",
      apiVersion: providerApiVersion,
      ...(p.args === undefined ? {} : { args: p.args }),
      env: Object.entries({ RUNS_FILE: runsFile, ...p.env }).map(([name, value]) => ({ name, value }))
    }))
  })
