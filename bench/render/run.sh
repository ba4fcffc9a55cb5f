#!/usr/bin/env bash
# Incremental rendering (render/): the cost of one frame at 2 KB and at
# 100 KB of answer (same tail), and of streaming the 100 KB sample at
# 4 characters per token, one frame per 40 tokens — Trickle's Document
# against goldmark re-rendering the whole answer every frame, in the same
# run. Natively, then compiled to js/wasm and run on Node.
#
#   bench/render/run.sh            (COUNT=5 repetitions, medians reported)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=bench/results
mkdir -p "$out"
count="${COUNT:-5}"
pattern='^Benchmark(Frame|Stream)$'

summarize() { # file label
  awk -v label="$2" '
    /^Benchmark/ {
      name = $1; sub(/-[0-9]+$/, "", name)
      for (i = 2; i <= NF; i++) {
        if ($(i) == "ns/op") ns[name] = ns[name] " " $(i-1)
        if ($(i) == "cpu-ns/op") cpu[name] = cpu[name] " " $(i-1)
        if ($(i) == "B/op") by[name] = by[name] " " $(i-1)
      }
      names[name] = 1
    }
    function median(list,   a, n, i, j, t) {
      n = split(list, a, " ")
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    END {
      printf "\n== %s (medians; ratios use CPU time when measured, else wall time)\n", label
      for (n in names) {
        w = median(ns[n]); b[n] = median(by[n]); m[n] = w
        if (cpu[n] != "") { m[n] = median(cpu[n]); printf "%-40s %14.0f ns/op %14.0f cpu-ns/op %12.0f B/op\n", n, w, m[n], b[n] }
        else printf "%-40s %14.0f ns/op %12.0f B/op\n", n, w, b[n]
      }
      for (n in names) {
        if (n ~ /Frame\/ours\/answer=2KB/) small = n
        if (n ~ /Frame\/ours\/answer=9[0-9]KB/ || n ~ /Frame\/ours\/answer=1[0-9][0-9]KB/) big = n
      }
      if (small != "" && big != "") printf "frame at ~100 KB / frame at 2 KB (ours): %.2fx time, %.2fx memory\n", m[big] / m[small], b[big] / b[small]
      so = "BenchmarkStream/ours"; sg = "BenchmarkStream/goldmark"
      if ((so in m) && (sg in m)) printf "streaming sample-100k, goldmark re-render / ours: %.1fx time, %.1fx memory allocated\n", m[sg] / m[so], b[sg] / b[so]
    }' "$1"
}

echo "== native"
go test -run '^$' -bench "$pattern" -benchmem -count "$count" ./render | tee "$out/render-native.txt"

echo "== js/wasm on Node (regexp swapped for internal/relite, as the widget has it)"
overlay=$(go run ./wasm/internal/stdswap/overlay bin/stdswap)
PATH="$PATH:$(go env GOROOT)/lib/wasm" GOOS=js GOARCH=wasm \
  go test "$overlay" -run '^$' -bench "$pattern" -benchmem -count "$count" ./render | tee "$out/render-wasm.txt"

summarize "$out/render-native.txt" "native $(go env GOOS)/$(go env GOARCH)" | tee "$out/render-summary.txt"
summarize "$out/render-wasm.txt" "js/wasm on Node $(node --version)" | tee -a "$out/render-summary.txt"
