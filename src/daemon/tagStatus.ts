import type { ImageTagStatus } from "../api/nodeImage.ts"
import type { TagTask } from "./tagTask.ts"

/** RFC 3339 in whole seconds, as metav1.Time serialises. */
export const timestamp = (millis: number): string => new Date(millis).toISOString().replace(/\.\d{3}Z$/, "Z")

const base = (task: TagTask, startedAt: number) => ({ tag: task.tag, version: task.version, startTime: timestamp(startedAt) })

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
  message: string
): ImageTagStatus => ({
  ...base(task, startedAt),
  phase: "Succeeded",
  progress: 100,
  completionTime: timestamp(completedAt),
  imageID,
  message
})

export const failedStatus = (
  task: TagTask,
  startedAt: number,
  completedAt: number,
  progress: number,
  message: string
): ImageTagStatus => ({
  ...base(task, startedAt),
  phase: "Failed",
  progress,
  completionTime: timestamp(completedAt),
  message
})
