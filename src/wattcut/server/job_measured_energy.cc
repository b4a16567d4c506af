#include "wattcut/server/job_measured_energy.h"

#include <set>

#include "wattcut/server/job_views.h"

namespace wattcut::server {

using nlohmann::json;

Answer ReportMeasuredGpuEnergy(Job& job, const std::string& node, const NodeGpuEnergy& report) {
  MeasuredGpuEnergy next = job.measured_gpu_energy();
  next[node] = report;
  JobEdit edit;
  edit.measured_gpu_energy = std::move(next);
  if (Status s = job.Commit(std::move(edit)); !s) return s.error();
  return AnswerText(MeasuredEnergyAnswerJson(job));
}

Answer MeasuredGpuEnergyNodes(Job& job, int64_t offset, int64_t limit) {
  if (offset < 0) return Error::InvalidArgument("query parameter 'offset': expected an integer >= 0");
  if (limit < 1 || limit > kMaxMeasuredNodesPerPage) {
    return Error::InvalidArgument("query parameter 'limit': expected 1 to " + std::to_string(kMaxMeasuredNodesPerPage) +
                                  " nodes, got " + std::to_string(limit));
  }
  json out = {{"job_id", job.id()}};
  out.update(MeasuredGpuEnergyNodesJson(job.measured_gpu_energy(), offset, limit));
  return AnswerText(out);
}

json GpuEnergyJson(const Job& job) {
  const EnergySavingTally& tally = job.saving();
  return {{"measured_gpu_energy", MeasuredGpuEnergyJson(job.measured_gpu_energy())},
          {"estimated_gpu_energy_j", tally.estimated_j()},
          {"estimated_gpu_energy_steps", tally.estimated_steps()}};
}

json MeasuredEnergyAnswerJson(const Job& job) {
  json out = {{"job_id", job.id()}};
  out.update(GpuEnergyJson(job));
  return out;
}

StatusGpuEnergyView StatusGpuEnergy(const Job& job) {
  StatusGpuEnergyView v;
  const MeasuredGpuEnergy& measured = job.measured_gpu_energy();
  v.measured_nodes = measured.size();
  v.measured_j = TotalGpuEnergyJ(measured);
  std::set<std::string> sources;
  for (const auto& [node, report] : measured) {
    if (!report.source.empty() && sources.insert(report.source).second) v.sources.push_back(report.source);
  }
  v.estimated_j = job.saving().estimated_j();
  v.estimated_steps = job.saving().estimated_steps();
  return v;
}

MeasuredGpuEnergyGauge MeasuredGpuEnergyGaugeOf(const Job& job) {
  return MeasuredGpuEnergyGauge{job.id(), TotalGpuEnergyJ(job.measured_gpu_energy())};
}

}  // namespace wattcut::server
