import { Console, Effect, FileSystem, Option, Path } from "effect"
import { Command, Flag } from "effect/cli"
import { crdFileName, crdOf, kinds, renderCrd, renderCrds } from "../api/crd/manifests.ts"

const writeFiles = Effect.fnUntraced(function* (directory: string) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  yield* fs.makeDirectory(directory, { recursive: true })
  for (const kind of kinds) {
    const file = path.join(directory, crdFileName(kind))
    yield* fs.writeFileString(file, renderCrd(crdOf(kind)))
    yield* Console.error(`wrote ${file}`)
  }
})

export const crdsCommand = Command.make(
  "crds",
  {
    out: Flag.Directory("out", { mustExist: false }).pipe(
      Flag.withDescription("Write one file per CRD into this directory instead of printing them."),
      Flag.optional
    )
  },
  ({ out }) => Option.match(out, { onNone: () => Console.log(renderCrds()), onSome: writeFiles })
).pipe(
  Command.withDescription(
    "Print the CustomResourceDefinitions of ImagePullJob, ImageListPullJob, NodeImage and AdvancedCronJob (kubectl apply -f -)."
  )
)
