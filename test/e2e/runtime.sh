#!/usr/bin/env bash
# A real container runtime for the end-to-end tests: containerd with its own root, state and
# socket, a plain registry and an htpasswd-protected one, all on loopback under one temp dir.
# Nothing here touches the packaged services or the default socket.
#
#   test/e2e/runtime.sh start    install what is missing (apt), start, wait, write the env file
#   test/e2e/runtime.sh stop     stop what start started and remove the dir
#   test/e2e/runtime.sh status   exit 0 when everything answers
#   test/e2e/runtime.sh restart-containerd
#                                stop containerd (SIGTERM, as a service restart does) and start it
#                                again with the same config, socket and store; registries untouched
#
# Settings (environment): PREHEAT_E2E_DIR (default /tmp/preheat-e2e),
# PREHEAT_E2E_REGISTRY_PORT (5055), PREHEAT_E2E_AUTH_REGISTRY_PORT (5056),
# PREHEAT_E2E_SNAPSHOTTER (overlayfs or native; default: overlayfs where the kernel allows it).
set -euo pipefail

DIR="${PREHEAT_E2E_DIR:-/tmp/preheat-e2e}"
PLAIN_PORT="${PREHEAT_E2E_REGISTRY_PORT:-5055}"
AUTH_PORT="${PREHEAT_E2E_AUTH_REGISTRY_PORT:-5056}"
ENV_FILE="$DIR/env"
SOCKET="$DIR/containerd.sock"
USER_NAME="preheat"

log() { printf 'runtime.sh: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# --- packages -------------------------------------------------------------------------------

missing_commands() {
  local missing=()
  command -v containerd >/dev/null || missing+=(containerd)
  command -v ctr >/dev/null || missing+=(containerd)
  command -v docker-registry >/dev/null || missing+=(docker-registry)
  command -v htpasswd >/dev/null || missing+=(apache2-utils)
  command -v curl >/dev/null || missing+=(curl)
  # The image test (test/system/image.system.ts): run containers, push the OCI layout, and
  # npm run build:image's arm64 half (strip, and the libraries the arm64 executable loads).
  command -v runc >/dev/null || missing+=(runc)
  command -v skopeo >/dev/null || missing+=(skopeo)
  command -v aarch64-linux-gnu-strip >/dev/null || missing+=(binutils-aarch64-linux-gnu)
  [ -e /usr/aarch64-linux-gnu/lib/libstdc++.so.6 ] || missing+=(libstdc++6-arm64-cross)
  [ -e /usr/aarch64-linux-gnu/lib/libgcc_s.so.1 ] || missing+=(libgcc-s1-arm64-cross)
  [ -e /usr/aarch64-linux-gnu/lib/libc.so.6 ] || missing+=(libc6-arm64-cross)
  # Runs the arm64 image's executable on its own root file system (no binfmt registration needed).
  command -v qemu-aarch64-static >/dev/null || missing+=(qemu-user-static)
  # promtool checks and unit-tests deploy/monitoring/alerts.yaml (test/e2e/alerts.test.ts).
  command -v promtool >/dev/null || missing+=(prometheus)
  # One package may provide several commands: list each package once.
  printf '%s\n' "${missing[@]}" | sort -u | grep -v '^$' || true
}

ensure_packages() {
  local packages
  packages="$(missing_commands | tr '\n' ' ')"
  [ -z "${packages// /}" ] && return 0
  [ "$(id -u)" -eq 0 ] || die "missing packages: $packages(need root to apt-get install them)"
  log "installing: $packages"
  # Keep the packages' own services from starting on their default socket and port 5000.
  local own_policy=""
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
    own_policy=1
  fi
  local ok=1
  # shellcheck disable=SC2086
  if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $packages; } \
    >"${TMPDIR:-/tmp}/preheat-e2e-apt.log" 2>&1; then
    ok=0
  fi
  [ -n "$own_policy" ] && rm -f /usr/sbin/policy-rc.d
  local still
  still="$(missing_commands | tr '\n' ' ')"
  if [ "$ok" -eq 0 ] || [ -n "${still// /}" ]; then
    tail -n 20 "${TMPDIR:-/tmp}/preheat-e2e-apt.log" >&2 || true
    die "missing after apt-get install: ${still:-$packages}(see apt-cache policy ${still:-$packages})"
  fi
}

# --- processes ------------------------------------------------------------------------------

pid_alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

start_bg() { # name, command...
  local name="$1"; shift
  setsid "$@" >"$DIR/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$DIR/$name.pid"
}

