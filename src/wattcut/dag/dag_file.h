// Generic DAGs: the `wattcut.dag/v1` file, any DAG of operations with their measured
// options, for jobs that are not one of the pipeline schedules (docs/planner.md, "Generic
// DAGs"):
//
//   {"format": "wattcut.dag/v1",
//    "unit_time_s": 0.001,                                  (optional)
//    "devices": [{"name": "gpu0", "blocking_power_w": 70.4}],  (optional)
//    "operations": [{"name": "F0", "device": "gpu0",         (device optional)
//                    "options": [{"time": 0.0123, "energy": 3.2, "knob": 1410}, ...]}, ...],
//    "edges": [["F0", "F1"], ...]}                          (from finishes before to starts)
//
// An option is one way to run the operation: its measured time (s) and energy (J) and the
// knob that gives them (an integer: a frequency in MHz, or whatever the user's runtime
// understands). A device's blocking power is what it draws while none of its operations
// runs; an operation without a device has none.
//
// Reading checks everything about the file itself and refuses it with a message that names
// the file, the JSON path and what was expected: unknown fields, wrong types, non-positive
// times, negative energies, a knob repeated within an operation, duplicate names, edges
// naming unknown operations, cycles (naming operations on one), and the bounds below.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/dag/dag_limits.h"

namespace wattcut {

inline constexpr std::string_view kDagFormat = "wattcut.dag/v1";

// Bounds of a DAG file. Operations: the planner's computations per iteration
// (kMaxComputations, 2^20). Edges: 16 times the operations in all (one operation may have
// more; each edge once). Options: 2^24 in all (as many as the
// cost tables may hold, kMaxDurationTableEntries), 4,096 per operation (a GPU has ~100
// frequencies). Names: 256 bytes. Devices: as many as operations. File: 1 GiB.
inline constexpr int64_t kMaxDagOperations = kMaxComputations;
inline constexpr int64_t kMaxDagEdges = 16 * kMaxComputations;
inline constexpr int64_t kMaxDagOptions = kMaxDurationTableEntries;
inline constexpr int64_t kMaxDagOptionsPerOperation = 4096;
inline constexpr size_t kMaxDagNameBytes = 256;
inline constexpr int64_t kMaxDagFileBytes = int64_t{1} << 30;

struct DagOption {
  double time_s = 0;
  double energy_j = 0;
  int knob = 0;
};

struct DagDevice {
  std::string name;
  double blocking_power_w = 0;
};

struct DagOperation {
  std::string name;
  int device = -1;  // index into GenericDag::devices; -1 when it has none
  std::vector<DagOption> options;
};

struct GenericDag {
  std::optional<double> unit_time_s;  // the file's; absent when it names none
  std::vector<DagDevice> devices;
  std::vector<DagOperation> operations;
  std::vector<std::pair<int, int>> edges;  // (from, to) operation indices
};

// Parses `text`; `source` (the file's name as the user gave it) starts every message:
// "dag.json: operations[3].options[1].time: expected a positive finite number of seconds, got -1".
Result<GenericDag> ParseDag(std::string_view text, const std::string& source);
// Reads and parses the file at `path` (refused above kMaxDagFileBytes).
Result<GenericDag> ReadDagFile(const std::string& path);

// The DAG as `wattcut.dag/v1` text: one device, operation or edge a line, numbers as they
// read back exactly. ParseDag(DagText(dag)) gives `dag` again.
std::string DagText(const GenericDag& dag);

}  // namespace wattcut
