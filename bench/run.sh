#!/usr/bin/env bash
# make bench: every benchmark, each side by side with its peer in one run.
# Each bench/<name>/run.sh is one comparison; results go to bench/results/.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bench/results
for script in bench/*/run.sh; do
  echo "== ${script}"
  bash "${script}"
done
