#include "wattcut/row_control/decision_log_audit.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "wattcut/base/general_text.h"
#include "wattcut/base/json_field.h"
#include "wattcut/base/json_object.h"
#include "wattcut/polca/row_ceiling.h"
#include "wattcut/polca/row_limits.h"
#include "wattcut/polca/row_power_policy.h"
#include "wattcut/row_control/row_state_resume.h"

namespace wattcut::row_control {

using nlohmann::json;
using polca::ControlCommand;

namespace {

// The audit's fields: the value shown as JSON, a missing field "expected ..., missing", kMalformed.
constexpr JsonFieldReader kFields{JsonFieldWording{JsonFieldWording::Got::kValue,
                                                   JsonFieldWording::Missing::kExpectedMissing, ErrorCode::kMalformed}};

std::optional<polca::PolicyLevel> ParseLevel(const std::string& name) {
  for (polca::PolicyLevel level : {polca::PolicyLevel::kNormal, polca::PolicyLevel::kT1, polca::PolicyLevel::kT2Low,
                                   polca::PolicyLevel::kT2High}) {
    if (polca::LevelName(level) == name) return level;
  }
  return std::nullopt;
}

// One line's fields, each checked for its type; `where` is "FILE:LINE: ".
class LineFields {
 public:
  LineFields(const json& doc, std::string where) : doc_(doc), where_(std::move(where)) {}

  // `in` says where `object` is ("commands[2].", "started."), empty for the line's own fields.
  Result<double> Number(const json& object, const char* key, const std::string& in = "") const {
    return Located(kFields.Number(FieldOf(object, key)), in);
  }
  Result<bool> Bool(const json& object, const char* key, const std::string& in = "") const {
    return Located(kFields.Bool(FieldOf(object, key)), in);
  }
  Result<std::string> Text(const json& object, const char* key, const std::string& in = "") const {
    return Located(kFields.String(FieldOf(object, key)), in);
  }
  Result<polca::PolicyLevel> Level(const json& object, const char* key, const std::string& in = "") const {
    Result<std::string> name = Text(object, key, in);
    if (!name.ok()) return name.error();
    std::optional<polca::PolicyLevel> level = ParseLevel(*name);
    if (!level) return Fail(in + FieldName(key) + ": expected normal, t1, t2-low or t2-high");
    return *level;
  }
  Result<const json*> Array(const json& object, const char* key) const {
    return Located(kFields.Array(FieldOf(object, key)));
  }
  Error Fail(const std::string& what) const { return Error::Malformed(where_ + what); }
  // A field reader's error, put at the line and in its object.
  template <typename T>
  Result<T> Located(Result<T> read, const std::string& in = "") const {
    if (!read.ok()) return Fail(in + read.error().message);
    return read;
  }
  const json& doc() const { return doc_; }

