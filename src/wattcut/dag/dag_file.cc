#include "wattcut/dag/dag_file.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unordered_map>

#include "wattcut/base/json_preview.h"
#include "wattcut/base/json_text_check.h"
#include "wattcut/dag/topological_order.h"

namespace wattcut {

namespace {

using json = nlohmann::json;

// A JSON value as a message quotes it: at most 60 characters.
std::string Quote(const json& value) { return JsonPreview(value, 57); }

// Builds "SOURCE: PATH: expected ..., got ..." messages.
class Reader {
 public:
  explicit Reader(const std::string& source) : source_(source) {}

  Error Fail(const std::string& path, const std::string& what) const {
    return Error{source_ + ": " + (path.empty() ? std::string() : path + ": ") + what};
  }
  Error Expected(const std::string& path, const std::string& expected, const json& got) const {
    return Fail(path, "expected " + expected + ", got " + Quote(got));
  }
  // Refuses fields of `object` (at `path`) not among `known`.
  Status KnownFields(const json& object, const std::string& path, std::initializer_list<std::string_view> known) const {
    for (auto it = object.begin(); it != object.end(); ++it) {
      if (std::find(known.begin(), known.end(), it.key()) == known.end()) {
        std::string list;
        for (std::string_view k : known) list += (list.empty() ? "" : ", ") + std::string(k);
        return Fail(path.empty() ? it.key() : path + "." + it.key(), "unknown field (expected one of " + list + ")");
      }
    }
    return Status::Ok();
  }
  Result<std::string> Name(const json& value, const std::string& path) const {
    if (!value.is_string()) return Expected(path, "a name (a string)", value);
    const std::string& name = value.get_ref<const std::string&>();
    if (name.empty() || name.size() > kMaxDagNameBytes) {
      return Expected(path, "a name of 1 to " + std::to_string(kMaxDagNameBytes) + " bytes", value);
    }
    return name;
  }
  // A finite number > 0 (positive) or >= 0.
  Result<double> Number(const json& value, const std::string& path, bool positive, const std::string& what) const {
    if (value.is_number()) {
      const double x = value.get<double>();
      if (std::isfinite(x) && (positive ? x > 0 : x >= 0)) return x;
    }
    return Expected(path, std::string(positive ? "a positive" : "a non-negative") + " finite number of " + what, value);
  }