stop_pids() { # pid files: TERM all at once, then wait (the registries take 2 s to drain)
  local file pids=() i
  for file in "$@"; do
    [ -f "$file" ] || continue
    pids+=("$(cat "$file")")
    rm -f "$file"
  done
  [ "${#pids[@]}" -gt 0 ] || return 0
  kill -TERM "${pids[@]}" 2>/dev/null || true
  any_alive() { local p; for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && return 0; done; return 1; }
  for i in $(seq 1 50); do any_alive || break; sleep 0.1; done
  for i in "${pids[@]}"; do kill -KILL "$i" 2>/dev/null || true; done
  return 0
}

wait_until() { # seconds, description, command...
  local seconds="$1" what="$2"; shift 2
  local deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.05
  done
  log "$what answers"
}

# --- containerd -----------------------------------------------------------------------------

# overlayfs needs a kernel that lets us mount it here (not inside every container).
overlay_allowed() {
  local t="$DIR/overlay-probe"
  mkdir -p "$t/lower" "$t/upper" "$t/work" "$t/merged"
  if mount -t overlay overlay -o "lowerdir=$t/lower,upperdir=$t/upper,workdir=$t/work" "$t/merged" 2>/dev/null; then
    umount "$t/merged"; rm -rf "$t"; return 0
  fi
  rm -rf "$t"; return 1
}

write_containerd_config() { # snapshotter
  cat >"$DIR/containerd.toml" <<EOF
version = 2
root = "$DIR/containerd/root"
state = "$DIR/containerd/state"

[grpc]
  address = "$SOCKET"

[ttrpc]
  address = ""

[debug]
  level = "info"

[plugins."io.containerd.internal.v1.opt"]
  path = "$DIR/containerd/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "localhost/preheat-e2e/pause:none"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "$1"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$DIR/cni/bin"
    conf_dir = "$DIR/cni/conf"
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "$DIR/certs.d"
EOF
}

containerd_answers() { ctr --address "$SOCKET" version; }

# The CRI plugin loads last; it fails to load when the snapshotter it names did not.
cri_ready() {
  ctr --address "$SOCKET" plugins ls 2>/dev/null | awk '$1 == "io.containerd.grpc.v1" && $2 == "cri" && $4 == "ok" { found = 1 } END { exit !found }'
}

snapshotter_ok() { # name
  ctr --address "$SOCKET" plugins ls 2>/dev/null | awk -v s="$1" '$1 == "io.containerd.snapshotter.v1" && $2 == s && $4 == "ok" { found = 1 } END { exit !found }'
}

start_containerd() { # snapshotter
  write_containerd_config "$1"
  start_bg containerd containerd --config "$DIR/containerd.toml"
  wait_until 20 "containerd ($1)" containerd_answers || { tail -n 30 "$DIR/logs/containerd.log" >&2; die "containerd did not answer on $SOCKET"; }
  wait_until 10 "CRI plugin" cri_ready || true
  snapshotter_ok "$1" && cri_ready
}

# --- registries -----------------------------------------------------------------------------

write_registry_config() { # name, port, extra yaml
  cat >"$DIR/$1.yml" <<EOF
version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $DIR/$1-data
  delete:
    enabled: true
http:
  addr: 127.0.0.1:$2
$3
EOF
}

registry_answers() { # port, expected status
  [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$1/v2/")" = "$2" ]
}

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# --- subcommands ----------------------------------------------------------------------------

status() {
  local ok=0
  if pid_alive "$DIR/containerd.pid" && containerd_answers >/dev/null 2>&1 && cri_ready; then
    log "containerd: running, CRI answers on $SOCKET"
  else log "containerd: not running"; ok=1; fi
  if pid_alive "$DIR/registry.pid" && registry_answers "$PLAIN_PORT" 200; then
    log "registry: running on 127.0.0.1:$PLAIN_PORT"
  else log "registry: not running"; ok=1; fi
  if pid_alive "$DIR/auth-registry.pid" && registry_answers "$AUTH_PORT" 401; then
    log "auth registry: running on 127.0.0.1:$AUTH_PORT"
  else log "auth registry: not running"; ok=1; fi
  [ -f "$ENV_FILE" ] || { log "env file: absent"; ok=1; }
  return $ok
}

