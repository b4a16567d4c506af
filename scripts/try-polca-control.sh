#!/usr/bin/env bash
# `wattcut polca control` tried on one machine, as docs/polca.md's quick start runs it:
#
#   bash scripts/try-polca-control.sh [SERVERS]     (default 4; the binary: $WATTCUT, else build/src/wattcut/cli/wattcut)
#
# It starts SERVERS simulated node agents on loopback (8 simulated A100s each, a token file),
# writes the row file (every other server low priority), the controller's token and a config
# whose row budget the row draws 95 % of (past T2 = 89 %), runs the controller in shadow mode
# (decides and logs, sends nothing) and then in enforce mode, a few seconds each, in band (a
# command takes effect when sent; a real row's out-of-band path holds it for its actuation
# latency), and prints the SM clock ceiling each agent holds: low priority locked at T2's
# 1110 MHz, high priority at 1305 MHz.
# Everything it writes is in a fresh folder under /tmp, named at the start; it stops the agents
# when it ends, however it ends.
set -euo pipefail

servers=${1:-4}
if ! [[ $servers =~ ^[0-9]+$ ]] || (( servers < 2 || servers > 32 )); then
  echo "try-polca-control: SERVERS: expected 2 to 32, got '$servers'" >&2
  exit 2
fi
wattcut=${WATTCUT:-build/src/wattcut/cli/wattcut}
if [[ ! -x $wattcut ]]; then
  echo "try-polca-control: no wattcut binary at $wattcut (build it, or set WATTCUT)" >&2
  exit 2
fi
dir=$(mktemp -d /tmp/wattcut-try-polca-XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
echo "try-polca-control: files in $dir"

token=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
printf 'row %s\n' "$token" > "$dir/agent.tokens"
printf '%s\n' "$token" > "$dir/row.token"
chmod 600 "$dir/agent.tokens" "$dir/row.token"

echo "# name agent priority" > "$dir/row.txt"
urls=()
for (( i = 0; i < servers; ++i )); do
  # The log exists before the agent starts: the background job opens it in its own process, which
  # may not have run yet when the loop below first reads it.
  : > "$dir/agent$i.log"
  "$wattcut" agent --socket "" --listen 127.0.0.1:0 --token-file "$dir/agent.tokens" --backend simulated --gpus 8 \
      --non-gpu-power "1700+0.15*gpu" > "$dir/agent$i.log" 2>&1 &
  pids+=($!)
  url=""
  for (( tries = 0; tries < 300 && ${#url} == 0; ++tries )); do
    url=$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$dir/agent$i.log" | head -1 || true)
    [[ -n $url ]] || sleep 0.1
  done
  if [[ -z $url ]]; then
    echo "try-polca-control: agent $i did not start:" >&2
    cat "$dir/agent$i.log" >&2
    exit 1
  fi
  urls+=("$url")
  echo "server$i $url $( (( i % 2 == 0 )) && echo low || echo high )" >> "$dir/row.txt"
done

# The row's power now, from the agents: the budget is set so that it is 95 % of it.
row_w=0
for url in "${urls[@]}"; do
  w=$(curl -fsS --max-time 5 -H "Authorization: Bearer $token" "$url/v1/readings/server" |
      /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["server"]["power_w"])')
  row_w=$(/usr/bin/python3 -c "print($row_w + $w)")
done
budget=$(/usr/bin/python3 -c "print(round($row_w / 0.95))")
"$wattcut" polca config --gpu a100 |
  sed -e "s/^row\.budget_w = .*/row.budget_w = $budget/" -e "s/^control\.telemetry_period_s = .*/control.telemetry_period_s = 0.5/" \
  > "$dir/row.conf"
echo "try-polca-control: $servers servers drawing $row_w W under a row budget of $budget W (95 %, past T2)"

control() {
  "$wattcut" polca control --row "$dir/row.txt" --config "$dir/row.conf" --token-file "$dir/row.token" \
      --mode "$1" --in-band --duration 4s --log "$dir/$1.jsonl" 2>&1 | sed "s/^/  [$1] /"
}
echo "try-polca-control: shadow mode, 4 s (decides and logs, sends nothing)"
control shadow
echo "try-polca-control: enforce mode, 4 s"
control enforce
echo "try-polca-control: the ceilings the agents hold now (they lapse after the controller's lease):"
for (( i = 0; i < servers; ++i )); do
  curl -fsS --max-time 5 -H "Authorization: Bearer $token" "${urls[$i]}/v1/state" |
    /usr/bin/python3 -c '
import json, sys
gpus = json.load(sys.stdin)["gpus"]
ceilings = sorted({(g["ceiling"] or {}).get("mhz") for g in gpus}, key=lambda v: (v is None, v))
print("  server%s (%s): SM clock ceiling %s" % (sys.argv[1], sys.argv[2],
      ", ".join("none" if c is None else "%d MHz" % c for c in ceilings)))' "$i" "$( (( i % 2 == 0 )) && echo low || echo high )"
done
echo "try-polca-control: the decisions: $dir/shadow.jsonl and $dir/enforce.jsonl (wattcut polca audit checks them)"
