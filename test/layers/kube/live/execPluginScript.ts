// Exec credential plugins for the live client's tests: shell scripts in a temp dir that count
// their runs in a file, so a test sees how often the client ran them.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

export const execV1 = "client.authentication.k8s.io/v1"

const root = mkdtempSync(join(tmpdir(), "preheat-exec-"))
let made = 0

export interface Plugin {
  readonly command: string
  readonly dir: string
  /** How many times it ran so far. */
  readonly runs: () => number
}

/** A shell plugin: `body` runs after the run is counted, with $N this run's number and $DIR the plugin's directory. */
export const plugin = (body: string): Plugin => {
  const dir = join(root, `plugin-${++made}`)
  mkdirSync(dir)
  const command = join(dir, "plugin.sh")
  const count = `DIR="${dir}"\necho run >> "$DIR/runs"\nN=$(wc -l < "$DIR/runs" | tr -d ' ')`
  writeFileSync(command, `#!/bin/sh\n${count}\n${body}\n`, { mode: 0o755 })
  const runs = () => (existsSync(join(dir, "runs")) ? readFileSync(join(dir, "runs"), "utf8").split("\n").length - 1 : 0)
  return { command, dir, runs }
}

/** Hands out token `t-<run>`, expiring at $EXPIRES (RFC 3339) when the kubeconfig's env sets it. */
export const tokenPlugin = (): Plugin =>
  plugin(
    [
      'if [ -n "$EXPIRES" ]; then expiry=",\\"expirationTimestamp\\":\\"$EXPIRES\\""; fi',
      `printf '{"apiVersion":"${execV1}","kind":"ExecCredential","status":{"token":"t-%s"%s}}' "$N" "$expiry"`
    ].join("\n")
  )

/** Hands out the ExecCredential in `$DIR/credential-<run>.json`, or the last one written. */
export const filePlugin = (): Plugin & { readonly write: (run: number, status: Record<string, unknown>) => void } => {
  const made = plugin(
    'file="$DIR/credential-$N.json"\nif [ ! -f "$file" ]; then file=$(ls "$DIR"/credential-*.json | sort -V | tail -n 1); fi\ncat "$file"'
  )
  return {
    ...made,
    write: (run, status) =>
      writeFileSync(join(made.dir, `credential-${run}.json`), JSON.stringify({ apiVersion: execV1, kind: "ExecCredential", status }))
  }
}
