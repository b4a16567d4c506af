#!/usr/bin/env bash
# The memory check of issue 27: a week of the Azure 2024 form (17 M requests, ~600 MB, synthetic:
# bench/trace_2024_week.h, token pairs resampled from the 2023 conversation trace when ../shared
# has it) through `wattcut polca simulate --time-of-day trace`, under /usr/bin/time -v. Prints the
# generator's time, the command's wall time and its peak RSS (the bound: under 1 GB).
#
#   cmake --build build --target wattcut wattcut_trace_2024_generate
#   bash bench/trace_2024_memory.sh [BUILD_DIR] [extra `polca simulate` options, e.g. --duration 2d]
#
# The trace is written to ${WATTCUT_TRACE_2024:-${TMPDIR:-/tmp}/wattcut_trace_2024_week.csv} once
# and reused by later runs (delete it to regenerate); REQUESTS=N writes a smaller one.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true
trace=${WATTCUT_TRACE_2024:-${TMPDIR:-/tmp}/wattcut_trace_2024_week.csv}
requests=${REQUESTS:-17000000}
shared=${WATTCUT_SHARED_DIR:-../shared}
conv="$shared/data/azure-llm-inference-2023/AzureLLMInferenceTrace_conv.csv"
out=$(mktemp -d "${TMPDIR:-/tmp}/wattcut_trace_2024_run.XXXXXX")
trap 'rm -rf "$out"' EXIT

if [[ ! -s "$trace" ]]; then
  tokens=()
  [[ -f "$conv" ]] && tokens=(--tokens-from "$conv")
  "$build/bench/wattcut_trace_2024_generate" "$trace" --requests "$requests" --days 7 "${tokens[@]}"
fi
echo "trace: $trace, $(($(wc -l <"$trace") - 1)) requests, $(du -m "$trace" | cut -f1) MB"

/usr/bin/time -v "$build/src/wattcut/cli/wattcut" polca simulate --trace "$trace" --time-of-day trace \
  --out "$out/run" --overwrite "$@" 2>"$out/time.txt" | tee "$out/stdout.txt"
grep -E "Maximum resident set size|Elapsed \(wall clock\)" "$out/time.txt"
rss_kb=$(awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}' "$out/time.txt")
echo "peak RSS: $((rss_kb / 1024)) MiB ($([[ $rss_kb -lt 1000000 ]] && echo "under" || echo "OVER") the 1 GB bound)"
