#!/usr/bin/env bash
# Starts a throw-away redis-server (loopback port and unix socket, no persistence) and runs
# bench/redis_round_trip against it: GET/SET round trips of the Redis tier's own client and of
# hiredis, for 1 KiB and 1 MiB values. Usage: scripts/bench_redis.sh [BUILD_DIR] [ITERATIONS]
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${1:-build}"
iterations="${2:-300}"
dir="$(mktemp -d)"
password="bench-$RANDOM$RANDOM"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
redis-server --port "$port" --bind 127.0.0.1 --requirepass "$password" --save '' --appendonly no \
  --dir "$dir" --unixsocket "$dir/redis.sock" --unixsocketperm 700 --logfile "$dir/redis.log" &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 100); do [ -S "$dir/redis.sock" ] && break; sleep 0.05; done
"$build_dir/bin/redis_round_trip" "$port" "$dir/redis.sock" "$password" "$iterations"
