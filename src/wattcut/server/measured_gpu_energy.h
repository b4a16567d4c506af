// The GPU energy a job measurably used, as the nodes it ran on report it (PUT
// /v1/jobs/{id}/measured-energy/{node}; a Slurm epilog sends what the node agent read from the
// NVML energy counters of the job's GPUs): per node, the joules, over how long, on which GPUs,
// and who measured them. A node's later report replaces its earlier one (an epilog retried).
//
// A measurement, not the planner's estimate (energy_saving.h): it covers the whole job on the
// node, start-up and profiling included, where the estimate covers the steps the ranks reported.
// Pure values and their JSON forms, every error naming its field; no lock, no I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "wattcut/base/result.h"

namespace wattcut::server {

inline constexpr size_t kNodeNameMaxChars = 253;  // a DNS name's longest
inline constexpr size_t kMeasuredEnergySourceMaxBytes = 64;
inline constexpr int kMaxGpuIndex = 65535;
inline constexpr size_t kMaxGpusPerNode = 1024;
// Far above any node's lifetime (10 kW for 3,000 years is 1e15 J), so that a job's total stays finite.
inline constexpr double kMaxNodeGpuEnergyJ = 1e15;
inline constexpr double kMaxMeasuredDurationS = 1e10;
// The most nodes a job keeps a report of: a job's state stays small (a report is about 100 bytes).
inline constexpr size_t kMaxMeasuredNodesPerJob = 4096;
// The most GPUs a job's reports list in all (4,096 nodes of 16): with the nodes' bound, a job's
// stored reports stay under 1 MB. Before it, 120 reports of 1,024 GPUs each grew a server from
// 54 MB to 1 GB, and each answer carried every report (4-5 MB).
inline constexpr size_t kMaxMeasuredGpusPerJob = 65536;
// The most nodes one page of GET /v1/jobs/{id}/measured-energy lists.
inline constexpr int64_t kMaxMeasuredNodesPerPage = 1000;

// One node's report: the body of PUT .../measured-energy/{node},
//   {"gpu_energy_j": J, "duration_s": S, "gpus": [0, 1, 2, 3], "source": "slurm-epilog"}
// gpu_energy_j and duration_s finite and >= 0, gpus distinct integers in [0, kMaxGpuIndex]
// (may be empty), source optional printable text of at most kMeasuredEnergySourceMaxBytes
// bytes; any other field is refused.
struct NodeGpuEnergy {
  double gpu_energy_j = 0;
  double duration_s = 0;
  std::vector<int> gpus;
  std::string source;  // empty: not said

  nlohmann::json ToJson() const;
  static Result<NodeGpuEnergy> FromJson(const nlohmann::json& json);
  bool operator==(const NodeGpuEnergy&) const = default;
};

// Every node's report, by node name.
using MeasuredGpuEnergy = std::map<std::string, NodeGpuEnergy>;

// kInvalidArgument unless `node` is a host name: 1 to kNodeNameMaxChars characters of A-Z,
// a-z, 0-9, '.', '-' and '_'.
Status CheckNodeName(std::string_view node);

// The sum over the nodes.
double TotalGpuEnergyJ(const MeasuredGpuEnergy& measured);

// The GPUs the reports list, over the nodes.
size_t TotalGpus(const MeasuredGpuEnergy& measured);
// As a job's answers summarise it (the job, a node's PUT): {"total_j": J, "node_count": N,
// "gpu_count": G, "sources": [...]}, or null when no node reported. Small whatever the reports:
// the reports themselves are MeasuredGpuEnergyNodesJson's.
nlohmann::json MeasuredGpuEnergyJson(const MeasuredGpuEnergy& measured);
// GET /v1/jobs/{id}/measured-energy, one page by node name: {"total_j", "node_count", "offset",
// "limit", "nodes": [{"node": N, "gpu_energy_j": ..., "duration_s": ..., "gpus": [...],
// "source": "..."}, ...]}. `limit` in [1, kMaxMeasuredNodesPerPage], `offset` >= 0.
nlohmann::json MeasuredGpuEnergyNodesJson(const MeasuredGpuEnergy& measured, int64_t offset, int64_t limit);

// As the job's state document stores it: {"NODE": report, ...}; read back with the request's
// checks (and at most kMaxMeasuredNodesPerJob nodes).
nlohmann::json StoredMeasuredGpuEnergyJson(const MeasuredGpuEnergy& measured);
Result<MeasuredGpuEnergy> StoredMeasuredGpuEnergyFromJson(const nlohmann::json& json);

}  // namespace wattcut::server
