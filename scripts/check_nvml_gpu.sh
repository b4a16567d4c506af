#!/usr/bin/env bash
# Read-only check of wattcut's NVML backend on a machine with an NVIDIA GPU (issue 5, req. 4).
#
#   scripts/check_nvml_gpu.sh [--wattcut PATH] [--duration SECONDS] [--gpu INDEX] [--no-load]
#
# 1. `wattcut gpu check` with the GPU idle: discovery, supported clocks, power and energy
#    readings, every setter in dry-run (check always wraps the backend in the dry-run backend).
# 2. The same while a real kernel runs (PyTorch matmuls if `import torch` works, else a tiny CUDA
#    program built with nvcc if present), then compares the power with the idle one.
# 3. Compares `wattcut gpu list` (SM clock, power limits) before and after.
# It never changes a GPU setting. Prints one VERDICT line: PASS, FAIL or NO GPU (exit 0, 1, 2).
set -uo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
wattcut=""
duration=5
gpu=0
no_load=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --wattcut) wattcut=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --gpu) gpu=$2; shift 2 ;;
    --no-load) no_load=1; shift ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "check_nvml_gpu: unknown argument $1" >&2; exit 64 ;;
  esac
done
if [[ -z "$wattcut" ]]; then
  for candidate in "$here/build/src/wattcut/cli/wattcut" "$here/build-gpu/src/wattcut/cli/wattcut" "$(command -v wattcut || true)"; do
    if [[ -n "$candidate" && -x "$candidate" ]]; then wattcut=$candidate; break; fi
  done
fi
if [[ -z "$wattcut" || ! -x "$wattcut" ]]; then
  echo "VERDICT: FAIL: no wattcut executable (build it: cmake --preset release && cmake --build build, or pass --wattcut)"
  exit 1
fi
work=$(mktemp -d)
load_pid=0
trap '[[ $load_pid -gt 0 ]] && kill "$load_pid" 2>/dev/null; rm -rf "$work"' EXIT

echo "== wattcut: $wattcut"
if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,power.draw,power.limit --format=csv 2>&1 | sed 's/^/   /'
fi

echo "== 1. idle check"
"$wattcut" gpu check --backend nvml --gpu "$gpu" --duration 2 | tee "$work/idle.txt"
rc=${PIPESTATUS[0]}
if [[ $rc -eq 2 ]]; then
  echo "VERDICT: NO GPU: no NVIDIA GPU or driver on this machine; nothing was checked or changed"
  exit 2
fi
if [[ $rc -ne 0 ]]; then
  echo "VERDICT: FAIL: wattcut gpu check failed with the GPU idle (see above); no GPU setting was changed"
  exit 1
fi
"$wattcut" gpu list --backend nvml --gpu "$gpu" > "$work/list_before.txt" 2>&1

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
elif command -v nvcc >/dev/null 2>&1; then
  cat > "$work/spin.cu" <<'CU'
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
  if nvcc -O2 -o "$work/spin" "$work/spin.cu" >"$work/nvcc.txt" 2>&1; then
    load="nvcc"
    "$work/spin" "$load_seconds" "$gpu" &
    load_pid=$!
  else
    echo "   nvcc failed to build the load kernel:"; sed 's/^/   /' "$work/nvcc.txt"
  fi
fi
if [[ -z "$load" && $no_load -eq 0 ]]; then
  echo "   no way to run a kernel here (neither PyTorch with CUDA nor nvcc); checking readings without load"
else
  echo "   load: $load kernel (pid $load_pid), running ${load_seconds}s"
  sleep 2  # let it ramp up
  if ! kill -0 "$load_pid" 2>/dev/null; then
    wait "$load_pid" 2>/dev/null
    echo "   the $load kernel runner exited early (no usable CUDA device?); checking readings without load"
    load=""
    load_pid=0
  fi
fi
"$wattcut" gpu check --backend nvml --gpu "$gpu" --duration "$duration" | tee "$work/load.txt"
rc=${PIPESTATUS[0]}
[[ -n "$load" ]] && wait "$load_pid" 2>/dev/null
load_pid=0
"$wattcut" gpu list --backend nvml --gpu "$gpu" > "$work/list_after.txt" 2>&1

echo "== 3. nothing changed"
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
  echo "VERDICT: FAIL: wattcut gpu check failed under load (see above); no GPU setting was changed"
  exit 1
fi
if [[ $unchanged -ne 1 ]]; then
  echo "VERDICT: FAIL: GPU settings read differently after the check (wattcut changed nothing; was another job running?)"
  exit 1
fi
if [[ -n "$load" && -n "$idle_w" && -n "$load_w" ]]; then
  if awk -v load="$load_w" -v idle="$idle_w" 'BEGIN { exit !(load > 1.2 * idle) }'; then
    echo "VERDICT: PASS: NVML discovery, clocks, power and energy work; power rose under a real kernel; setters ran in dry-run only"
    exit 0
  fi
  echo "VERDICT: FAIL: the power reading did not rise under a real kernel (idle ${idle_w} W, load ${load_w} W)"
  exit 1
fi
echo "VERDICT: PASS (readings not checked under load: no kernel runner): NVML discovery, clocks, power and energy work; setters ran in dry-run only"
exit 0