 private:
  const std::string& source_;
};

std::string Index(const std::string& array, size_t i) { return array + "[" + std::to_string(i) + "]"; }

// Operations on one cycle, from the first in the file, among `left_out` (non-zero for the operations the
// topological order left out): each has a predecessor among them, so walking predecessors repeats an operation.
std::vector<int> FindCycle(const GenericDag& dag, const std::vector<int>& left_out) {
  const size_t n = dag.operations.size();
  std::vector<int> predecessor(n, -1);
  for (auto [u, v] : dag.edges) {
    if (left_out[static_cast<size_t>(u)] > 0 && left_out[static_cast<size_t>(v)] > 0) {
      predecessor[static_cast<size_t>(v)] = u;
    }
  }
  int start = -1;
  for (size_t v = 0; v < n && start < 0; ++v) {
    if (left_out[v] > 0) start = static_cast<int>(v);
  }
  std::vector<int> seen_at(n, -1), walk;
  int v = start;
  while (seen_at[static_cast<size_t>(v)] < 0) {
    seen_at[static_cast<size_t>(v)] = static_cast<int>(walk.size());
    walk.push_back(v);
    v = predecessor[static_cast<size_t>(v)];
  }
  std::vector<int> cycle(walk.begin() + seen_at[static_cast<size_t>(v)], walk.end());
  std::reverse(cycle.begin(), cycle.end());                                               // in edge direction
  std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());  // from the first in the file
  return cycle;
}

Status CheckAcyclic(const GenericDag& dag, const Reader& reader) {
  const size_t n = dag.operations.size();
  const std::vector<int> order = TopologicalOrder(n, dag.edges);
  if (order.size() == n) return Status::Ok();
  // The operations left out of the order: on a cycle or after one (FindCycle walks them).
  std::vector<int> left_out(n, 1);
  for (int v : order) left_out[static_cast<size_t>(v)] = 0;
  const std::vector<int> cycle = FindCycle(dag, left_out);
  std::string names;
  constexpr size_t kShown = 8;
  for (size_t i = 0; i < std::min(cycle.size(), kShown); ++i) {
    names += "'" + dag.operations[static_cast<size_t>(cycle[i])].name + "' -> ";
  }
  names += cycle.size() > kShown ? "... (" + std::to_string(cycle.size()) + " operations)"
                                 : "'" + dag.operations[static_cast<size_t>(cycle.front())].name + "'";
  return reader.Fail("edges", "the edges make a cycle: " + names);
}

Result<DagOperation> ParseOperation(const json& value, const std::string& path, const Reader& reader,
                                    const std::unordered_map<std::string, int>& device_index, int64_t& total_options) {
  if (!value.is_object()) return reader.Expected(path, "an operation object", value);
  if (Status s = reader.KnownFields(value, path, {"name", "device", "options"}); !s.ok()) return s.error();
  DagOperation op;
  if (!value.contains("name")) return reader.Fail(path, "missing field name");
  Result<std::string> name = reader.Name(value["name"], path + ".name");
  if (!name.ok()) return name.error();
  op.name = std::move(*name);
  if (value.contains("device")) {
    Result<std::string> device = reader.Name(value["device"], path + ".device");
    if (!device.ok()) return device.error();
    auto it = device_index.find(*device);
    if (it == device_index.end()) {
      return reader.Fail(path + ".device", "unknown device '" + *device + "' (not in devices)");
    }
    op.device = it->second;
  }
  if (!value.contains("options")) return reader.Fail(path, "missing field options");
  const json& options = value["options"];
  const std::string options_path = path + ".options";
  if (!options.is_array() || options.empty()) {
    return reader.Expected(options_path, "a non-empty array of options {time, energy, knob}", options);
  }
  if (static_cast<int64_t>(options.size()) > kMaxDagOptionsPerOperation) {
    return reader.Fail(options_path, "at most " + std::to_string(kMaxDagOptionsPerOperation) +
                                         " options an operation, got " + std::to_string(options.size()));
  }
  total_options += static_cast<int64_t>(options.size());
  if (total_options > kMaxDagOptions) {
    return reader.Fail(options_path, "more than " + std::to_string(kMaxDagOptions) + " options in all");
  }
  std::unordered_map<int, size_t> knob_at;
  for (size_t i = 0; i < options.size(); ++i) {
    const std::string at = Index(options_path, i);
    const json& o = options[i];
    if (!o.is_object()) return reader.Expected(at, "an option object {time, energy, knob}", o);
    if (Status s = reader.KnownFields(o, at, {"time", "energy", "knob"}); !s.ok()) return s.error();
    for (const char* field : {"time", "energy", "knob"}) {
      if (!o.contains(field)) return reader.Fail(at, std::string("missing field ") + field);
    }
    DagOption option;
    Result<double> time = reader.Number(o["time"], at + ".time", true, "seconds");
    if (!time.ok()) return time.error();
    Result<double> energy = reader.Number(o["energy"], at + ".energy", false, "joules");
    if (!energy.ok()) return energy.error();
    const json& knob = o["knob"];
    if (!knob.is_number_integer() ||
        (knob.is_number_unsigned() && knob.get<uint64_t>() > uint64_t{std::numeric_limits<int>::max()}) ||
        (!knob.is_number_unsigned() && (knob.get<int64_t>() < std::numeric_limits<int>::min() ||
                                        knob.get<int64_t>() > std::numeric_limits<int>::max()))) {
      return reader.Expected(at + ".knob", "an integer in [-2^31, 2^31 - 1] (a frequency in MHz, for example)", knob);
    }
    option = {*time, *energy, knob.get<int>()};
    auto [it, fresh] = knob_at.emplace(option.knob, i);
    if (!fresh) {
      return reader.Fail(at + ".knob", "knob " + std::to_string(option.knob) + " repeated (also " +
                                           Index(options_path, it->second) + "'s)");
    }
    op.options.push_back(option);
  }
  return op;
}

}  // namespace

