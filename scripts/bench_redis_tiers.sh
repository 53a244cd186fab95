#!/usr/bin/env bash
# The Redis tier's kinds side by side on loopback, one run: plain TCP, TLS (rediss://, a throw-away CA
# made with the openssl CLI) and a 6-node Redis Cluster (redis+cluster://, 3 masters with a replica
# each), each through bench/tier_bench (put throughput with 1 and 16 writers, tier read + unseal,
# shared-tier hit with write-back, local LMDB hit). Needs redis-server, redis-cli and openssl.
# Usage: scripts/bench_redis_tiers.sh [ENTRIES] [VALUE_BYTES]   (default 2000 entries of 8192 bytes)
set -euo pipefail
cd "$(dirname "$0")/.."
bench="${BUILD_DIR:-build}/bin/tier_bench"
entries="${1:-2000}" bytes="${2:-8192}"
[ -x "$bench" ] || { echo "bench_redis_tiers: build tier_bench first" >&2; exit 1; }
dir=$(mktemp -d -t nvrtc-cache-redis-tiers-XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT
pw=bench-secret
# 8 distinct free loopback ports below 45536 whose port + 10000 (a cluster node's bus) is free too,
# found at once (the sockets are held until all are known).
read -r -a ports < <(python3 -c '
import random, socket
held, ports = [], []
while len(ports) < 8:
    port = random.randrange(20000, 45000)
    try:
        pair = [socket.socket(), socket.socket()]
        pair[0].bind(("127.0.0.1", port)); pair[1].bind(("127.0.0.1", port + 10000))
    except OSError:
        continue
    held += pair; ports.append(port)
print(" ".join(map(str, ports)))')
ossl() { openssl "$@" >/dev/null 2>&1; }
ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$dir/ca.key" -out "$dir/ca.crt" \
  -subj /CN=bench-ca -days 1
ossl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$dir/server.key" -out "$dir/server.csr" \
  -subj /CN=localhost
printf 'subjectAltName=IP:127.0.0.1\n' > "$dir/ext"
ossl x509 -req -in "$dir/server.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial -days 1 \
  -extfile "$dir/ext" -out "$dir/server.crt"
start() {  # start NAME ARGS...: a redis-server in $dir/NAME
  local name=$1; shift
  mkdir -p "$dir/$name"
  redis-server --bind 127.0.0.1 --requirepass "$pw" --masterauth "$pw" --save '' --appendonly no \
    --dir "$dir/$name" --logfile "$dir/$name/log" "$@" & pids+=($!)
}
port=${ports[0]} tls_port=${ports[1]}
start single --port "$port" --tls-port "$tls_port" --tls-cert-file "$dir/server.crt" \
  --tls-key-file "$dir/server.key" --tls-ca-cert-file "$dir/ca.crt" --tls-auth-clients no
nodes=()
for i in 1 2 3 4 5 6; do
  p=${ports[$((i + 1))]}; nodes+=("127.0.0.1:$p")
  start "node$i" --port "$p" --cluster-enabled yes --cluster-config-file nodes.conf
done
for _ in $(seq 100); do redis-cli -p "$port" -a "$pw" --no-auth-warning ping >/dev/null 2>&1 && break; sleep 0.1; done
i=0
for n in "${nodes[@]}"; do
  i=$((i + 1))
  for _ in $(seq 100); do redis-cli -p "${n##*:}" -a "$pw" --no-auth-warning ping >/dev/null 2>&1 && break; sleep 0.1; done
  redis-cli -p "${n##*:}" -a "$pw" --no-auth-warning ping >/dev/null 2>&1 ||
    { echo "bench_redis_tiers: node $n did not start:" >&2; tail -5 "$dir/node$i/log" >&2; exit 1; }
done
redis-cli -a "$pw" --no-auth-warning --cluster create "${nodes[@]}" --cluster-replicas 1 --cluster-yes >/dev/null
for _ in $(seq 100); do
  redis-cli -p "${nodes[0]##*:}" -a "$pw" --no-auth-warning cluster info | grep -q cluster_state:ok && break
  sleep 0.1
done
for url in "redis://:$pw@127.0.0.1:$port" "rediss://:$pw@127.0.0.1:$tls_port?tls-ca-file=$dir/ca.crt" \
           "redis+cluster://:$pw@${nodes[0]}"; do
  echo "== ${url%%://*}"
  "$bench" "$entries" "$bytes" "$url" | sed "s/:$pw@/:***@/"
done