 private:
  const json& doc_;
  std::string where_;
};

Result<std::vector<ControlCommand>> LoggedCommands(const LineFields& f) {
  Result<const json*> list = f.Array(f.doc(), "commands");
  if (!list.ok()) return list.error();
  std::vector<ControlCommand> out;
  for (size_t k = 0; k < (*list)->size(); ++k) {
    const json& c = (**list)[k];
    const std::string in = "commands[" + std::to_string(k) + "].";
    if (!c.is_object()) return f.Fail("commands[" + std::to_string(k) + "]: expected an object");
    ControlCommand command;
    Result<std::string> target = f.Text(c, "target", in);
    if (!target.ok()) return target.error();
    Result<double> issued = f.Number(c, "issued_at_s", in);
    if (!issued.ok()) return issued.error();
    Result<double> effective = f.Number(c, "effective_at_s", in);
    if (!effective.ok()) return effective.error();
    command.issued_at_s = *issued;
    command.effective_at_s = *effective;
    if (*target == "brake") {
      command.target = ControlCommand::Target::kBrake;
      Result<bool> on = f.Bool(c, "brake_on", in);
      if (!on.ok()) return on.error();
      command.brake_on = *on;
    } else if (*target == "low" || *target == "high") {
      command.target = *target == "low" ? ControlCommand::Target::kLowPriority : ControlCommand::Target::kHighPriority;
      Result<double> mhz = f.Number(c, "lock_mhz", in);
      if (!mhz.ok()) return mhz.error();
      command.setting.lock_mhz = *mhz;
    } else {
      return f.Fail(in + FieldName("target") + ": expected low, high or brake");
    }
    out.push_back(command);
  }
  return out;
}

std::string CommandText(const ControlCommand& c) {
  std::string s = polca::TargetName(c.target) + " ";
  s += c.target == ControlCommand::Target::kBrake
           ? (c.brake_on ? "on" : "off")
           : (c.setting.lock_mhz > 0 ? GeneralText(c.setting.lock_mhz) + " MHz" : std::string("unlocked"));
  return s + " issued " + GeneralText(c.issued_at_s) + " s, effective " + GeneralText(c.effective_at_s) + " s";
}

std::string CommandsText(const std::vector<ControlCommand>& commands) {
  if (commands.empty()) return "none";
  std::string s;
  for (const ControlCommand& c : commands) s += (s.empty() ? "" : "; ") + CommandText(c);
  return s;
}

bool SameCommands(const std::vector<ControlCommand>& a, const std::vector<ControlCommand>& b) {
  if (a.size() != b.size()) return false;
  for (size_t k = 0; k < a.size(); ++k) {
    const bool brake = a[k].target == ControlCommand::Target::kBrake;
    if (a[k].target != b[k].target || a[k].issued_at_s != b[k].issued_at_s ||
        a[k].effective_at_s != b[k].effective_at_s || (brake && a[k].brake_on != b[k].brake_on) ||
        (!brake && a[k].setting.lock_mhz != b[k].setting.lock_mhz)) {
      return false;
    }
  }
  return true;
}

// The policy of one controller run, as the controller made it (row_controller.cc's ControlFor).
std::unique_ptr<polca::RowPowerPolicy> PolicyForRun(const polca::PolcaConfig& config, polca::PolicyKind kind,
                                                    bool in_band) {
  polca::ControlSpec control = config.control;
  if (in_band) {
    control.actuation_latency_s = 0;
    control.brake_latency_s = 0;
  }
  return std::make_unique<polca::RowPowerPolicy>(kind, config.policy, control);
}

}  // namespace

Result<DecisionLogAudit> AuditDecisionLog(std::istream& in, const std::string& source,
                                          const polca::PolcaConfig& config) {
  if (Status valid = polca::Validate(config); !valid.ok()) return valid.error();
  DecisionLogAudit audit;
  std::unique_ptr<polca::RowPowerPolicy> policy;
  std::string line;
  int64_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    const std::string where = source + ":" + std::to_string(number) + ": ";
    if (line.size() > kMaxDecisionLogLineBytes) {
      return Error::Malformed(where + "a line of more than " + std::to_string(kMaxDecisionLogLineBytes) +
                              " bytes is not a decision");
    }
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    Result<json> parsed = ParseJsonWithoutDuplicateKeys(line);
    if (!parsed.ok()) return Error::Malformed(where + parsed.error().message);
    if (!parsed->is_object()) return Error::Malformed(where + "expected a JSON object");
    const LineFields f(*parsed, where);

    if (auto started = parsed->find("started"); started != parsed->end()) {
      if (!started->is_object()) return f.Fail(FieldName("started") + ": expected an object");
      Result<std::string> name = f.Text(*started, "policy", "started.");
      if (!name.ok()) return name.error();
      Result<polca::PolicyKind> kind = polca::ParsePolicyKind(*name);
      if (!kind.ok()) return f.Fail("started." + FieldName("policy") + ": " + kind.error().message);
      Result<bool> in_band = f.Bool(*started, "in_band", "started.");
      if (!in_band.ok()) return in_band.error();
      Result<polca::PolicyLevel> level = f.Level(*started, "state", "started.");
      if (!level.ok()) return level.error();
      Result<bool> brake = f.Bool(*started, "brake", "started.");
      if (!brake.ok()) return brake.error();
      Result<double> at = f.Number(*started, "at_s", "started.");
      if (!at.ok()) return at.error();
      policy = PolicyForRun(config, *kind, *in_band);
      // The row's servers by class (absent from the logs of controllers before the level ceilings:
      // such a run's policy had none).
      if (auto servers = started->find("servers"); servers != started->end()) {
        if (!servers->is_object()) return f.Fail("started." + FieldName("servers") + ": expected an object");
        polca::RowServers by_class;
        for (auto [key, count] :
             {std::pair{"low_priority", &by_class.low_priority}, std::pair{"high_priority", &by_class.high_priority},
              std::pair{"training", &by_class.training}}) {
          Result<double> n = f.Number(*servers, key, "started.servers.");
          if (!n.ok()) return n.error();
          if (!(*n >= 0 && *n <= polca::kMaxServersPerRow && *n == std::floor(*n))) {
            return f.Fail("started.servers." + FieldName(key) + ": expected a whole number of servers from 0 to " +
                          std::to_string(polca::kMaxServersPerRow));
          }
          *count = static_cast<int>(*n);
        }
        policy->SetLevelCeilings(polca::RowCeilings(config, *policy, by_class));
      }
      policy->Resume(*level, *brake, *at);
      ++audit.runs;
      audit.policies.push_back(*name);
    } else if (policy == nullptr) {
      return f.Fail("the log starts without a controller's " + FieldName("started") +
                    " record, so nothing says which policy wrote it (written by a controller older than "
                    "`polca audit`?)");
    }

    Result<double> now = f.Number(*parsed, "time");
    if (!now.ok()) return now.error();
    Result<double> measured_at = f.Number(*parsed, "measured_at_s");
    if (!measured_at.ok()) return measured_at.error();
    Result<double> fraction = f.Number(*parsed, "fraction");
    if (!fraction.ok()) return fraction.error();
    Result<const json*> stale = f.Array(*parsed, "stale_servers");
    if (!stale.ok()) return stale.error();
    Result<polca::PolicyLevel> state = f.Level(*parsed, "state");
    if (!state.ok()) return state.error();
    Result<bool> brake = f.Bool(*parsed, "brake");
    if (!brake.ok()) return brake.error();
    Result<std::vector<ControlCommand>> logged = LoggedCommands(f);
    if (!logged.ok()) return logged.error();

    const std::vector<ControlCommand> decided = policy->Decide({*measured_at, *fraction, (*stale)->empty()}, *now);
    ++audit.decisions;
    audit.commands += static_cast<int64_t>(logged->size());
    std::string why;
    if (!SameCommands(decided, *logged)) {
      why = "the policy sends " + CommandsText(decided) + ", the log shows " + CommandsText(*logged);
    } else if (policy->level() != *state || policy->brake_requested() != *brake) {
      why = "the policy is in " + CeilingReason({policy->level(), policy->brake_requested()}) + ", the log shows " +
            CeilingReason({*state, *brake});
    }
    if (!why.empty()) {
      ++audit.mismatched_lines;
      if (audit.mismatches.size() < kMaxReportedMismatches) {
        audit.mismatches.push_back(where + "at " + GeneralText(*now) + " s, reading " + GeneralText(*fraction) + ": " +
                                   why);
      }
    }
  }
  if (in.bad()) return Error::IOError(source + ": read failed: " + std::strerror(errno));
  return audit;
}

Result<DecisionLogAudit> AuditDecisionLogFile(const std::string& path, const polca::PolcaConfig& config) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    return Error::InvalidArgument(path + ": is a folder, not a decision log");
  std::ifstream in(path);
  if (!in) return Error::IOError(path + ": " + std::strerror(errno));
  return AuditDecisionLog(in, path, config);
}

}  // namespace wattcut::row_control
