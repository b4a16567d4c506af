#include "wattcut/row_control/decision_log.h"

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

namespace wattcut::row_control {

using nlohmann::json;
using polca::ControlCommand;

std::string DecisionLogLine(const Decision& d, const std::vector<std::string>& server_names) {
  json commands = json::array();
  for (const ControlCommand& c : d.commands) {
    json doc = {
        {"target", polca::TargetName(c.target)}, {"issued_at_s", c.issued_at_s}, {"effective_at_s", c.effective_at_s}};
    if (c.target == ControlCommand::Target::kBrake) {
      doc["brake_on"] = c.brake_on;
    } else {
      doc["lock_mhz"] = c.setting.lock_mhz;
    }
    commands.push_back(doc);
  }
  json sent = json::array();
  for (const CeilingCommand& c : d.sent) {
    sent.push_back({{"server", c.server < server_names.size() ? server_names[c.server] : std::to_string(c.server)},
                    {"mhz", c.mhz ? json(*c.mhz) : json(nullptr)}});
  }
  json doc = {{"time", d.now_s},
              {"unix_time", d.unix_time_s},
              {"measured_at_s", d.measured_at_s},
              {"row_power_w", d.row_power_w},
              {"fraction", d.fraction},
              {"state", polca::LevelName(d.level)},
              {"brake", d.brake},
              {"stale_servers", d.stale_servers},
              {"stale_reasons", d.stale_reasons},
              {"commands", commands},
              {"mode", d.shadow ? "shadow" : "enforce"},
              {d.shadow ? "would_send" : "sent", sent},
              {"send_errors", d.send_errors}};
  if (!d.training.empty()) {
    json training = json::array();
    for (const TrainingJobReport& t : d.training) {
      training.push_back({{"job_id", t.job_id},
                          {"target_w", t.target_w ? json(*t.target_w) : json(nullptr)},
                          {"state", TrainingStateName(t.state)},
                          {"detail", t.detail}});
    }
    doc["training"] = training;
  }
  if (d.started) {
    doc["started"] = {{"policy", polca::PolicyName(d.started->policy)},
                      {"in_band", d.started->in_band},
                      {"state", polca::LevelName(d.started->resumed.level)},
                      {"brake", d.started->resumed.brake},
                      {"at_s", d.started->resumed_at_s},
                      {"servers",
                       {{"low_priority", d.started->servers.low_priority},
                        {"high_priority", d.started->servers.high_priority},
                        {"training", d.started->servers.training}}}};
  }
  return doc.dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<std::unique_ptr<DecisionLogFile>> DecisionLogFile::Open(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "a");
  if (file == nullptr) return Error::IOError("--log " + path + ": " + std::strerror(errno));
  return std::unique_ptr<DecisionLogFile>(new DecisionLogFile(file, path));
}

DecisionLogFile::~DecisionLogFile() { std::fclose(file_); }

bool DecisionLogFile::Write(const std::string& line) {
  if (!error_.empty()) return false;
  if (std::fputs(line.c_str(), file_) < 0 || std::fputc('\n', file_) == EOF || std::fflush(file_) != 0) {
    error_ = "cannot write the decision log " + path_ + ": " + std::strerror(errno);
    return false;
  }
  return true;
}

}  // namespace wattcut::row_control
