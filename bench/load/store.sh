#!/usr/bin/env bash
# The relay under load with each stream store, side by side in one run:
# the memory store, then the Redis store (a redis-server started here on
# loopback, without persistence), at each LOAD_STORE_N (default "1000 2000
# 4000") streams at 20 tokens/s over SSE. Each run is bench/load/run.sh
# (bounded by its own timeouts); this script adds Redis's CPU (from
# /proc/PID/stat) per event and its memory (INFO used_memory) per stream.
# Results: bench/results/load-store.jsonl, one JSON line per run.
set -euo pipefail
cd "$(dirname "$0")/../.."

sizes="${LOAD_STORE_N:-1000 2000 4000}"
redis_port="${LOAD_REDIS_PORT:-18379}"
out=bench/results/load-store.jsonl
mkdir -p bench/results
: >"${out}"
clk=$(getconf CLK_TCK)

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
redis_mem() { redis-cli -p "${redis_port}" info memory | awk -F: '/^used_memory:/ {print $2}' | tr -d '\r'; }

go build -o bench/results/trickle ./cmd/trickle
export LOAD_RELAY_BIN=bench/results/trickle
for n in ${sizes}; do
  for store in memory redis; do
    flags="${LOAD_RELAY_FLAGS:-}"
    redis=""
    if [ "${store}" = redis ]; then
      dir=$(mktemp -d)
      redis-server --port "${redis_port}" --bind 127.0.0.1 --save "" --appendonly no --dir "${dir}" >"${dir}/redis.log" 2>&1 &
      redis=$!
      for _ in $(seq 50); do redis-cli -p "${redis_port}" ping >/dev/null 2>&1 && break; sleep 0.1; done
      flags="${flags} --store redis://127.0.0.1:${redis_port}/0"
      mem0=$(redis_mem)
      cpu0=$(cpu_ticks "${redis}")
    fi
    load_avg=$(cut -d' ' -f1 /proc/loadavg)
    LOAD_N="${n}" LOAD_TRANSPORTS=sse LOAD_RELAY_FLAGS="${flags}" bash bench/load/run.sh >&2
    line=$(tail -n 1 bench/results/load.jsonl)
    if [ -n "${redis}" ]; then
      cpu1=$(cpu_ticks "${redis}")
      mem1=$(redis_mem)
      events=$(printf '%s' "${line}" | sed -E 's/.*"delivered_events":([0-9]+).*/\1/')
      redis_json=$(awk -v c0="${cpu0}" -v c1="${cpu1}" -v hz="${clk}" -v ev="${events}" -v m0="${mem0}" -v m1="${mem1}" -v n="${n}" \
        'BEGIN { printf "\"redis_cpu_s\":%.2f,\"redis_cpu_us_per_event\":%.2f,\"redis_kib_per_finished_stream\":%.1f", (c1-c0)/hz, (c1-c0)/hz*1e6/ev, (m1-m0)/1024/n }')
      kill "${redis}"
      wait "${redis}" 2>/dev/null || true
      rm -rf "${dir}"
      line="${line%\}},\"store\":\"redis\",\"load_average_before\":${load_avg},${redis_json}}"
    else
      line="${line%\}},\"store\":\"memory\",\"load_average_before\":${load_avg}}"
    fi
    echo "${line}" | tee -a "${out}"
  done
done
echo "results: ${out} (load average now $(cut -d' ' -f1-3 /proc/loadavg))"
