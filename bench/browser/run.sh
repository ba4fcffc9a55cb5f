#!/usr/bin/env bash
# The in-browser benchmark: Trickle's widget against marked (full re-render
# per frame) and streaming-markdown, same page, same stream, same Chromium
# run. Standard scenario: 4-character tokens at 250 tokens/s, the 20 KB and
# 100 KB answers (about 2 minutes per renderer in all).
#
#   bench/browser/run.sh              the standard scenario
#   bench/browser/run.sh -speed 5     five times faster, for a quick look
#
# Results: a table on stdout, bench/results/browser.json.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ ! -f examples/widget/trickle.js ]; then
  make widget
fi
if [ ! -d bench/browser/node_modules/marked ] || [ ! -d bench/browser/node_modules/streaming-markdown ]; then
  (cd bench/browser && npm ci --no-audit --no-fund)
fi
mkdir -p bench/results
go run ./bench/browser "$@" | tee bench/results/browser.md
