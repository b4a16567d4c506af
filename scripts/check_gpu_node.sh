#!/usr/bin/env bash
# Check of wattcut's GPU backend on a GPU node: NVIDIA through NVML, AMD through ROCm SMI. Run it
# through scripts/check_nvml_gpu.sh or scripts/check_rocm_gpu.sh, which name the backend.
#
#   scripts/check_gpu_node.sh --backend nvml|rocm-smi [--library PATH] [--wattcut PATH]
#                             [--duration SECONDS] [--gpu INDEX] [--no-load] [--try-setters]
#
# 1. `wattcut gpu check` with the GPU idle: discovery, supported clocks, power and energy
#    readings, every setter in dry-run (check always wraps the backend in the dry-run backend).
# 2. The same while a real kernel runs (PyTorch matmuls if `import torch` sees the GPU, else a tiny
#    kernel built with nvcc or hipcc if present), then compares the power with the idle one.
# 3. Only with --try-setters (root): locks the GPU's SM clock under the middle of its range for 3 s
#    under the kernel, reads the clock, and resets it. Without it no GPU setting is changed.
# 4. Compares `wattcut gpu list` (supported clocks, power limits) before and after.
# Prints one VERDICT line: PASS, FAIL or NO GPU (exit 0, 1, 2); send the whole output.
set -uo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
wattcut=""
backend=""
library=""
duration=5
gpu=0
no_load=0
try_setters=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --backend) backend=$2; shift 2 ;;
    --library) library=$2; shift 2 ;;
    --wattcut) wattcut=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --gpu) gpu=$2; shift 2 ;;
    --no-load) no_load=1; shift ;;
    --try-setters) try_setters=1; shift ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "check_gpu_node: unknown argument $1" >&2; exit 64 ;;
  esac
done
case "$backend" in
  nvml) vendor="NVIDIA"; library_flag=(${library:+--nvml-library "$library"}) ;;
  rocm-smi) vendor="AMD"; library_flag=(${library:+--rocm-smi-library "$library"}) ;;
  *) echo "check_gpu_node: --backend nvml or --backend rocm-smi" >&2; exit 64 ;;
esac
backend_args=(--backend "$backend" "${library_flag[@]}")
# The one FAIL verdict line, then exit 1 (the EXIT trap, once set, still cleans up).
fail() { echo "VERDICT: FAIL: $*"; exit 1; }
if [[ -z "$wattcut" ]]; then
  for candidate in "$here/build/src/wattcut/cli/wattcut" "$here/build-gpu/src/wattcut/cli/wattcut" "$(command -v wattcut || true)"; do
    if [[ -n "$candidate" && -x "$candidate" ]]; then wattcut=$candidate; break; fi
  done
fi
if [[ -z "$wattcut" || ! -x "$wattcut" ]]; then
  fail "no wattcut executable (build it: cmake --preset release && cmake --build build, or pass --wattcut)"
fi
work=$(mktemp -d)
load_pid=0
trap '[[ $load_pid -gt 0 ]] && kill "$load_pid" 2>/dev/null; rm -rf "$work"' EXIT

echo "== wattcut: $wattcut"
if [[ $backend == nvml ]] && command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,power.draw,power.limit --format=csv 2>&1 | sed 's/^/   /'
elif [[ $backend == rocm-smi ]] && command -v rocm-smi >/dev/null 2>&1; then
  rocm-smi --showproductname --showclocks --showpower --showmaxpower --showperflevel 2>&1 | sed 's/^/   /'
fi

echo "== 1. idle check"
"$wattcut" gpu check "${backend_args[@]}" --gpu "$gpu" --duration 2 | tee "$work/idle.txt"
rc=${PIPESTATUS[0]}
if [[ $rc -eq 2 ]]; then
  echo "VERDICT: NO GPU: no $vendor GPU or driver on this machine; nothing was checked or changed"
  exit 2
fi
if [[ $rc -ne 0 ]]; then
  fail "wattcut gpu check failed with the GPU idle (see above); no GPU setting was changed"
