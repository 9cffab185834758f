import type { ImageTagStatus } from "../api/nodeImage.ts"
import { rfc3339 } from "../api/time.ts"
import type { TagTask } from "./tagTask.ts"

const base = (task: TagTask, startedAt: number) => ({ tag: task.tag, version: task.version, startTime: rfc3339(startedAt) })

export const waitingStatus = (task: TagTask, startedAt: number, message?: string): ImageTagStatus => ({
  ...base(task, startedAt),
  phase: "Waiting",
  progress: 0,
  ...(message === undefined ? {} : { message })
})

export const pullingStatus = (task: TagTask, startedAt: number, progress: number, message?: string): ImageTagStatus => ({
  ...base(task, startedAt),
  phase: "Pulling",
  progress,
  ...(message === undefined ? {} : { message })
})

export const succeededStatus = (
  task: TagTask,
  startedAt: number,
  completedAt: number,
  imageID: string,
  message: string,
  digest: string | undefined,
  authenticated = false
): ImageTagStatus => ({
  ...base(task, startedAt),
  phase: "Succeeded",
  progress: 100,
  completionTime: rfc3339(completedAt),
  imageID,
  ...(digest === undefined ? {} : { digest }),
  ...(authenticated ? { authenticated } : {}),
  message
})

export const failedStatus = (task: TagTask, startedAt: number, completedAt: number, progress: number, message: string): ImageTagStatus => ({
  ...base(task, startedAt),
  phase: "Failed",
  progress,
  completionTime: rfc3339(completedAt),
  message
})
