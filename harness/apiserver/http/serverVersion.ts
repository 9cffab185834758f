/**
 * What /version reports. kubectl on these machines is a dispatcher that runs the kubectl minor
 * matching the server's, so the server claims the Kubernetes minor whose API it follows: 1.32.
 */
export const kubernetesVersion = {
  major: "1",
  minor: "32",
  gitVersion: "v1.32.0",
  gitCommit: "preheat-embedded-apiserver",
  gitTreeState: "clean",
  buildDate: "2026-01-01T00:00:00Z",
  goVersion: "go1.23.6",
  compiler: "gc",
  platform: "linux/amd64"
} as const