fi
"$wattcut" gpu list "${backend_args[@]}" --gpu "$gpu" > "$work/list_before.txt" 2>&1

echo "== 2. check under load"
load_seconds=$(( ${duration%.*} + 4 ))
load=""
if [[ $no_load -eq 1 ]]; then
  echo "   --no-load: not running a kernel"
elif command -v python3 >/dev/null 2>&1 && python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  load="torch"
  python3 - "$load_seconds" "$gpu" <<'PY' &
import sys, time, torch
seconds, gpu = float(sys.argv[1]), int(sys.argv[2])
torch.cuda.set_device(gpu)
a = torch.randn(8192, 8192, device="cuda", dtype=torch.float16)
end = time.time() + seconds
while time.time() < end:
    for _ in range(10):
        a = (a @ a).clamp_(-1, 1)
    torch.cuda.synchronize()
PY
  load_pid=$!
elif command -v nvcc >/dev/null 2>&1 || command -v hipcc >/dev/null 2>&1; then
  cat > "$work/spin.cu" <<'CU'
#ifdef __HIP_PLATFORM_AMD__
#include <hip/hip_runtime.h>
#define cudaMalloc hipMalloc
#define cudaSuccess hipSuccess
#define cudaSetDevice hipSetDevice
#define cudaDeviceSynchronize hipDeviceSynchronize
#endif
#include <chrono>
#include <cstdio>
#include <cstdlib>
__global__ void spin(float* x, int n) {
  float a = x[blockIdx.x * blockDim.x + threadIdx.x];
  for (int i = 0; i < n; ++i) a = a * 0.999999f + 1e-6f;
  x[blockIdx.x * blockDim.x + threadIdx.x] = a;
}
int main(int argc, char** argv) {
  const double seconds = argc > 1 ? atof(argv[1]) : 5;
  if (argc > 2) cudaSetDevice(atoi(argv[2]));
  float* x = nullptr;
  if (cudaMalloc(&x, 4096 * 256 * sizeof(float)) != cudaSuccess) { std::puts("cudaMalloc failed"); return 1; }
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    spin<<<4096, 256>>>(x, 1 << 16);
    if (cudaDeviceSynchronize() != cudaSuccess) { std::puts("kernel failed"); return 1; }
  }
  return 0;
}
CU
  if [[ $backend == rocm-smi ]]; then compiler=hipcc; else compiler=nvcc; fi
  if [[ $compiler == hipcc ]]; then cp "$work/spin.cu" "$work/spin.hip.cpp"; source_file="$work/spin.hip.cpp"; else source_file="$work/spin.cu"; fi
  if command -v "$compiler" >/dev/null 2>&1 && "$compiler" -O2 -o "$work/spin" "$source_file" >"$work/compile.txt" 2>&1; then
    load="$compiler"
    "$work/spin" "$load_seconds" "$gpu" &
    load_pid=$!
  else
    echo "   $compiler failed to build the load kernel (or is missing):"; sed 's/^/   /' "$work/compile.txt" 2>/dev/null
  fi
fi
if [[ -z "$load" && $no_load -eq 0 ]]; then
  echo "   no way to run a kernel here (neither PyTorch that sees the GPU nor nvcc/hipcc); checking readings without load"
elif [[ -n "$load" ]]; then
  echo "   load: $load kernel (pid $load_pid), running ${load_seconds}s"
  sleep 2  # let it ramp up
  if ! kill -0 "$load_pid" 2>/dev/null; then
    wait "$load_pid" 2>/dev/null
    echo "   the $load kernel runner exited early (no usable GPU device?); checking readings without load"
    load=""
    load_pid=0
  fi
fi
"$wattcut" gpu check "${backend_args[@]}" --gpu "$gpu" --duration "$duration" | tee "$work/load.txt"
rc=${PIPESTATUS[0]}

