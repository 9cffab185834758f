#!/bin/bash
# shipped.sh "ENV" CMD... : starts an apiserver (once, cached), a NodeImage, then the daemon CMD; prints idle rss
cd /work/main
KC=/tmp/hb/kc
if ! curl -sf "$(cat /tmp/hb/apiurl 2>/dev/null)/healthz" >/dev/null 2>&1; then
  npx node dist/preheat.mjs apiserver --kubeconfig-out $KC > /tmp/hb/apiserver.log 2>&1 &
  echo $! > /tmp/hb/apiserver.pid
  for i in $(seq 50); do [ -s $KC ] && break; sleep 0.2; done
  grep -o 'server: .*' $KC | head -1 | cut -d' ' -f2 > /tmp/hb/apiurl
  printf 'apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n' | kubectl --kubeconfig $KC apply -f - >/dev/null
  printf 'apiVersion: apps.kruise.io/v1alpha1\nkind: NodeImage\nmetadata: {name: n1}\nspec: {}\n' | kubectl --kubeconfig $KC apply -f - >/dev/null
fi
ENVS=$1; shift
env $ENVS NODE_OPTIONS="$NOPTS" NODE_NAME=n1 "$@" daemon --kubeconfig $KC --runtime-socket /tmp/preheat-e2e/containerd.sock --metrics-port 0 --metrics-host 127.0.0.1 --log-format json > /tmp/hb/daemon.log 2>&1 &
P=$!
sleep 1
for i in $(seq 100); do grep -q -i 'synced\|watch' /tmp/hb/daemon.log && break; sleep 0.1; done
sleep 4
S=""; for i in $(seq 10); do S="$S $(awk '/VmRSS/{print $2}' /proc/$P/status)"; sleep 0.1; done
MED=$(echo $S | tr ' ' '\n' | sort -n | sed -n 6p)
A=$(awk '/RssAnon/{print $2}' /proc/$P/status); F=$(awk '/RssFile/{print $2}' /proc/$P/status)
echo "idle_rss $(echo "scale=1; $MED/1024" | bc) MiB anon $(echo "scale=1; $A/1024" | bc) file $(echo "scale=1; $F/1024" | bc)  [$ENVS $*]"
[ -n "$HOOK" ] && $HOOK $P
kill $P; wait $P 2>/dev/null
