// A row of four scripted servers for the controller's tests: the test writes each server's
// reading and whether its agent answers, and reads back what was sent and logged.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "wattcut/row_control/row_controller.h"

namespace wattcut::row_control {

// Four servers, two of each priority; budget 4 x 1000 W.
struct ScriptedRow {
  std::vector<double> power_w = {500, 500, 500, 500};
  std::vector<bool> answers = {true, true, true, true};
  std::vector<std::vector<CeilingCommand>> sends;
  std::vector<std::string> log;
  std::vector<Result<std::vector<ObservedCeiling>>> ceilings;

  RowCalls Calls() {
    RowCalls calls;
    calls.read_power_w = [this] {
      std::vector<Result<double>> out;
      for (size_t i = 0; i < power_w.size(); ++i) {
        out.push_back(answers[i] ? Result<double>(power_w[i]) : Result<double>(Error::Unavailable("timed out")));
      }
      return out;
    };
    calls.send = [this](const std::vector<CeilingCommand>& commands) {
      sends.push_back(commands);
      return std::vector<Status>(commands.size(), Status::Ok());
    };
    calls.read_ceilings = [this] { return ceilings; };
    return calls;
  }
  void SetAll(double w) { power_w.assign(4, w); }
};

inline RowControllerOptions ScriptedRowOptions(ScriptedRow& row, bool shadow = false, bool in_band = true) {
  RowControllerOptions options;
  options.config.row.budget_w = 4000;
  options.config.control.telemetry_period_s = 1;
  options.config.control.max_reading_age_s = 10;
  options.shadow = shadow;
  options.in_band = in_band;
  options.log = [&row](const std::string& line) { row.log.push_back(line); };
  return options;
}

inline std::vector<ControlledServer> ScriptedServers() {
  return {{"h0", polca::Priority::kHigh, ""},
          {"h1", polca::Priority::kHigh, ""},
          {"l0", polca::Priority::kLow, ""},
          {"l1", polca::Priority::kLow, ""}};
}

}  // namespace wattcut::row_control
