#!/usr/bin/env bash
# Relay under load (called by bench/run.sh, `make bench`): N concurrent
# streams at 20 tokens/s from the simulated model, over SSE and then over
# WebSocket, each against a fresh `trickle serve` on loopback. Bounded: the
# load generator stops by itself (hard timeout), and so does this script.
#
# LOAD_N (default 10000), LOAD_RAMP, LOAD_IDLE and LOAD_DURATION shrink or
# grow it; LOAD_TRANSPORTS="sse ws" picks the transports; LOAD_RELAY_FLAGS
# adds `trickle serve` flags (e.g. "--write-timeout 2s --grace 3s") and
# LOAD_FLAGS load generator flags (e.g. "-stall-every 10 -stall 12s").
# LOAD_RELAY_BIN runs a relay binary built elsewhere (e.g. an older commit,
# for a side-by-side comparison) instead of building ./cmd/trickle.
# LOAD_PATHS="fast plain" runs each transport once per write path
# (trickle serve --write-path, recorded as write_path), side by side;
# LOAD_BASELINE_BIN adds, before them, a run of that binary (server
# "baseline", without --write-path: e.g. a build of an older commit).
# LOAD_SERVER=floor runs the same load against bench/load/floor instead of
# the relay: the least work that streams the same bytes (SSE only), the
# floor under the relay's figures on this machine.
# Results: bench/results/load.jsonl (one JSON line per transport).
set -euo pipefail
cd "$(dirname "$0")/../.."

n="${LOAD_N:-10000}"
ramp="${LOAD_RAMP:-15s}"
idle="${LOAD_IDLE:-4s}"
duration="${LOAD_DURATION:-25s}"
transports="${LOAD_TRANSPORTS:-sse ws}"
port="${LOAD_PORT:-18099}"
out=bench/results/load.jsonl
mkdir -p bench/results

# Each side holds one descriptor per stream, plus some.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt $((n + 200)) ]; then
  echo "load: ulimit -n is $(ulimit -n), too low for ${n} streams (raise the hard limit)" >&2
  exit 1
fi

relay_bin="${LOAD_RELAY_BIN:-bench/results/trickle}"
[ -n "${LOAD_RELAY_BIN:-}" ] || go build -o bench/results/trickle ./cmd/trickle
go build -o bench/results/load ./bench/load
server="${LOAD_SERVER:-relay}"
if [ "${server}" = floor ]; then
  go build -o bench/results/floor ./bench/load/floor
  transports=sse
fi

echo "Relay under load (${server}): ${n} streams at 20 tokens/s, ramp ${ramp}, idle ${idle}, tokens for ${duration}, $(nproc) cores, $(go version | cut -d' ' -f3), load average $(cut -d' ' -f1-3 /proc/loadavg)"
: >"${out}"
paths="${LOAD_PATHS:-}"
variants=""
[ -z "${LOAD_BASELINE_BIN:-}" ] || variants="baseline"
if [ -n "${paths}" ]; then
  for p in ${paths}; do variants="${variants} ${p}"; done
else
  variants="${variants} default"
fi
for transport in ${transports}; do
 for variant in ${variants}; do
  name="${server}" bin="${relay_bin}" path_flags="" path_arg=""
  case "${variant}" in
    baseline) name=baseline bin="${LOAD_BASELINE_BIN}" ;;
    default) ;;
    *) path_flags="--write-path ${variant}" path_arg="-path ${variant}" ;;
  esac
  if [ "${server}" = floor ]; then
    bench/results/floor --addr "127.0.0.1:${port}" >/dev/null 2>bench/results/load-relay.log &
  else
    # Every stream comes from 127.0.0.1: no per-address cap (a binary
    # older than the flag has none).
    cap_flags=""
    if "${bin}" serve --help 2>&1 | grep -q -- -max-conns-per-addr; then cap_flags="--max-conns-per-addr 0"; fi
    "${bin}" serve --addr "127.0.0.1:${port}" --max-streams $((n + 100)) \
      --retention 2m --log-level warn ${cap_flags} ${path_flags} ${LOAD_RELAY_FLAGS:-} >/dev/null 2>bench/results/load-relay.log &
  fi
  relay=$!
  trap 'kill "${relay}" 2>/dev/null || true' EXIT
  for _ in $(seq 50); do
    curl -fsS "http://127.0.0.1:${port}/healthz" >/dev/null 2>&1 && break
    sleep 0.1
  done
  timeout 200 bench/results/load -addr "127.0.0.1:${port}" -server-pid "${relay}" -server-name "${name}" ${path_arg} -n "${n}" \
    -transport "${transport}" -ramp "${ramp}" -idle "${idle}" -duration "${duration}" ${LOAD_FLAGS:-} >>"${out}"
  kill "${relay}"
  wait "${relay}" 2>/dev/null || true
  trap - EXIT
 done
done
echo "results: ${out}"
