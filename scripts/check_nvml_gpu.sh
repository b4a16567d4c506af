#!/usr/bin/env bash
# Check of wattcut's NVML backend on a machine with an NVIDIA GPU (issue 5, req. 4): reads and
# reports, changes nothing without --try-setters. Options and steps: scripts/check_gpu_node.sh.
#
#   scripts/check_nvml_gpu.sh [--library PATH] [--wattcut PATH] [--duration SECONDS] [--gpu INDEX]
#                             [--no-load] [--try-setters]
exec bash "$(dirname "$0")/check_gpu_node.sh" --backend nvml "$@"
