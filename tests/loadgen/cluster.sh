#!/usr/bin/env bash
# The cluster under load (README, "Cluster"): redis-server, three nodes on 127.0.0.2-4 and
# haproxy in front (the routing of docker/haproxy.cfg, loopback addresses), then loadgen against
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
cat > /tmp/rl/haproxy.cfg <<CFG
global
    maxconn 8000
defaults
    mode http
    timeout connect 500ms
    retries 2
    option redispatch 1
    timeout client 60s
    timeout server 60s
    timeout tunnel 1h
    timeout http-request 10s
    option forwardfor
    default-server check inter 200ms fall 2 rise 2
frontend front
    bind 127.0.0.1:18000
    use_backend rooms if { path_beg /ws/ }
    default_backend rest
backend rooms
    balance hash path,field(3,/),upper
    hash-type consistent
    option httpchk GET /readyz
    http-check expect status 200
    server node2 127.0.0.2:18080
    server node3 127.0.0.3:18080
    server node4 127.0.0.4:18080
backend rest
    balance roundrobin
    option httpchk GET /readyz
    http-check expect status 200
    server node2 127.0.0.2:18080
    server node3 127.0.0.3:18080
    server node4 127.0.0.4:18080
CFG
haproxy -db -f /tmp/rl/haproxy.cfg > /tmp/rl/haproxy.log 2>&1 &
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
