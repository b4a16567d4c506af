// What `polca calibrate` writes (docs/polca.md, "Calibrate to your servers"):
//   calibrated.conf        the base config with the fitted keys, a comment per fitted key (its
//                          value before, measured or not and why) and the data it came from: a
//                          config `polca simulate|sweep|replay --config` read as they are
//   calibration.json       every parameter, the held-back part's errors, the notes
//   calibration_power.svg  measured against modelled GPU power over the held-back part's first
//                          minutes, at the load's resolution
//   calibration_error.svg  the held-back windows' absolute error, as a distribution per window
//                          kind (idle, prefill, decode)
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "wattcut/polca/power_calibration.h"

namespace wattcut::polca {

// Where a calibration's data came from, for the files' provenance.
struct CalibrationProvenance {
  std::string command;
  std::string server;
  std::string power_source, power_format, power_field;
  std::string load_source, load_format;
  std::string base_config;
  std::vector<std::string> reader_notes;  // what the readers said about the files
};

std::string CalibratedConfigText(const CalibrationResult& result, const CalibrationProvenance& provenance);
nlohmann::json CalibrationJson(const CalibrationResult& result, const CalibrationProvenance& provenance);
std::string CalibrationPowerSvg(const CalibrationResult& result, double minutes = 10);
std::string CalibrationErrorSvg(const CalibrationResult& result);
// The lines `polca calibrate` prints: the parameters and how well the held-back part is predicted.
std::string CalibrationSummaryText(const CalibrationResult& result);

}  // namespace wattcut::polca
