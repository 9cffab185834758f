/**
 * Digest consistency on a real containerd and registry: the controller and two node daemons in one
 * process, on the in-memory API server, both nodes pulling through the e2e suite's containerd. The
 * first node pulls tag `t` while it names image A; the tag is moved to image B in the registry
 * before the second node pulls: the job lists both digests (each the registry's manifest digest)
 * with DigestMismatch and one Warning. An edit of the job (a new generation, imagePullPolicy
 * Always) pulls again on both nodes, which converge on B.
 */
import { randomBytes } from "node:crypto"
import { Effect, Exit, Scope } from "effect"
import { expect, it } from "vitest"
import type { ImagePullJobStatus } from "../../src/api/imagePullJob.ts"
import type { ImageTagStatus } from "../../src/api/nodeImage.ts"
import { defaultSettings } from "../../src/controller/settings.ts"
import { makeController } from "../../src/controller/controller.ts"
import { startDaemon } from "../../src/daemon/daemon.ts"
import { daemonOptions } from "../../src/daemon/options.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import { buildImage, publishImage, pushImage, type Registry } from "../support/imageBuilder.ts"
import { eventually } from "../support/eventually.ts"
import { inProcessDaemons } from "./daemonRuntime.ts"
import { describeE2e } from "./describeE2e.ts"

const run = randomBytes(4).toString("hex")

const readyNode = (name: string): KubeObject => ({
  apiVersion: "v1",
  kind: "Node",
  metadata: { name, labels: { "kubernetes.io/hostname": name } },
  status: { conditions: [{ type: "Ready", status: "True", lastTransitionTime: "1970-01-01T00:00:00Z" }] }
})

/** The digest the registry itself gives for `repository:tag` (Docker-Content-Digest of the manifest). */
const registryDigest = async (registry: Registry, repository: string, tag: string): Promise<string> => {
  const response = await fetch(`http://${registry.host}/v2/${repository}/manifests/${tag}`, {
    method: "HEAD",
    headers: { accept: "application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json" }
  })
  const digest = response.headers.get("docker-content-digest")
  if (!response.ok || digest === null) throw new Error(`HEAD ${repository}:${tag}: ${response.status}`)
  return digest
}

