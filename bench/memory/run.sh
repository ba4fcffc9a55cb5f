#!/usr/bin/env bash
# The memory benchmark: the bytes the page and the widget's Web Worker hold
# (performance.measureUserAgentSpecificMemory on a cross-origin-isolated
# page) after a 100 KB answer, after ten 20 KB answers one after another
# and after a restored 200-turn <trickle-chat>, beside streaming-markdown,
# alternating, 3 runs in one Chromium (about 5 minutes). Go's heap in use
# and the memory it took are read from the widget's stats() when the last
# answer ended and after the page was idle.
#
#   bench/memory/run.sh               3 runs, 4-character tokens at 2,000 tok/s
#   bench/memory/run.sh -runs 5 -scenarios one,ten
#
# Results: a table on stdout, bench/results/memory.json and memory.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ ! -f assets/widget/trickle.js ]; then
  make widget
fi
if [ ! -d bench/browser/node_modules/streaming-markdown ]; then
  (cd bench/browser && npm ci --no-audit --no-fund)
fi
mkdir -p bench/results
go build -o bench/results/.memory-bench ./bench/memory
flock /tmp/bench.lock flock /tmp/trickle-browser.lock bench/results/.memory-bench "$@" | tee bench/results/memory.md
