#!/usr/bin/env bash
# The megabyte answer: sample-100k.md ten times over (its headings renamed
# per pass, so no two passes repeat a heading), 4-character tokens at
# 2,000 tokens/s, the widget beside streaming-markdown in one Chromium run
# (about 5 minutes). The page's rendering as the answer grows: the
# "growth" figures (style+layout and paint in the stream's last fifth over
# its first) say whether per-frame work follows the tail or the answer;
# "final text after the last token" how long the page took to show the
# answer's end.
#
#   bench/megabyte/run.sh               one run each
#   bench/megabyte/run.sh -runs 3       three, interleaved (medians)
#
# Results: a table on stdout, bench/results/megabyte.json and .md.
set -euo pipefail
cd "$(dirname "$0")/../.."
TRICKLE_BENCH_MD=bench/results/megabyte.md exec bash bench/browser/run.sh \
  -samples 'relay/sim/answers/sample-100k.md*10' -rate 2000 -renderers trickle,smd \
  -measure stream -out bench/results/megabyte.json "$@"
