#!/usr/bin/env bash
# SSE decoding, side by side in one run (called by bench/run.sh, `make bench`):
# a 50 MiB OpenAI-style stream cut into 1 KiB and 16 KiB chunks, decoded by
#   - trickle/sse natively (bench/sse/gobench),
#   - the same program compiled to js/wasm, on Node (what the widget runs),
#   - eventsource-parser on Node (bench/sse/peer.mjs), from bytes and from
#     pre-decoded strings.
# Rounds alternate the three so that machine noise hits all of them; the
# summary keeps each one's best run. Raw lines: bench/results/sse.jsonl.
# SSE_BENCH_MIB, SSE_BENCH_RUNS and SSE_BENCH_ROUNDS shrink it for a quick look.
set -euo pipefail
cd "$(dirname "$0")/../.."

mib="${SSE_BENCH_MIB:-50}"
runs="${SSE_BENCH_RUNS:-5}"
rounds="${SSE_BENCH_ROUNDS:-2}"
out=bench/results/sse.jsonl
mkdir -p bench/results

(cd bench/sse && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
go build -o bench/results/sse-gobench ./bench/sse/gobench
GOOS=js GOARCH=wasm go build -o bench/results/sse-gobench.wasm ./bench/sse/gobench
wasm_exec="$(go env GOROOT)/lib/wasm/go_js_wasm_exec"

echo "SSE decoding: ${mib} MiB OpenAI-style stream, ${rounds} rounds x ${runs} runs, $(nproc) cores, $(go version | cut -d' ' -f3), node $(node --version)"
: >"${out}"
for round in $(seq "${rounds}"); do
  bench/results/sse-gobench -mib "${mib}" -runs "${runs}" >>"${out}"
  "${wasm_exec}" bench/results/sse-gobench.wasm -mib "${mib}" -runs "${runs}" \
    -impl "trickle/sse (Go js/wasm on Node)" >>"${out}"
  node bench/sse/peer.mjs --mib="${mib}" --runs="${runs}" >>"${out}"
done
node bench/sse/summary.mjs "${out}" | tee bench/results/sse.md
