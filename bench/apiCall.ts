// The benches' plain HTTP client of the harness's API server: JSON in and out, a refusal thrown with
// its status and the start of its body.

/** One request to `server` (its base URL); the answer parsed. */
export const apiCall = async (server: string, method: string, path: string, body?: unknown): Promise<any> => {
  const response = await fetch(`${server}${path}`, {
    method,
    headers: { "content-type": "application/json", accept: "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`${method} ${path}: HTTP ${response.status}: ${text.slice(0, 300)}`)
  return JSON.parse(text)
}