Result<GenericDag> ParseDag(std::string_view text, const std::string& source) {
  const Reader reader(source);
  // One linear pass first (base/json_text_check.h): syntax errors with their line and column
  // (a number beyond a double's range too), the first repeated key with its path, and arrays
  // past their bound refused before any document is built.
  const std::map<std::string, int64_t> limits = {
      {"operations", kMaxDagOperations}, {"devices", kMaxDagOperations}, {"edges", kMaxDagEdges}};
  if (auto problem = FindJsonTextProblem(text, limits)) {
    switch (problem->kind) {
      case JsonTextProblem::Kind::kSyntax:
        return reader.Fail("", LineAndColumn(text, problem->byte) + ": not valid JSON" +
                                   (problem->path.empty() ? "" : " in " + problem->path) + " (" + problem->message +
                                   ")");
      case JsonTextProblem::Kind::kDuplicateKey:
        return reader.Fail(problem->path, "the field appears twice in its object");
      case JsonTextProblem::Kind::kTooManyElements:
        return reader.Fail(problem->path, "at most " + std::to_string(problem->limit) + " " + problem->path +
                                              ", got more (refused before the rest was read)");
      case JsonTextProblem::Kind::kTooDeep:
        return reader.Fail("", JsonDepthMessage(*problem));
    }
  }
  json doc;
  try {
    doc = json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {
    return reader.Fail("", std::string("not valid JSON (") + e.what() + ")");
  }
  if (!doc.is_object()) return reader.Expected("", "a JSON object {\"format\": \"wattcut.dag/v1\", ...}", doc);
  if (!doc.contains("format") || doc["format"] != kDagFormat) {
    return reader.Expected("format", "\"wattcut.dag/v1\"", doc.contains("format") ? doc["format"] : json("nothing"));
  }
  if (Status s = reader.KnownFields(doc, "", {"format", "unit_time_s", "devices", "operations", "edges"}); !s.ok()) {
    return s.error();
  }
  GenericDag dag;
  if (doc.contains("unit_time_s")) {
    Result<double> unit = reader.Number(doc["unit_time_s"], "unit_time_s", true, "seconds");
    if (!unit.ok()) return unit.error();
    dag.unit_time_s = *unit;
  }

  std::unordered_map<std::string, int> device_index;
  if (doc.contains("devices")) {
    const json& devices = doc["devices"];
    if (!devices.is_array()) return reader.Expected("devices", "an array of devices {name, blocking_power_w}", devices);
    if (static_cast<int64_t>(devices.size()) > kMaxDagOperations) {
      return reader.Fail("devices", "at most " + std::to_string(kMaxDagOperations) + " devices");
    }
    for (size_t i = 0; i < devices.size(); ++i) {
      const std::string at = Index("devices", i);
      const json& d = devices[i];
      if (!d.is_object()) return reader.Expected(at, "a device object {name, blocking_power_w}", d);
      if (Status s = reader.KnownFields(d, at, {"name", "blocking_power_w"}); !s.ok()) return s.error();
      if (!d.contains("name")) return reader.Fail(at, "missing field name");
      Result<std::string> name = reader.Name(d["name"], at + ".name");
      if (!name.ok()) return name.error();
      DagDevice device{*name, 0};
      if (d.contains("blocking_power_w")) {
        Result<double> power = reader.Number(d["blocking_power_w"], at + ".blocking_power_w", false, "watts");
        if (!power.ok()) return power.error();
        device.blocking_power_w = *power;
      }
      auto [it, fresh] = device_index.emplace(device.name, static_cast<int>(i));
      if (!fresh) {
        return reader.Fail(at + ".name", "device '" + device.name + "' is also " +
                                             Index("devices", static_cast<size_t>(it->second)) + "'s name");
      }
      dag.devices.push_back(std::move(device));
    }
  }

  if (!doc.contains("operations")) return reader.Fail("", "missing field operations");
  const json& operations = doc["operations"];
  if (!operations.is_array() || operations.empty()) {
    return reader.Expected("operations", "a non-empty array of operations {name, device, options}", operations);
  }
  if (static_cast<int64_t>(operations.size()) > kMaxDagOperations) {
    return reader.Fail("operations", "at most " + std::to_string(kMaxDagOperations) + " operations, got " +
                                         std::to_string(operations.size()));
  }
  std::unordered_map<std::string, int> operation_index;
  int64_t total_options = 0;
  for (size_t i = 0; i < operations.size(); ++i) {
    const std::string at = Index("operations", i);
    Result<DagOperation> op = ParseOperation(operations[i], at, reader, device_index, total_options);
    if (!op.ok()) return op.error();
    auto [it, fresh] = operation_index.emplace(op->name, static_cast<int>(i));
    if (!fresh) {
      return reader.Fail(at + ".name", "operation '" + op->name + "' is also " +
                                           Index("operations", static_cast<size_t>(it->second)) + "'s name");
    }
    dag.operations.push_back(std::move(*op));
  }

  if (doc.contains("edges")) {
    const json& edges = doc["edges"];
    if (!edges.is_array()) return reader.Expected("edges", "an array of edges [from, to] (operation names)", edges);
    if (static_cast<int64_t>(edges.size()) > kMaxDagEdges) {
      return reader.Fail("edges",
                         "at most " + std::to_string(kMaxDagEdges) + " edges, got " + std::to_string(edges.size()));
    }
    std::unordered_map<int64_t, size_t> edge_index;  // from x operations + to -> its first index
    for (size_t i = 0; i < edges.size(); ++i) {
      const std::string at = Index("edges", i);
      const json& e = edges[i];
      if (!e.is_array() || e.size() != 2) return reader.Expected(at, "an edge [from, to] (operation names)", e);
      int ends[2];
      for (size_t k = 0; k < 2; ++k) {
        Result<std::string> name = reader.Name(e[k], Index(at, k));
        if (!name.ok()) return name.error();
        auto it = operation_index.find(*name);
        if (it == operation_index.end()) return reader.Fail(Index(at, k), "unknown operation '" + *name + "'");
        ends[k] = it->second;
      }
      const int64_t key = static_cast<int64_t>(ends[0]) * static_cast<int64_t>(dag.operations.size()) + ends[1];
      if (auto [seen, fresh] = edge_index.emplace(key, i); !fresh) {
        return reader.Fail(at, "the same edge as " + Index("edges", seen->second) + " (each edge once)");
      }
      dag.edges.emplace_back(ends[0], ends[1]);
    }
  }
  if (Status s = CheckAcyclic(dag, reader); !s.ok()) return s.error();
  return dag;
}

Result<GenericDag> ReadDagFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error::NotFound(path + ": cannot open the DAG file");
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < 0) return Error::IOError(path + ": cannot read the DAG file");
  if (size > kMaxDagFileBytes) {
    return Error{path + ": " + std::to_string(size) + " bytes, more than a DAG file may have (" +
                 std::to_string(kMaxDagFileBytes) + ")"};
  }
  in.seekg(0);
  std::string text(static_cast<size_t>(size), '\0');
  if (!in.read(text.data(), size)) return Error::IOError(path + ": cannot read the DAG file");
  return ParseDag(text, path);
}

