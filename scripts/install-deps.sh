#!/usr/bin/env bash
# Installs every Debian 12 package wattcut builds, tests or runs with. Idempotent:
# apt-get skips what is already installed. Runs as root, or through sudo otherwise.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libgtest-dev libgmock-dev libbenchmark-dev   # tests and benchmarks
  libcli11-dev                                 # command line
  nlohmann-json3-dev                           # plan and summary JSON
  libglpk-dev                                  # LP oracle in the solver's optimality test
  libsqlite3-dev                               # server's durable store
  libcpp-httplib-dev libssl-dev zlib1g-dev     # server HTTP
  libcurl4-openssl-dev                         # HTTP client of the node agent (Unix sockets) and Redfish
  librocm-smi64-1 rocm-smi                     # AMD GPUs: the ROCm SMI backend's tests drive the real library (loaded at run time)
  tzdata                                       # time zones of nvidia-smi's local times (polca replay --time-zone)
  curl jq                                      # the server docs' commands, run by server_docs_test
  clang libclang-rt-dev                        # server fuzz target (libFuzzer; optional build)
  clang-format-14                              # the code's layout, checked by the test command
  python3 python3-dev pybind11-dev             # the Python module wattcut (for /usr/bin/python3)
  python3-torch python3-numpy                  # the PyTorch example and its end-to-end test
  python3-yaml                                 # tests/deploy: the DaemonSet and the agent's OpenAPI parse
  python3-venv python3-setuptools python3-wheel # pip install of wattcut into a venv (tests/install)
  lintian                                      # tests/deploy: the Debian package's check (make deb)
  libslurm-dev slurm-wlm munge                 # the Slurm SPANK plugin (spank.h) and its test against a real Slurm
  chromium tesseract-ocr tesseract-ocr-eng fonts-dejavu-core  # status page browser test: screenshot, OCR
)

if [[ $(id -u) -eq 0 ]]; then sudo_cmd=(); else sudo_cmd=(sudo); fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update
"${sudo_cmd[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