describeE2e("digest consistency against a real containerd", (e) => {
  const plain: Registry = { host: e.registry }
  const daemons = inProcessDaemons(e, run, { progressInterval: "100 millis" })
  const { exec } = daemons

  /** Polls `read` until `done` holds (generous: the machine is shared). */
  const until = async <A>(what: string, read: () => Promise<A>, done: (value: A) => boolean, timeoutMillis = 120_000): Promise<A> => {
    const reached = await eventually(
      what,
      async () => {
        const value = await read()
        if (!done(value)) throw new Error(`last: ${JSON.stringify(value)}`)
        return { value }
      },
      timeoutMillis,
      50
    )
    return reached.value
  }

  it("records the registry's manifest digest per node, flags a tag moved mid-job, and converges on a new generation", async () => {
    const repository = `e2e/digest-moving-${run}`
    const name = `${e.registry}/${repository}`
    const nodes = [`digest-a-${run}`, `digest-b-${run}`]
    const first = await publishImage(plain, repository, [{ size: 60_000, seed: `${run}-digest-1` }], ["t"])
    const firstDigest = await registryDigest(plain, repository, "t")
    expect(firstDigest).toBe(first.digest)

    const scope = await exec(Scope.make())
    const daemon = (node: string) =>
      exec(Effect.flatMap(startDaemon(daemonOptions({ nodeName: node })).pipe(Scope.provide(scope)), (d) => d.synced))
    try {
      for (const node of nodes) await exec(daemons.api.create(resources.node, readyNode(node)))
      const controller = await exec(makeController(defaultSettings).pipe(Scope.provide(scope)))
      await exec(Effect.forkIn(controller.reconcile(), scope))
      await exec(controller.synced)
      // Only the first node's daemon runs: the second node's tag waits there while the tag moves.
      await daemon(nodes[0]!)
      await exec(
        daemons.api.create(resources.imagePullJob, {
          apiVersion: "apps.kruise.io/v1alpha1",
          kind: "ImagePullJob",
          metadata: { name: `digest-${run}`, namespace: "default" },
          spec: {
            image: `${name}:t`,
            imagePullPolicy: "Always",
            parallelism: 1,
            selector: { names: nodes },
            completionPolicy: { type: "Always" }
          }
        })
      )
      const tagOf = async (node: string): Promise<ImageTagStatus | undefined> => {
        const object = await exec(daemons.api.get(resources.nodeImage, { name: node }))
        const status = object["status"] as { imageStatuses?: Record<string, { tags: ReadonlyArray<ImageTagStatus> }> } | undefined
        return status?.imageStatuses?.[name]?.tags.find((t) => t.tag === "t")
      }
      const pulledA = await until(
        `${nodes[0]} pulled`,
        () => tagOf(nodes[0]!),
        (s) => s?.phase === "Succeeded"
      )
      expect(pulledA).toMatchObject({ imageID: first.imageId, digest: firstDigest })

      const second = await pushImage(plain, repository, buildImage([{ size: 60_000, seed: `${run}-digest-2` }]), ["t"])
      const secondDigest = await registryDigest(plain, repository, "t")
      expect(secondDigest).toBe(second.digest)
      expect(secondDigest).not.toBe(firstDigest)
      await daemon(nodes[1]!)
      const pulledB = await until(
        `${nodes[1]} pulled`,
        () => tagOf(nodes[1]!),
        (s) => s?.phase === "Succeeded"
      )
      expect(pulledB).toMatchObject({ imageID: second.imageId, digest: secondDigest })

      const jobStatus = async () =>
        (await exec(daemons.api.get(resources.imagePullJob, { name: `digest-${run}`, namespace: "default" })))["status"] as
          | ImagePullJobStatus
          | undefined
      const condition = (status: ImagePullJobStatus | undefined) => status?.conditions?.find((c) => c.type === "DigestMismatch")
      const mixed = await until("DigestMismatch", jobStatus, (s) => condition(s)?.status === "True" && s?.completionTime !== undefined)
      expect([...(mixed?.imageDigests ?? [])].sort((x, y) => x.digest.localeCompare(y.digest))).toEqual(
        [
          { digest: firstDigest, nodes: 1 },
          { digest: secondDigest, nodes: 1 }
        ].sort((x, y) => x.digest.localeCompare(y.digest))
      )
      expect(condition(mixed)?.message).toContain(`${firstDigest} on ${nodes[0]}`)
      expect(condition(mixed)?.message).toContain(`${secondDigest} on ${nodes[1]}`)
      const warnings = async () =>
        (await exec(daemons.api.list(resources.event, { namespace: "default" }))).items.filter((ev) => ev["reason"] === "DigestMismatch")
      expect(await warnings()).toHaveLength(1)

      // Applying the job again with a change is a new generation: both nodes pull again, and agree.
      await exec(daemons.api.patch(resources.imagePullJob, { name: `digest-${run}`, namespace: "default" }, { spec: { parallelism: 2 } }))
      const converged = await until(
        "the nodes converged",
        jobStatus,
        (s) => s?.observedGeneration === 2 && s.completionTime !== undefined && s.succeeded === 2
      )
      expect(converged?.imageDigests).toEqual([{ digest: secondDigest, nodes: 2 }])
      expect(condition(converged)).toMatchObject({ status: "False", reason: "OneDigest" })
      for (const node of nodes) expect(await tagOf(node)).toMatchObject({ phase: "Succeeded", digest: secondDigest })
      expect(await warnings()).toHaveLength(1)
    } finally {
      await exec(Scope.close(scope, Exit.void))
    }
  })
})
