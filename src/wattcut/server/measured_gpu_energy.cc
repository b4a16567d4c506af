#include "wattcut/server/measured_gpu_energy.h"

#include <set>

#include "wattcut/base/general_text.h"
#include "wattcut/base/json_object.h"
#include "wattcut/base/printable_text.h"
#include "wattcut/server/json_fields.h"

namespace wattcut::server {

using nlohmann::json;

namespace {

// A required number in [0, max], named with its unit in the message.
Result<double> AmountField(const json& object, const char* name, const char* unit, double max) {
  auto v = NumberField(object, name);
  if (!v) return v.error();
  if (!(*v >= 0 && *v <= max)) {
    return Error{std::string("field '") + name + "': expected " + unit + " in [0, " + GeneralText(max) + "], got " +
                 GeneralText(*v)};
  }
  return *v;
}

Result<std::vector<int>> GpuList(const json& object) {
  auto it = object.find("gpus");
  if (it == object.end()) return Error{"field 'gpus' is required (the job's GPUs on the node; [] for none)"};
  if (!it->is_array()) return kRequestFields.Expected({&*it, "gpus"}, "a list of GPU indices");
  if (it->size() > kMaxGpusPerNode) {
    return Error{"field 'gpus': at most " + std::to_string(kMaxGpusPerNode) + " GPUs, got " +
                 std::to_string(it->size())};
  }
  std::vector<int> gpus;
  std::set<int> seen;
  for (size_t i = 0; i < it->size(); ++i) {
    const json& g = (*it)[i];
    const std::string what = "field 'gpus[" + std::to_string(i) + "]'";
    const bool in_range =
        g.is_number_integer() && (g.is_number_unsigned() ? g.get<uint64_t>() <= kMaxGpuIndex
                                                         : g.get<int64_t>() >= 0 && g.get<int64_t>() <= kMaxGpuIndex);
    if (!in_range) {
      return Error{what + ": expected a GPU index, an integer in [0, " + std::to_string(kMaxGpuIndex) + "], got " +
                   (g.is_number_integer() ? g.dump() : TypeName(g))};
    }
    const int gpu = g.get<int>();
    if (!seen.insert(gpu).second) return Error{what + ": GPU " + std::to_string(gpu) + " is listed twice"};
    gpus.push_back(gpu);
  }
  return gpus;
}

Result<std::string> SourceField(const json& object) {
  auto it = object.find("source");
  if (it == object.end() || it->is_null()) return std::string();
  if (!it->is_string()) return kRequestFields.Expected({&*it, "source"}, "a string");
  const std::string& source = it->get_ref<const std::string&>();
  if (source.size() > kMeasuredEnergySourceMaxBytes) {
    return Error{"field 'source': at most " + std::to_string(kMeasuredEnergySourceMaxBytes) + " bytes, got " +
                 std::to_string(source.size())};
  }
  // PrintableText escapes exactly what is not printable: control bytes and invalid UTF-8.
  if (PrintableText(source, kMeasuredEnergySourceMaxBytes) != source) {
    return Error{"field 'source': expected printable text, got " + Shown(*it)};
  }
  return source;
}

}  // namespace

Result<NodeGpuEnergy> NodeGpuEnergy::FromJson(const json& j) {
  if (auto s = RequireObject(j, "measured GPU energy"); !s) return s.error();
  if (auto s = RefuseUnknownFields(j, {"gpu_energy_j", "duration_s", "gpus", "source"}); !s) return s.error();
  NodeGpuEnergy report;
  auto energy = AmountField(j, "gpu_energy_j", "joules", kMaxNodeGpuEnergyJ);
  if (!energy) return energy.error();
  report.gpu_energy_j = *energy;
  auto duration = AmountField(j, "duration_s", "seconds", kMaxMeasuredDurationS);
  if (!duration) return duration.error();
  report.duration_s = *duration;
  auto gpus = GpuList(j);
  if (!gpus) return gpus.error();
  report.gpus = std::move(*gpus);
  auto source = SourceField(j);
  if (!source) return source.error();
  report.source = std::move(*source);
  return report;
}

json NodeGpuEnergy::ToJson() const {
  return {{"gpu_energy_j", gpu_energy_j}, {"duration_s", duration_s}, {"gpus", gpus}, {"source", source}};
}

Status CheckNodeName(std::string_view node) {
  bool ok = !node.empty() && node.size() <= kNodeNameMaxChars;
  for (char c : node) {
    const bool allowed =
        (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
    ok = ok && allowed;
  }
  if (ok) return Status::Ok();
  return Error{"node '" + PrintableText(node, 64) + "': expected a host name, 1 to " +
               std::to_string(kNodeNameMaxChars) + " characters of A-Z, a-z, 0-9, '.', '-' and '_'"};
}

double TotalGpuEnergyJ(const MeasuredGpuEnergy& measured) {
  double total_j = 0;
  for (const auto& [node, report] : measured) total_j += report.gpu_energy_j;
  return total_j;
}

size_t TotalGpus(const MeasuredGpuEnergy& measured) {
  size_t gpus = 0;
  for (const auto& [node, report] : measured) gpus += report.gpus.size();
  return gpus;
}

json MeasuredGpuEnergyJson(const MeasuredGpuEnergy& measured) {
  if (measured.empty()) return nullptr;
  std::set<std::string> sources;
  for (const auto& [node, report] : measured) {
    if (!report.source.empty()) sources.insert(report.source);
  }
  return {{"total_j", TotalGpuEnergyJ(measured)},
          {"node_count", measured.size()},
          {"gpu_count", TotalGpus(measured)},
          {"sources", sources}};
}

json MeasuredGpuEnergyNodesJson(const MeasuredGpuEnergy& measured, int64_t offset, int64_t limit) {
  json nodes = json::array();
  int64_t index = 0;
  for (const auto& [node, report] : measured) {
    if (index++ < offset) continue;
    if (static_cast<int64_t>(nodes.size()) >= limit) break;
    json entry = report.ToJson();
    entry["node"] = node;
    nodes.push_back(std::move(entry));
  }
  return {{"total_j", TotalGpuEnergyJ(measured)},
          {"node_count", measured.size()},
          {"offset", offset},
          {"limit", limit},
          {"nodes", std::move(nodes)}};
}

json StoredMeasuredGpuEnergyJson(const MeasuredGpuEnergy& measured) {
  json out = json::object();
  for (const auto& [node, report] : measured) out[node] = report.ToJson();
  return out;
}

Result<MeasuredGpuEnergy> StoredMeasuredGpuEnergyFromJson(const json& j) {
  if (auto s = RequireObject(j, "measured GPU energy"); !s) return s.error();
  if (j.size() > kMaxMeasuredNodesPerJob) {
    return Error{"at most " + std::to_string(kMaxMeasuredNodesPerJob) + " nodes, got " + std::to_string(j.size())};
  }
  MeasuredGpuEnergy measured;
  for (const auto& [node, value] : j.items()) {
    if (Status s = CheckNodeName(node); !s) return s.error();
    auto report = NodeGpuEnergy::FromJson(value);
    if (!report) return Error{"node '" + node + "': " + report.error().message};
    measured[node] = std::move(*report);
  }
  return measured;
}

}  // namespace wattcut::server