setters_ok=1
if [[ $try_setters -eq 1 ]]; then
  echo "== 3. --try-setters: a real lock of the SM clock, then its reset"
  clocks=$(sed -n 's/.*SM clocks at max memory clock: \([0-9]*\)\.\.\([0-9]*\) MHz.*/\1 \2/p' "$work/list_before.txt" | head -1)
  read -r top bottom <<<"$clocks"
  if [[ -z "$top" || -z "$bottom" ]]; then
    echo "   the supported SM clocks were not listed; nothing was set"; setters_ok=0
  else
    # The range from the lowest clock to the middle one: the driver keeps the clock under its top.
    middle=$(( (top + bottom) / 2 ))
    "$wattcut" gpu lock "${backend_args[@]}" --gpu "$gpu" --sm "$bottom" --sm-max "$middle" --for 3 > "$work/lock.txt" 2>&1 &
    lock_pid=$!
    sleep 1.5
    "$wattcut" gpu list "${backend_args[@]}" --gpu "$gpu" > "$work/list_locked.txt" 2>&1
    wait "$lock_pid"; lock_rc=$?
    sed 's/^/   /' "$work/lock.txt"
    now=$(sed -n 's/.*SM clock now: \([0-9]*\) MHz.*/\1/p' "$work/list_locked.txt" | head -1)
    echo "   locked to $bottom-$middle MHz; the SM clock read ${now:-?} MHz while locked"
    # Whether the driver lists its soft limits as the supported range while a lock holds (wattcut
    # reads the range once per process, so it matters only to a process that starts meanwhile).
    listed=$(sed -n 's/.*SM clocks at max memory clock: \([0-9]*\.\.[0-9]*\) MHz.*/\1/p' "$work/list_locked.txt" | head -1)
    echo "   the SM range a new process reads while locked: ${listed:-?} MHz (unlocked: $top..$bottom MHz)"
    if [[ $lock_rc -ne 0 ]]; then echo "   the lock failed (exit $lock_rc)"; setters_ok=0; fi
    if [[ -z "$now" || "$now" -gt "$middle" ]]; then echo "   the clock was above the lock"; setters_ok=0; fi
  fi
fi
[[ -n "$load" ]] && wait "$load_pid" 2>/dev/null
load_pid=0
"$wattcut" gpu list "${backend_args[@]}" --gpu "$gpu" > "$work/list_after.txt" 2>&1

echo "== 4. nothing changed"
settings() { grep -E "power limit|memory clocks|SM clocks at" "$1"; }
if diff <(settings "$work/list_before.txt") <(settings "$work/list_after.txt") >/dev/null; then
  echo "   power limits and supported clocks are as before"
  unchanged=1
else
  echo "   settings differ between before and after:"; diff <(settings "$work/list_before.txt") <(settings "$work/list_after.txt") | sed 's/^/   /'
  unchanged=0
fi

mean_power() { sed -n 's/.*power over .*: mean \([0-9.]*\) W.*/\1/p' "$1" | head -1; }
idle_w=$(mean_power "$work/idle.txt")
load_w=$(mean_power "$work/load.txt")
echo "   mean power: idle ${idle_w:-?} W, under load ${load_w:-?} W"

if [[ $rc -ne 0 ]]; then
  fail "wattcut gpu check failed under load (see above); no GPU setting was changed"
fi
if [[ $unchanged -ne 1 ]]; then
  fail "GPU settings read differently after the check (was another job running?)"
fi
if [[ $setters_ok -ne 1 ]]; then
  fail "--try-setters: the lock did not hold or failed (see step 4); the GPU was reset after it"
fi
if [[ $try_setters -eq 1 ]]; then setters_said="a real SM lock held and was reset"; else setters_said="setters ran in dry-run only"; fi
if [[ -n "$load" && -n "$idle_w" && -n "$load_w" ]]; then
  if awk -v load="$load_w" -v idle="$idle_w" 'BEGIN { exit !(load > 1.2 * idle) }'; then
    echo "VERDICT: PASS: $backend discovery, clocks, power and energy work; power rose under a real kernel; $setters_said"
    exit 0
  fi
  fail "the power reading did not rise under a real kernel (idle ${idle_w} W, load ${load_w} W)"
fi
echo "VERDICT: PASS (readings not checked under load: no kernel runner): $backend discovery, clocks, power and energy work; $setters_said"
exit 0
