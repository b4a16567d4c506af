#!/usr/bin/env bash
# `wattcut gpu lock/reset/list/watch` against the fake libnvidia-ml.so.1 (a ctest; see ../CMakeLists.txt).
#   gpu_command_test.sh WATTCUT FAKE_NVML_DIR
set -euo pipefail
wattcut=$1
export LD_LIBRARY_PATH=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export WATTCUT_FAKE_NVML_STATE=$dir/state
fail() { echo "FAIL: $*"; exit 1; }
state() { grep -x "$1" "$WATTCUT_FAKE_NVML_STATE" >/dev/null || fail "state lacks $1"; }

out=$("$wattcut" gpu list)
grep -q "GPU 1: NVIDIA A100-SXM4-80GB (fake)" <<<"$out" || fail "list: $out"
grep -q "SM clocks at max memory clock: 1410..210 MHz (81 clocks)" <<<"$out" || fail "list clocks: $out"

out=$("$wattcut" gpu lock --gpu 1 --sm 1200 --memory-max --power-limit 300)
grep -q "GPU 1: locked SM clocks to 1200-1200 MHz (SM clock was 1410 MHz, reads 1200 MHz now)" <<<"$out" || fail "lock: $out"
state gpu1.locked_max=1200
state gpu1.mem_locked=1593
state gpu1.power_limit_mw=300000

out=$("$wattcut" gpu reset --gpu 1 --power-limit)
grep -q "GPU 1: reset SM clocks (SM clock was 1200 MHz, reads 1410 MHz now)" <<<"$out" || fail "reset: $out"
state gpu1.locked_max=0
state gpu1.mem_locked=0
state gpu1.power_limit_mw=400000

out=$("$wattcut" gpu lock --sm 1000 --dry-run 2>&1)
grep -q "dry run: nothing changed" <<<"$out" || fail "dry run: $out"
grep -q "gpu0.locked_max=1000" "$WATTCUT_FAKE_NVML_STATE" && fail "dry run locked a clock"

out=$("$wattcut" gpu watch --gpu 0 --count 2 --interval 0.1)
[[ $(grep -c "^[0-9.]* 0 400.0 1410 " <<<"$out") -eq 2 ]] || fail "watch: $out"

echo "fail.nvmlDeviceSetGpuLockedClocks=4" >> "$WATTCUT_FAKE_NVML_STATE"
if out=$("$wattcut" gpu lock --sm 1000 2>&1); then fail "lock without permission succeeded"; fi
grep -q "needs root or CAP_SYS_ADMIN" <<<"$out" || fail "permission message: $out"

if out=$("$wattcut" gpu lock --gpu 7 --sm 1000 2>&1); then fail "lock of a missing GPU succeeded"; fi
grep -q "GPU 7 does not exist (2 GPUs)" <<<"$out" || fail "missing GPU message: $out"

out=$(LD_LIBRARY_PATH= "$wattcut" gpu list --nvml-library libnvidia-ml-absent.so.1 2>&1) && fail "list without NVML succeeded"
grep -q "cannot load NVML (libnvidia-ml-absent.so.1)" <<<"$out" || fail "no NVML message: $out"
echo "PASS"
