#!/usr/bin/env bash
# Check of wattcut's ROCm SMI backend on a machine with an AMD Instinct GPU (issue 57): reads and
# reports, changes nothing without --try-setters. ROCm's own library: --library
# /opt/rocm/lib/librocm_smi64.so.1 (Debian's librocm-smi64-1 is found without it). Options and
# steps: scripts/check_gpu_node.sh. Send the whole output.
#
#   scripts/check_rocm_gpu.sh [--library PATH] [--wattcut PATH] [--duration SECONDS] [--gpu INDEX]
#                             [--no-load] [--try-setters]
exec bash "$(dirname "$0")/check_gpu_node.sh" --backend rocm-smi "$@"
