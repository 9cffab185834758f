/** A core/v1 Event the controller emits about one object, before it is given its involvedObject. */
export interface ObjectEvent {
  readonly type: "Normal" | "Warning"
  readonly reason: string
  readonly message: string
}
