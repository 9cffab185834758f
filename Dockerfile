# syntax=docker/dockerfile:1
#
# The preheat image: one file, dist/preheat.mjs (esbuild bundle, nothing external), on a
# distroless Node 24 as non-root. The controller and the daemon are the same image with
# different arguments (deploy/controller.yaml: `controller ...`, deploy/daemon.yaml: `daemon ...`).
#
#   docker build -t preheat:0.1.0 .
#
# NOTE: this Dockerfile has not been built here: the development machines have no Docker (or
# other OCI build) engine. test/deploy/manifests.test.ts checks it statically (stages, user,
# entrypoint) against the manifests.

# --- build: npm ci && npm run build -> dist/preheat.mjs -------------------------------------
FROM node:24-bookworm-slim AS build
WORKDIR /src
# Dependencies first, so a source change does not re-run npm ci. The optional node-linux-*
# packages (for the single executable, not used in the image) come along; harmless here.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json build.ts ./
COPY src ./src
COPY layers ./layers
RUN npm run build \
 && node dist/preheat.mjs version

# --- run: distroless Node 24, no shell, no package manager ---------------------------------
FROM gcr.io/distroless/nodejs24-debian12:nonroot
WORKDIR /app
COPY --from=build /src/dist/preheat.mjs /app/preheat.mjs
# 65532 = "nonroot" in distroless; numeric so that runAsNonRoot can verify it. The DaemonSet
# overrides it with uid 0 to reach the root-owned CRI socket (see deploy/daemon.yaml).
USER 65532:65532
ENV NODE_ENV=production
EXPOSE 8080 10221
# `preheat`: the role and its flags are the container args.
ENTRYPOINT ["/nodejs/bin/node", "/app/preheat.mjs"]
CMD ["--help"]
