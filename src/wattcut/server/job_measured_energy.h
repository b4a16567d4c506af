// The GPU energy a job measurably used (PUT /v1/jobs/{id}/measured-energy/{node},
// measured_gpu_energy.h) beside the planner's estimate of what its reported steps used
// (energy_saving.h): a node's report stored, and both shown (the answers, the status page's row,
// the /metrics gauge), each view from the job as it stands.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "wattcut/server/job.h"
#include "wattcut/server/job_context.h"
#include "wattcut/server/measured_gpu_energy.h"
#include "wattcut/server/metrics.h"
#include "wattcut/server/status_page.h"

namespace wattcut::server {

// Stores `node`'s report (replacing one it sent before) with the job's state; answers as
// MeasuredEnergyAnswerJson. kConflict when kMaxMeasuredNodesPerJob other nodes reported, or when
// the reports would list more than kMaxMeasuredGpusPerJob GPUs. The
// node's name is checked by the caller (CheckNodeName).
Answer ReportMeasuredGpuEnergy(Job& job, const std::string& node, const NodeGpuEnergy& report) REQUIRES(job.mu());

// GET /v1/jobs/{id}/measured-energy: the nodes' reports, one page (MeasuredGpuEnergyNodesJson).
// kInvalidArgument for a limit outside [1, kMaxMeasuredNodesPerPage] or a negative offset.
Answer MeasuredGpuEnergyNodes(Job& job, int64_t offset, int64_t limit) REQUIRES(job.mu());

// {"measured_gpu_energy": MeasuredGpuEnergyJson (null: no node reported; a summary),
//  "estimated_gpu_energy_j": J, "estimated_gpu_energy_steps": N}: the planner's estimate over
// the N steps it could estimate of those the ranks reported since the server started.
nlohmann::json GpuEnergyJson(const Job& job) REQUIRES(job.mu());
// The PUT's answer: {"job_id": ...} and GpuEnergyJson.
nlohmann::json MeasuredEnergyAnswerJson(const Job& job) REQUIRES(job.mu());

StatusGpuEnergyView StatusGpuEnergy(const Job& job) REQUIRES(job.mu());
// Only for a job some node reported for.
MeasuredGpuEnergyGauge MeasuredGpuEnergyGaugeOf(const Job& job) REQUIRES(job.mu());

}  // namespace wattcut::server
