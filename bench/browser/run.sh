#!/usr/bin/env bash
# The in-browser benchmark: Trickle's widget (as it boots by default, and
# with worker="off") against marked (full re-render per frame),
# streaming-markdown, Streamdown and TanStack Markdown (each in a React 19
# root) and the text floor, same page, same stream, same Chromium run.
# Standard scenario: 4-character tokens at 250 tokens/s, the 20 KB and
# 100 KB answers (about 2 minutes per renderer in all), then the
# open-code-fence answers TanStack Markdown publishes (4, 16 and 64 KiB,
# a fence that never closes) in 32-character tokens at the same rate
# (about 15 s per renderer), with a check that each renderer shows the
# fence's code at the end; a table of the widget's ratios to each peer
# (main-thread time, layouts, style recalculations, nodes touched,
# script); for each renderer, the final text after the last token (when
# the answer's text on the page last changed, less when the server
# flushed the last token, on one clock). Then the
# host page's goals: the widget's boot on a page of another origin (5
# loads each way), token arrival → painted, the cold first answer, and the
# transfer size (about 4 minutes more).
#
#   bench/browser/run.sh                    everything, the standard scenario
#   bench/browser/run.sh -speed 5           five times faster, for a quick look
#   bench/browser/run.sh -measure boot      one part (stream, boot, latency, cold, size)
#   bench/browser/run.sh -measure stream -renderers trickle,smd,streamdown,tanstack -runs 3
#                                           the widget against the three streaming peers,
#                                           three interleaved runs (docs/PERFORMANCE.md#peers)
#   bench/browser/run.sh -fences 64         only the 64 KiB fence among the fence answers;
#                                           -fences '' for none; -fence-chars 32 their token
#                                           size; with -samples, -base or -answers they are
#                                           left out unless -fences is given; -samples ''
#                                           -fences 4,16,64 runs the fence answers alone
#   bench/browser/run.sh -measure first     the first visit against a warm one, navigation →
#                                           first token painted, on emulated networks (none,
#                                           Fast 4G, Slow 4G: -first-networks, -first-runs,
#                                           -first-thread main for worker="off"), and when
#                                           trickle-first-token came against that paint; with
#                                           -base <commit>, that commit's widget and the work
#                                           tree's alternate in one run; not in the default set
#                                           (about 3 minutes, twice that with -base)
#   bench/browser/run.sh -measure thread    a long thread restored in a <trickle-chat>
#                                           (chat.messages: -turns 200,1000 questions, each
#                                           with an answer of about 2.5 KB): the last answer
#                                           painted, every answer shown, the restore's longest
#                                           task and tasks over 50 ms (on the clock and by the
#                                           page thread's own CPU time, each listed with where
#                                           it went), layouts, scroll fps and the scroll's
#                                           longest task, JS heap; with -base <commit> that
#                                           build's and the work tree's alternate; -profiles
#                                           <dir> keeps each run's trace
#   bench/browser/run.sh -answers 10        ten answers at once on the page, each its own
#                                           stream from a port of its own (a browser opens
#                                           at most 6 connections to one host and port)
#   bench/browser/run.sh -samples 'relay/sim/answers/sample-100k.md*10'
#                                           the sample ten times over, headings renamed per
#                                           pass (bench/megabyte/run.sh: 1 MB at 2,000 tok/s)
#   bench/browser/run.sh -base <commit>     the comparison mode (make bench-compare): <commit>'s
#                                           widget, built in a temporary git worktree and kept
#                                           in bench/results/.base/, beside the work tree's and
#                                           streaming-markdown, interleaved, 5 runs each on
#                                           both answers in one Chromium (about 35 minutes;
#                                           -samples, -runs to change); medians, spreads and
#                                           the paired runs' ratios of main-thread time,
#                                           script, layouts and style recalculations
#
# Every run reports the work counted, not timed, per answer and per frame
# in which the answer changed: style recalculations and layouts (those
# forced by script apart), script time, DOM mutations and nodes touched.
#
# Runs hold /tmp/bench.lock and /tmp/trickle-browser.lock, so that
# benchmarks and browser tests on a shared machine do not overlap.
#
# Results: a table on stdout, bench/results/browser.json.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ ! -f assets/widget/trickle.js ]; then
  make widget
fi
# The peers, pinned in bench/browser/package-lock.json (only the benchmark
# needs them: CI does not install them).
if [ ! -d bench/browser/node_modules/marked ] || [ ! -d bench/browser/node_modules/streaming-markdown ] ||
  [ ! -d bench/browser/node_modules/streamdown ] || [ ! -d bench/browser/node_modules/@tanstack/markdown ] ||
  [ bench/browser/package-lock.json -nt bench/browser/node_modules/.package-lock.json ]; then
  (cd bench/browser && npm ci --no-audit --no-fund)
fi
mkdir -p bench/results
go build -o bench/results/.browser-bench ./bench/browser
bench/results/.browser-bench -prepare "$@"
flock /tmp/bench.lock flock /tmp/trickle-browser.lock bench/results/.browser-bench "$@" | tee "${TRICKLE_BENCH_MD:-bench/results/browser.md}"
