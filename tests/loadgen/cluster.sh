#!/usr/bin/env bash
# The cluster under load (docs/cluster.md, "Load"): redis-server, three nodes on 127.0.0.2-4 and
# haproxy in front (docker/haproxy.cfg itself, pointed at loopback addresses), then loadgen against
# one node directly and against HAProxy, paced and saturated, three runs each. Needs redis-server
# and haproxy (Debian packages) and `cargo build --release -p dhumbal-server -p dhumbal-loadgen`.
set -euo pipefail
cd "$(dirname "$0")/../.."
R=6391
rm -rf /tmp/rl && mkdir -p /tmp/rl  # logs and the AOF
redis-server --port $R --save '' --appendonly yes --appendfsync everysec --dir /tmp/rl --daemonize no > /tmp/rl/redis.log 2>&1 &
RPID=$!
sleep 1
FLAGS=(--store redis://127.0.0.1:$R --bot-delay-ms 0 --messages-per-sec 1000000 --message-burst 1000000
  --room-creations-per-minute 100000 --max-rooms-per-address 100000 --max-connections-per-address 100000
  --max-connections 20000 --max-rooms 5000 --trusted-proxies 127.0.0.1/32)
PIDS=()
for n in 2 3 4; do
  RUST_LOG=warn target/release/dhumbal-server --addr 127.0.0.$n:18080 --node-id node$n "${FLAGS[@]}" > /tmp/rl/node$n.log 2>&1 &
  PIDS+=($!)
done
# docker/haproxy.cfg itself, pointed at the loopback nodes by its environment variables.
DHUMBAL_BIND=127.0.0.1:18000 DHUMBAL_NODE1=127.0.0.2:18080 DHUMBAL_NODE2=127.0.0.3:18080 \
  DHUMBAL_NODE3=127.0.0.4:18080 DHUMBAL_CHECK_INTER=200ms DHUMBAL_CONNECT=500ms \
  haproxy -db -f docker/haproxy.cfg > /tmp/rl/haproxy.log 2>&1 &
HPID=$!
sleep 2
for i in 1 2 3; do
  echo "### run $i: one node (127.0.0.2, Redis store), direct"
  target/release/loadgen play --connect 127.0.0.2:18080 --rooms 200 --humans 4 --think-ms 20 --seconds 10 2>&1 | grep -E "^actions:|^latency|^errors"
  echo "### run $i: three nodes through HAProxy"
  target/release/loadgen play --connect 127.0.0.1:18000 --rooms 200 --humans 4 --think-ms 20 --seconds 10 2>&1 | grep -E "^actions:|^latency|^errors"
  echo "### run $i: three nodes through HAProxy, saturated (--think-ms 0)"
  target/release/loadgen play --connect 127.0.0.1:18000 --rooms 200 --humans 4 --seconds 10 2>&1 | grep -E "^actions:|^latency|^errors"
  echo "### run $i: one node direct, saturated"
  target/release/loadgen play --connect 127.0.0.2:18080 --rooms 200 --humans 4 --seconds 10 2>&1 | grep -E "^actions:|^latency|^errors"
done
kill $HPID "${PIDS[@]}" $RPID 2>/dev/null || true
wait 2>/dev/null || true
