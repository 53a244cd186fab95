#!/usr/bin/env bash
# The shared tiers side by side on loopback, one run: Redis over plain TCP, over TLS (rediss://, a
# throw-away CA made with the openssl CLI) and as a 6-node Redis Cluster (redis+cluster://, 3 masters
# with a replica each), and an HTTP cache (nginx with WebDAV PUT, http:// and https:// with the same
# CA), each through bench/tier_bench (put throughput with 1 and 16 writers, tier read + unseal,
# shared-tier hit with write-back, local LMDB hit, 16-reader get throughput), then a table of hit
# latency and 16-reader throughput with ratios to the local store and to plain Redis. Needs
# redis-server, redis-cli, nginx (nginx-light) and openssl.
# Usage: scripts/bench/tiers.sh [ENTRIES] [VALUE_BYTES]   (default 2000 entries of 8192 bytes)
set -euo pipefail
cd "$(dirname "$0")/../.."
bench="${BUILD_DIR:-build}/bin/tier_bench"
entries="${1:-2000}" bytes="${2:-8192}"
[ -x "$bench" ] || { echo "tiers.sh: build tier_bench first" >&2; exit 1; }
dir=$(mktemp -d -t nvrtc-cache-redis-tiers-XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT
pw=bench-secret
# 10 distinct free loopback ports below 45536 whose port + 10000 (a cluster node's bus) is free too,
# found at once (the sockets are held until all are known).
read -r -a ports < <(python3 -c '
import random, socket
held, ports = [], []
while len(ports) < 10:
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
    { echo "tiers.sh: node $n did not start:" >&2; tail -5 "$dir/node$i/log" >&2; exit 1; }
done
redis-cli -a "$pw" --no-auth-warning --cluster create "${nodes[@]}" --cluster-replicas 1 --cluster-yes >/dev/null
for _ in $(seq 100); do
  redis-cli -p "${nodes[0]##*:}" -a "$pw" --no-auth-warning cluster info | grep -q cluster_state:ok && break
  sleep 0.1
done
# nginx: one server, a plain and a TLS port, WebDAV PUT into $dir/www.
http_port=${ports[8]} https_port=${ports[9]}
mkdir -p "$dir/www" "$dir/nginx"
cat > "$dir/nginx/nginx.conf" <<EOF
daemon off;
worker_processes 2;
$( [ "$(id -u)" = 0 ] && echo "user root root;" )
error_log $dir/nginx/error.log warn;
pid $dir/nginx/nginx.pid;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $dir/nginx/body;
  client_max_body_size 256m;
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:$http_port;
    listen 127.0.0.1:$https_port ssl;
    ssl_certificate $dir/server.crt;
    ssl_certificate_key $dir/server.key;
    root $dir/www;
    location / { dav_methods PUT DELETE; create_full_put_path on; }
  }
}
EOF
nginx -p "$dir/nginx" -c "$dir/nginx/nginx.conf" -e "$dir/nginx/error.log" & pids+=($!)
for _ in $(seq 100); do
  python3 -c "import socket; socket.create_connection(('127.0.0.1', $http_port))" 2>/dev/null && break
  sleep 0.1
done
names=(redis rediss redis+cluster http https)
urls=("redis://:$pw@127.0.0.1:$port" "rediss://:$pw@127.0.0.1:$tls_port?tls-ca-file=$dir/ca.crt"
      "redis+cluster://:$pw@${nodes[0]}" "http://127.0.0.1:$http_port/cache"
      "https://127.0.0.1:$https_port/cache?tls-ca-file=$dir/ca.crt")
for i in "${!urls[@]}"; do
  echo "== ${names[$i]}"
  "$bench" "$entries" "$bytes" "${urls[$i]}" | sed "s/:$pw@/:***@/" | tee "$dir/out.$i" || echo "tiers.sh: tier_bench failed on ${names[$i]}" >&2
done
# The summary: hit latency (tier read + unseal, median) and 16 readers' throughput, with ratios.
python3 - "$dir" "${names[@]}" <<'PY'
import re, sys
d, names = sys.argv[1], sys.argv[2:]
rows = {}
for i, name in enumerate(names):
    text = open(f"{d}/out.{i}").read()
    num = lambda pattern: float(re.search(pattern, text).group(1))
    rows[name] = dict(hit=num(r"tier read \+ unseal\s+median ([0-9.]+)"),
                      shared=num(r"shared-tier hit \(\+write-back\)\s+median ([0-9.]+)"),
                      local=num(r"local hit \(LMDB\)\s+median ([0-9.]+)"),
                      get16=num(r"tier get \+ unseal, 16 readers:\s+([0-9.]+)"),
                      local16=num(r"local get \(LMDB\), 16 readers:\s+([0-9.]+)"),
                      put16=num(r"put, 16 writers:\s+([0-9.]+)"))
local = sorted(r["local"] for r in rows.values())[len(rows) // 2]
local16 = sorted(r["local16"] for r in rows.values())[len(rows) // 2]
base = rows["redis"]
print(f"\nlocal store (median over the runs): hit {local:.3f} ms, 16 readers {local16:.0f} values/s\n")
print("| tier | hit (read + unseal) | / local | / redis | shared hit (+write-back) | 16 readers, values/s "
      "| local / tier | tier / redis | 16 writers, values/s |")
print("|---|--:|--:|--:|--:|--:|--:|--:|--:|")
for name, r in rows.items():
    print(f"| {name} | {r['hit']:.3f} ms | {r['hit'] / local:.1f}x | {r['hit'] / base['hit']:.2f}x | "
          f"{r['shared']:.3f} ms | {r['get16']:.0f} | {local16 / r['get16']:.1f}x | "
          f"{r['get16'] / base['get16']:.2f}x | {r['put16']:.0f} |")
PY
