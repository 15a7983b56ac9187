#!/usr/bin/env bash
# How long a restart after a SIGKILL mid-play takes to be ready, and the memory it needs.
#
#   tests/loadgen/restart.sh ROOMS [HUMANS] [PLAY_SECONDS]
#
# Starts target/release/dhumbal-server on a fresh SQLite data directory, plays ROOMS rooms of
# HUMANS people (2 by default) through `loadgen play --connect` for PLAY_SECONDS seconds of play
# (15 by default) after every room is seated, then SIGKILLs the server mid-play, noting its
# resident memory just before (VmRSS, and its peak VmHWM). It counts the rows of the room log
# left on disk, starts the server again on the same directory and times it from the start to
# its first `200` from `/readyz`, and reads that process's peak memory (VmHWM) at that moment.
# Prints one line of figures; asserts nothing. Build first:
#
#   cargo build --release -p dhumbal-server -p dhumbal-loadgen
set -euo pipefail

rooms=${1:?usage: restart.sh ROOMS [HUMANS] [PLAY_SECONDS]}
humans=${2:-2}
play_seconds=${3:-15}
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${DHUMBAL_BIN:-$root/target/release}
clients=$((rooms * humans))
ulimit -n "$(ulimit -Hn)"

dir=$(mktemp -d /tmp/dhumbal-restart.XXXXXX)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
addr=127.0.0.1:$port
server_args=(
    --data-dir "$dir/data" --addr "$addr" --bot-delay-ms 0
    --max-rooms $((rooms + 16)) --max-connections $((clients + 64))
    --messages-per-sec 1000000 --message-burst 1000000
    --max-connections-per-address $((clients + 64))
    --room-creations-per-minute $((rooms + 16)) --max-rooms-per-address $((rooms + 16))
    --hello-timeout 0s
)

# Seconds since the epoch, to the microsecond.
now() { date +%s.%N; }
# A field of /proc/PID/status, in KiB.
status_kib() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"; }
# Waits until the server answers /readyz (60 s at most).
until_ready() {
    for _ in $(seq 6000); do
        if curl -fs -o /dev/null "http://$addr/readyz"; then return 0; fi
        sleep 0.01
    done
    echo "the server at $addr did not become ready" >&2
    return 1
}

RUST_LOG=warn "$bin/dhumbal-server" "${server_args[@]}" >"$dir/first.log" 2>&1 &
first=$!
until_ready
# The load generator seats every room, then plays for `play_seconds`; the server dies during
# the play, about two thirds of the way in.
"$bin/loadgen" play --connect "$addr" --rooms "$rooms" --humans "$humans" \
    --seconds $((play_seconds * 3 / 2)) >"$dir/loadgen.log" 2>&1 &
load=$!
# Waits until every client is seated (the server counts them; each room's match begins at
# once), then plays on.
for _ in $(seq 1200); do
    seated=$(curl -fs "http://$addr/metrics" | awk '$1 ~ /^dhumbal_seated/ { print int($2) }' | head -1)
    if [ "${seated:-0}" -ge "$clients" ]; then break; fi
    sleep 0.1
done
sleep "$play_seconds"
rss_before=$(status_kib $first VmRSS)
hwm_before=$(status_kib $first VmHWM)
kill -KILL $first
wait $first 2>/dev/null || true
wait $load 2>/dev/null || true
log_rows=$(sqlite3 -readonly "$dir/data/dhumbal.db" 'SELECT count(*) FROM log' 2>/dev/null || echo '?')

started_at=$(now)
RUST_LOG=info "$bin/dhumbal-server" "${server_args[@]}" >"$dir/second.log" 2>&1 &
second=$!
until_ready
ready_at=$(now)
hwm_after=$(status_kib $second VmHWM)
rss_after=$(status_kib $second VmRSS)
restored=$(curl -fs "http://$addr/metrics" | awk '$1 ~ /^dhumbal_room_restores_total/ { print int($2) }' | head -1)
kill -TERM $second
wait $second 2>/dev/null || true

ready=$(python3 -c "print(f'{$ready_at - $started_at:.3f}')")
echo "rooms $rooms of $humans, log rows $log_rows, restored $restored; before the kill: RSS $rss_before KiB (peak $hwm_before); restart: ready in $ready s, peak $hwm_after KiB (RSS $rss_after at ready)"
rm -rf "$dir"
