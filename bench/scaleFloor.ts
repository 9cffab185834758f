/**
 * The controller's floor measured inside a bench:scale run, the way bench:client measures it
 * (docs/benchmarks.md, "What the goals need"): what a plain node:http client spends on one NodeImage
 * patch (keep-alive agent, the answer read and JSON.parse'd) against the run's own API server, and
 * what one JSON.parse of that NodeImage costs. Per node and job a controller sends at least its task
 * write and reads the three versions it causes (the task, Pulling, the outcome): the floor is
 * 1 x request + 3 x parse. Measured in this process's CPU, on the same machine under the same load
 * as the run it follows.
 */
import http from "node:http"

export interface Floor {
  readonly requestUs: number
  readonly parseUs: number
  readonly usPerNodeJob: number
}

/** A label that makes the controller leave the probe alone (upstream's NodeImage without a Node). */
const fakeNodeImageLabel = "apps.kruise.io/fake-nodeimage"
const collection = "/apis/apps.kruise.io/v1alpha1/nodeimages"

const send = (agent: http.Agent, url: string, method: string, contentType: string, body: unknown) =>
  new Promise<string>((done, fail) => {
    const request = http.request(
      url,
      { method, agent, headers: { "content-type": contentType, accept: "application/json" } },
      (response) => {
        const chunks: Array<Buffer> = []
        response.on("data", (chunk: Buffer) => chunks.push(chunk))
        response.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8")
          JSON.parse(text)
          const status = response.statusCode ?? 0
          status >= 200 && status < 300 ? done(text) : fail(new Error(`${method} ${url}: HTTP ${status}: ${text.slice(0, 300)}`))
        })
      }
    )
    request.once("error", fail)
    request.end(JSON.stringify(body))
  })

/**
 * `requests` merge patches (an annotation) of a NodeImage shaped as `model` (a NodeImage of the
 * finished run: J tags in the spec, their outcomes in the status), `concurrency` at a time.
 */
export const measureFloor = async (server: string, model: any, requests = 2000, concurrency = 10): Promise<Floor> => {
  const agent = new http.Agent({ keepAlive: true })
  const name = "bench-floor-probe"
  const url = `${server}${collection}/${name}`
  await send(agent, `${server}${collection}`, "POST", "application/json", {
    apiVersion: "apps.kruise.io/v1alpha1",
    kind: "NodeImage",
    metadata: { name, labels: { ...model.metadata.labels, [fakeNodeImageLabel]: "true" } },
    spec: model.spec
  })
  await send(agent, `${url}/status`, "PATCH", "application/merge-patch+json", { status: model.status })
  let answer = ""
  const patch = async (i: number) => {
    answer = await send(agent, url, "PATCH", "application/merge-patch+json", { metadata: { annotations: { n: String(i) } } })
  }
  await patch(-1)
  let next = 0
  const started = process.cpuUsage()
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < requests) await patch(next++)
    })
  )
  const used = process.cpuUsage(started)
  const requestUs = (used.user + used.system) / requests
  const parseStarted = process.cpuUsage()
  for (let i = 0; i < requests; i++) JSON.parse(answer)
  const parsed = process.cpuUsage(parseStarted)
  const parseUs = (parsed.user + parsed.system) / requests
  agent.destroy()
  return { requestUs, parseUs, usPerNodeJob: requestUs + 3 * parseUs }
}