stop() {
  stop_pids "$DIR/containerd.pid" "$DIR/registry.pid" "$DIR/auth-registry.pid"
  # Unpacking mounts snapshots briefly; a killed containerd may leave one behind.
  if [ -d "$DIR" ]; then
    grep -F " $DIR/" /proc/mounts | awk '{ print $2 }' | sort -r | while read -r m; do umount -l "$m" || true; done || true
    rm -rf "$DIR"
  fi
  log "stopped"
}

start() {
  [ "$(id -u)" -eq 0 ] || die "containerd needs root"
  if status >/dev/null 2>&1; then log "already running; env file $ENV_FILE"; return 0; fi
  stop >/dev/null 2>&1 || true
  ensure_packages
  for p in "$PLAIN_PORT" "$AUTH_PORT"; do port_free "$p" || die "port 127.0.0.1:$p is in use (set PREHEAT_E2E_REGISTRY_PORT / PREHEAT_E2E_AUTH_REGISTRY_PORT)"; done

  mkdir -p "$DIR/logs" "$DIR/cni/bin" "$DIR/cni/conf" "$DIR/certs.d" "$DIR/containerd"
  chmod 700 "$DIR"

  # A fresh password each start; low bcrypt cost, since cost 12 adds a second to every pull.
  local password
  password="$(head -c 18 /dev/urandom | base64 | tr -d '/+=')"
  htpasswd -nbB -C 4 "$USER_NAME" "$password" | head -n 1 >"$DIR/htpasswd"

  write_registry_config registry "$PLAIN_PORT" ""
  write_registry_config auth-registry "$AUTH_PORT" "auth:
  htpasswd:
    realm: preheat-e2e
    path: $DIR/htpasswd"
  start_bg registry docker-registry serve "$DIR/registry.yml"
  start_bg auth-registry docker-registry serve "$DIR/auth-registry.yml"

  local snapshotter="${PREHEAT_E2E_SNAPSHOTTER:-}"
  if [ -z "$snapshotter" ]; then
    if overlay_allowed; then snapshotter=overlayfs; else snapshotter=native; log "overlay mounts not allowed here: native snapshotter"; fi
  fi
  if ! start_containerd "$snapshotter"; then
    [ "$snapshotter" = native ] && { tail -n 30 "$DIR/logs/containerd.log" >&2; die "containerd's CRI plugin did not load"; }
    log "snapshotter $snapshotter did not load: restarting containerd with native"
    stop_pids "$DIR/containerd.pid"
    snapshotter=native
    start_containerd native || { tail -n 30 "$DIR/logs/containerd.log" >&2; die "containerd's CRI plugin did not load"; }
  fi

  wait_until 10 "registry" registry_answers "$PLAIN_PORT" 200 || { cat "$DIR/logs/registry.log" >&2; die "registry did not answer on 127.0.0.1:$PLAIN_PORT"; }
  wait_until 10 "auth registry" registry_answers "$AUTH_PORT" 401 || { cat "$DIR/logs/auth-registry.log" >&2; die "auth registry did not answer on 127.0.0.1:$AUTH_PORT"; }

  umask 077
  cat >"$ENV_FILE.tmp" <<EOF
PREHEAT_E2E_DIR=$DIR
PREHEAT_E2E_SOCKET=$SOCKET
PREHEAT_E2E_SNAPSHOTTER=$snapshotter
PREHEAT_E2E_REGISTRY=127.0.0.1:$PLAIN_PORT
PREHEAT_E2E_AUTH_REGISTRY=127.0.0.1:$AUTH_PORT
PREHEAT_E2E_USER=$USER_NAME
PREHEAT_E2E_PASSWORD=$password
EOF
  mv "$ENV_FILE.tmp" "$ENV_FILE"
  log "ready in ${SECONDS}s; env file $ENV_FILE"
}

restart_containerd() {
  [ "$(id -u)" -eq 0 ] || die "containerd needs root"
  [ -f "$ENV_FILE" ] || die "no runtime started in $DIR (no $ENV_FILE)"
  local snapshotter
  snapshotter="$(sed -n 's/^PREHEAT_E2E_SNAPSHOTTER=//p' "$ENV_FILE")"
  [ -n "$snapshotter" ] || die "$ENV_FILE names no snapshotter"
  stop_pids "$DIR/containerd.pid"
  start_containerd "$snapshotter" || { tail -n 30 "$DIR/logs/containerd.log" >&2; die "containerd did not come back"; }
  log "containerd restarted in ${SECONDS}s"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  restart-containerd) restart_containerd ;;
  *) echo "usage: $0 start|stop|status|restart-containerd" >&2; exit 2 ;;
esac
