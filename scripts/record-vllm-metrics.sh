#!/usr/bin/env bash
# Records a vLLM server's load metrics once a second as the CSV `wattcut polca calibrate --load`
# reads (docs/polca.md, "Calibrate to your servers"):
#
#   scripts/record-vllm-metrics.sh http://localhost:8000/metrics 7200 > node-a.vllm.csv
#
# Every INTERVAL_S (default 1; 0.25 lets calibrate place prefills within a second) for SECONDS it fetches the Prometheus text page and writes one row:
# the fetch time (Unix seconds) and, per metric, the sum over its label sets (several models or
# engines on one server add up). A metric the page lacks is an empty field; a failed fetch is reported on
# stderr and leaves no row (calibrate skips the gap). Run it next to nvidia-smi on the same host,
# so that both clocks agree.
set -euo pipefail

usage="usage: record-vllm-metrics.sh METRICS_URL SECONDS [INTERVAL_S]"
url=${1:?$usage}
seconds=${2:?$usage}
interval=${3:-1}
if ! [[ $seconds =~ ^[0-9]+$ ]] || (( seconds < 1 || seconds > 604800 )); then
  echo "record-vllm-metrics: SECONDS: expected a whole number of seconds from 1 to 604800, got '$seconds'" >&2
  exit 2
fi
if ! [[ $interval =~ ^[0-9]+(\.[0-9]+)?$ ]] || ! awk -v i="$interval" 'BEGIN { exit !(i >= 0.1 && i <= 60) }'; then
  echo "record-vllm-metrics: INTERVAL_S: expected seconds from 0.1 to 60, got '$interval'" >&2
  exit 2
fi
# What calibrate reads: the gauges, the token counters, the first-token and success counters (the
# phase model's), the engine's steps (the iteration histogram's count and sum) and the prompt
# tokens the prefix cache held.
metrics=(vllm:num_requests_running vllm:num_requests_waiting vllm:prompt_tokens_total
         vllm:generation_tokens_total vllm:time_to_first_token_seconds_count vllm:request_success_total
         vllm:iteration_tokens_total_count vllm:iteration_tokens_total_sum vllm:prefix_cache_hits_total)
(IFS=,; echo "time,${metrics[*]}")
end=$(( $(date +%s) + seconds ))
timeout_s=$(awk -v i="$interval" 'BEGIN { printf "%.2f", (i > 1 ? 1 : i) * 0.9 }')
while (( $(date +%s) < end )); do
  t=$(date +%s.%N)
  if page=$(curl -fsS --max-time "$timeout_s" "$url" 2>/dev/null); then
    printf '%s\n' "$page" | awk -v t="$t" -v names="${metrics[*]}" '
      BEGIN { n = split(names, want, " ") }
      /^#/ || NF == 0 { next }
      {
        line = $0
        sub(/\{.*\}/, "", line)          # the label set
        split(line, f, " ")
        if (f[2] != "") { sum[f[1]] += f[2]; seen[f[1]] = 1 }
      }
      END {
        printf "%.3f", t
        for (i = 1; i <= n; ++i) if (want[i] in seen) printf ",%.0f", sum[want[i]]; else printf ","
        printf "\n"
      }'
  else
    echo "record-vllm-metrics: $url did not answer at $t" >&2
  fi
  sleep "$interval"
done
