#include "wattcut/plan/dag_frontier_file.h"

#include <limits>
#include <unordered_set>
#include <vector>

#include "wattcut/base/printable_text.h"
#include "wattcut/dag/dag_file.h"
#include "wattcut/plan/frontier_file.h"
#include "wattcut/plan/frontier_text.h"
#include "wattcut/plan/planning_limits.h"

namespace wattcut {
namespace {

using frontier_text::AppendInt;
using frontier_text::AppendNumber;
using frontier_text::LineReader;

constexpr char kHexDigits[] = "0123456789ABCDEF";

bool NeedsEscape(unsigned char c) { return c <= ' ' || c == 0x7F || c == '%'; }

void AppendName(std::string& out, std::string_view name) {
  for (char ch : name) {
    const auto c = static_cast<unsigned char>(ch);
    if (NeedsEscape(c)) {
      out += '%';
      out += kHexDigits[c >> 4];
      out += kHexDigits[c & 0xF];
    } else {
      out += ch;
    }
  }
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// Token `i` as a name: %XX decoded, non-empty, at most kMaxDagNameBytes.
Result<std::string> ReadName(const LineReader& in, size_t i, const char* field) {
  std::string_view t = in.Token(i);
  std::string name;
  for (size_t k = 0; k < t.size(); ++k) {
    if (t[k] != '%') {
      name += t[k];
      continue;
    }
    const int hi = k + 2 < t.size() ? HexValue(t[k + 1]) : -1;
    const int lo = k + 2 < t.size() ? HexValue(t[k + 2]) : -1;
    if (hi < 0 || lo < 0) {
      return in.Fail(std::string(field) + ": expected %XX (two hex digits) after '%', got '" + PrintableText(t, 40) +
                     "'");
    }
    name += static_cast<char>(hi * 16 + lo);
    k += 2;
  }
  if (name.empty()) return in.Fail(std::string(field) + ": expected a name");
  if (name.size() > kMaxDagNameBytes) {
    return in.Fail(std::string(field) + ": a name of more than " + std::to_string(kMaxDagNameBytes) + " bytes");
  }
  return name;
}

}  // namespace

std::string DagFrontierFileText(const DagFrontier& frontier) {
  const DagFrontier::Setup& setup = frontier.setup();
  std::string out;
  out.reserve(64 * frontier.points().size() + 32 * setup.operations.size());
  out += kDagFrontierFormat;
  out += "\nunit_time_s ";
  AppendNumber(out, setup.unit_time_s);
  out += "\ndevices ";
  AppendInt(out, static_cast<int64_t>(setup.devices.size()));
  out += '\n';
  for (const DagFrontier::Device& device : setup.devices) {
    out += "device ";
    AppendName(out, device.name);
    out += ' ';
    AppendNumber(out, device.blocking_power_w);
    out += '\n';
  }
  out += "operations ";
  AppendInt(out, static_cast<int64_t>(setup.operations.size()));
  out += '\n';
  for (const DagFrontier::Operation& op : setup.operations) {
    out += "operation ";
    AppendName(out, op.name);
    out += ' ';
    AppendInt(out, op.device);
    for (const auto& [duration, knob] : op.options) {
      out += ' ';
      AppendInt(out, duration);
      out += ':';
      AppendInt(out, knob);
    }
    out += '\n';
  }
  frontier_text::AppendPoints(out, frontier);
  return out;
}

Result<DagFrontier> ParseDagFrontierFile(std::string_view text, const std::string& source) {
  LineReader in(text, source);
  if (!in.Next() || in.size() != 1 || in.Token(0) != kDagFrontierFormat) {
    return in.Fail("expected the format line '" + std::string(kDagFrontierFormat) + "', got '" +
                   PrintableText(in.Token(0), 40) + "'");
  }
  DagFrontier::Setup setup;
  if (auto s = in.Expect("unit_time_s"); !s) return s.error();
  WATTCUT_TEXT_ASSIGN(setup.unit_time_s, in.Number(1, "unit_time_s"));
  if (!(setup.unit_time_s > 0)) return in.Fail("unit_time_s: expected a number > 0");

  if (auto s = in.Expect("devices"); !s) return s.error();
  int64_t num_devices = 0;
  WATTCUT_TEXT_ASSIGN(num_devices, in.Integer(1, "devices", 0, kMaxDagOperations));
  std::unordered_set<std::string> names;
  for (int64_t d = 0; d < num_devices; ++d) {
    if (auto s = in.Expect("device"); !s) return s.error();
    if (in.size() != 3) return in.Fail("device: expected NAME BLOCKING_POWER_W");
    DagFrontier::Device device;
    WATTCUT_TEXT_ASSIGN(device.name, ReadName(in, 1, "device name"));
    WATTCUT_TEXT_ASSIGN(device.blocking_power_w, in.Number(2, "blocking_power_w"));
    if (!names.insert(device.name).second) {
      return in.Fail("device name: '" + PrintableText(device.name, 40) + "' names two devices");
    }
    setup.devices.push_back(std::move(device));
  }

  if (auto s = in.Expect("operations"); !s) return s.error();
  int64_t num_operations = 0;
  WATTCUT_TEXT_ASSIGN(num_operations, in.Integer(1, "operations", 1, kMaxDagOperations));
  names.clear();
  int64_t total_options = 0;
  for (int64_t i = 0; i < num_operations; ++i) {
    if (auto s = in.Expect("operation"); !s) return s.error();
    if (in.size() < 4) return in.Fail("operation: expected NAME DEVICE DURATION_UNITS:KNOB ...");
    if (static_cast<int64_t>(in.size()) - 3 > kMaxDagOptionsPerOperation) {
      return in.Fail("operation: more than " + std::to_string(kMaxDagOptionsPerOperation) + " options");
    }
    total_options += static_cast<int64_t>(in.size()) - 3;
    if (total_options > kMaxDagOptions) return in.Fail("more than " + std::to_string(kMaxDagOptions) + " options");
    DagFrontier::Operation op;
    WATTCUT_TEXT_ASSIGN(op.name, ReadName(in, 1, "operation name"));
    if (!names.insert(op.name).second) {
      return in.Fail("operation name: '" + PrintableText(op.name, 40) + "' names two operations");
    }
    int64_t device = 0;
    WATTCUT_TEXT_ASSIGN(device, in.Integer(2, "operation device", -1, num_devices - 1));
    op.device = static_cast<int>(device);
    for (size_t t = 3; t < in.size(); ++t) {
      std::pair<int64_t, int64_t> option;
      WATTCUT_TEXT_ASSIGN(option, in.Pair(t, "option DURATION_UNITS:KNOB", kMaxDurationUnits,
                                          std::numeric_limits<int>::max(), std::numeric_limits<int>::min()));
      if (!op.options.empty() && option.first < op.options.back().first) {
        return in.Fail("option: durations must not decrease, got " + std::to_string(option.first) + " after " +
                       std::to_string(op.options.back().first));
      }
      op.options.emplace_back(option.first, static_cast<int>(option.second));
    }
    setup.operations.push_back(std::move(op));
  }
  std::vector<int64_t> start;
  WATTCUT_TEXT_ASSIGN(start, frontier_text::ReadStart(in, num_operations));
  DagFrontier frontier(std::move(setup), std::move(start));
  if (Status s = frontier_text::ReadPoints(in, frontier); !s.ok()) return s.error();
  return frontier;
}

Result<DagFrontier> ReadDagFrontierFile(const std::string& path) {
  Result<frontier_text::FrontierText> read = frontier_text::ReadText(path);
  if (!read.ok()) return read.error();
  const std::string_view format = frontier_text::FormatLine(read->text);
  if (format == kFrontierFormat || format == kFrontierFormatV2) {
    return Error{read->file + ": a pipeline's frontier (" + std::string(format) +
                 "), not a generic DAG's: read it with ReadFrontierFile (plan/frontier_file.h)"};
  }
  return ParseDagFrontierFile(read->text, read->file);
}

Result<FrontierFileKind> ReadFrontierFileKind(const std::string& path) {
  Result<frontier_text::FrontierText> read = frontier_text::ReadFormatLine(path);
  if (!read.ok()) return read.error();
  const std::string_view format = read->text;
  if (format == kDagFrontierFormat) return FrontierFileKind::kDag;
  if (format == kFrontierFormat || format == kFrontierFormatV2) return FrontierFileKind::kPipeline;
  return Error::Corruption(read->file + ":1: expected the format line '" + std::string(kFrontierFormat) + "', '" +
                           std::string(kFrontierFormatV2) + "' or '" + std::string(kDagFrontierFormat) + "', got '" +
                           PrintableText(format, 40) + "'");
}

}  // namespace wattcut
