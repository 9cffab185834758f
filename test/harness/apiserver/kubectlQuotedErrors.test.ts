// Issue 24: what a user wrote comes back from the embedded API server quoted, escaped and bounded,
// as kubectl prints it to a terminal: an image reference holding ESC ] 0 ; ... BEL (a terminal title
// escape) and a bidi override, and a 5,000-character one. Real kubectl; skips (visibly) without it.
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { maxQuotedCharacters } from "../../../src/api/goQuote.ts"
import { notPrintableAscii } from "../../../src/api/goQuoteCel.ts"
import { rawControls } from "../../support/hostileText.ts"
import { hasKubectl, kubectlFor, kubectlPath } from "./kubectlClient.ts"
import type { Kubectl } from "./kubectlClient.ts"
import { startServer, unique } from "./serverHarness.ts"
import type { RunningServer } from "./serverHarness.ts"

if (!hasKubectl) console.warn(`SKIPPED: the kubectl tests need ${kubectlPath}, which is not installed here`)

const title = hasKubectl ? "kubectl: user strings in errors" : `kubectl: user strings in errors (SKIPPED: no ${kubectlPath})`

// CRD rules only, as on a real cluster; and with the project's decoders as an admission webhook.
let plain: RunningServer
let webhook: RunningServer
beforeAll(async () => {
  if (!hasKubectl) return
  plain = await startServer()
  webhook = await startServer({ decoderAdmission: true })
})
afterAll(async () => {
  if (!hasKubectl) return
  await plain.close()
  await webhook.close()
})

// YAML's double-quoted escapes write the raw characters into the object: ESC ] 0 ; pwned BEL, then U+202E.
const hostileYaml = String.raw`"nginx\e]0;pwned\a\u202e:latest"`

const apply = async (kubectl: Kubectl, text: string) => {
  const file = join(kubectl.directory, `${unique("manifest")}.yaml`)
  writeFileSync(file, text)
  return kubectl(["apply", "-f", file])
}

const imagePullJob = (image: string) => `apiVersion: apps.kruise.io/v1beta1
kind: ImagePullJob
metadata:
  name: bad
  namespace: default
spec:
  image: ${image}
`

const nodeImage = (name: string, tag: string) => `apiVersion: apps.kruise.io/v1beta1
kind: NodeImage
metadata:
  name: ${name}
spec:
  images:
    nginx:
      tags:
      - tag: ${tag}
`

describe.skipIf(!hasKubectl)(title, () => {
  it("a terminal title escape in an image is refused without the escape: the CRD rule leaves it out", async () => {
    const result = await apply(kubectlFor(plain), imagePullJob(hostileYaml))
    expect(result.code).not.toBe(0)
    expect(result.stderr).toBe(
      `The ImagePullJob "bad" is invalid: spec.image: Invalid value: "string": invalid image ${notPrintableAscii}: invalid reference format\n`
    )
    expect(rawControls(result.stderr)).toEqual([])
  })

  it("a 5,000-character image is refused in bounded words", async () => {
    const image = `registry.example.com/${"a".repeat(5000)}`
    const result = await apply(kubectlFor(plain), imagePullJob(image))
    expect(result.code).not.toBe(0)
    // The schema's words omit the value (apimachinery's TooLong); the rule's, run as well, cut it.
    expect(result.stderr).toBe(
      'The ImagePullJob "bad" is invalid: \n' +
        "* spec.image: Too long: may not be more than 256 bytes\n" +
        `* spec.image: Invalid value: "string": invalid image "${image.slice(0, maxQuotedCharacters)}"...: repository name must not be more than 255 characters\n`
    )
  })

  it("a NodeImage tag with a terminal title escape: the webhook's message quotes it escaped", async () => {
    const name = unique("node")
    const result = await apply(kubectlFor(webhook), nodeImage(name, String.raw`"v1\e]0;pwned\a\u202e"`))
    expect(result.code).not.toBe(0)
    expect(result.stderr).toContain(
      `spec.images.nginx.tags[0].tag: Invalid value: invalid image "nginx:v1\\x1b]0;pwned\\a\\u202e": invalid tag format`
    )
    expect(rawControls(result.stderr)).toEqual([])
  })

  it("a label value with a terminal title escape is quoted escaped, as apimachinery's %q does", async () => {
    const manifest = imagePullJob("nginx").replace(
      "  name: bad\n",
      `  name: bad\n  labels:\n    app: ${String.raw`"x\e]0;pwned\a\u202e"`}\n`
    )
    const result = await apply(kubectlFor(plain), manifest)
    expect(result.code).not.toBe(0)
    expect(result.stderr).toContain('metadata.labels: Invalid value: "x\\x1b]0;pwned\\a\\u202e": ')
    expect(rawControls(result.stderr)).toEqual([])
  })
})