std::string DagText(const GenericDag& dag) {
  using ordered = nlohmann::ordered_json;
  // Names are UTF-8 when ParseDag read them; a name built otherwise with bytes that are not
  // has them replaced (U+FFFD) rather than an exception.
  constexpr auto kReplace = ordered::error_handler_t::replace;
  std::string out = "{\"format\": \"" + std::string(kDagFormat) + "\"";
  if (dag.unit_time_s) out += ",\n \"unit_time_s\": " + ordered(*dag.unit_time_s).dump();
  if (!dag.devices.empty()) {
    out += ",\n \"devices\": [";
    for (size_t i = 0; i < dag.devices.size(); ++i) {
      const DagDevice& d = dag.devices[i];
      out += (i ? ",\n  " : "\n  ") +
             ordered{{"name", d.name}, {"blocking_power_w", d.blocking_power_w}}.dump(-1, ' ', false, kReplace);
    }
    out += "]";
  }
  out += ",\n \"operations\": [";
  for (size_t i = 0; i < dag.operations.size(); ++i) {
    const DagOperation& op = dag.operations[i];
    ordered line = {{"name", op.name}};
    if (op.device >= 0) line["device"] = dag.devices.at(static_cast<size_t>(op.device)).name;
    ordered options = ordered::array();
    for (const DagOption& o : op.options)
      options.push_back({{"time", o.time_s}, {"energy", o.energy_j}, {"knob", o.knob}});
    line["options"] = std::move(options);
    out += (i ? ",\n  " : "\n  ") + line.dump(-1, ' ', false, kReplace);
  }
  out += "],\n \"edges\": [";
  for (size_t i = 0; i < dag.edges.size(); ++i) {
    const auto [u, v] = dag.edges[i];
    out += (i ? ",\n  " : "\n  ") + ordered::array({dag.operations.at(static_cast<size_t>(u)).name,
                                                    dag.operations.at(static_cast<size_t>(v)).name})
                                        .dump(-1, ' ', false, kReplace);
  }
  out += "]}\n";
  return out;
}

}  // namespace wattcut
