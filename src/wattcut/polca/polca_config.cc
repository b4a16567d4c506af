#include "wattcut/polca/polca_config.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <system_error>
#include <variant>

#include "wattcut/base/decimal_text.h"
#include "wattcut/base/joined_text.h"
#include "wattcut/base/printable_text.h"
#include "wattcut/polca/row_limits.h"

namespace wattcut::polca {
namespace {

struct Field {
  const char* key;
  std::variant<double*, int*, std::string*> target;
};

// Every settable key, bound to `c`. The order is the order FormatConfig writes.
std::vector<Field> Fields(PolcaConfig& c) {
  return {
      {"gpu.name", &c.gpu.name},
      {"gpu.tdp_w", &c.gpu.tdp_w},
      {"gpu.idle_w", &c.gpu.idle_w},
      {"gpu.max_freq_mhz", &c.gpu.max_freq_mhz},
      {"gpu.min_freq_mhz", &c.gpu.min_freq_mhz},
      {"gpu.prompt_w_small", &c.gpu.prompt_w_small},
      {"gpu.prompt_w_large", &c.gpu.prompt_w_large},
      {"gpu.prompt_tokens_for_peak", &c.gpu.prompt_tokens_for_peak},
      {"gpu.token_w_batch1", &c.gpu.token_w_batch1},
      {"gpu.token_w_full_batch", &c.gpu.token_w_full_batch},
      {"gpu.prompt_power_freq_exponent", &c.gpu.prompt_power_freq_exponent},
      {"gpu.token_power_freq_exponent", &c.gpu.token_power_freq_exponent},
      {"gpu.prompt_compute_fraction", &c.gpu.prompt_compute_fraction},
      {"gpu.token_compute_fraction", &c.gpu.token_compute_fraction},
      {"server.gpus", &c.server.gpus},
      {"server.other_idle_w", &c.server.other_idle_w},
      {"server.other_w_per_gpu_w", &c.server.other_w_per_gpu_w},
      {"server.nameplate_w", &c.server.nameplate_w},
      {"service.model", &c.service.model},
      {"service.prompt_s_base", &c.service.prompt_s_base},
      {"service.prompt_s_per_token", &c.service.prompt_s_per_token},
      {"service.token_iteration_s_base", &c.service.token_iteration_s_base},
      {"service.token_iteration_s_per_request", &c.service.token_iteration_s_per_request},
      {"service.max_batch", &c.service.max_batch},
      {"service.max_prefill_tokens", &c.service.max_prefill_tokens},
      {"row.baseline_servers", &c.row.baseline_servers},
      {"row.provisioned_w_per_server", &c.row.provisioned_w_per_server},
      {"row.budget_w", &c.row.budget_w},
      {"row.low_priority_share", &c.row.low_priority_share},
      {"row.training_share", &c.row.training_share},
      {"workload.peak_requests_per_server_s", &c.workload.peak_requests_per_server_s},
      {"workload.peak_utilization", &c.workload.peak_utilization},
      {"workload.diurnal_trough", &c.workload.diurnal_trough},
      {"workload.peak_hour", &c.workload.peak_hour},
      {"workload.weekend_factor", &c.workload.weekend_factor},
      {"policy.t1", &c.policy.t1},
      {"policy.t1_release", &c.policy.t1_release},
      {"policy.t2", &c.policy.t2},
      {"policy.t2_release", &c.policy.t2_release},
      {"policy.brake", &c.policy.brake},
      {"policy.brake_release", &c.policy.brake_release},
      {"policy.t1_low_mhz", &c.policy.t1_low_mhz},
      {"policy.t2_low_mhz", &c.policy.t2_low_mhz},
      {"policy.t2_high_mhz", &c.policy.t2_high_mhz},
      {"policy.brake_mhz", &c.policy.brake_mhz},
      {"policy.cap_t1_w", &c.policy.cap_t1_w},
      {"policy.cap_t2_w", &c.policy.cap_t2_w},
      {"policy.t1_training_w", &c.policy.t1_training_w},
      {"policy.t2_training_w", &c.policy.t2_training_w},
      {"policy.headroom_guard", &c.policy.headroom_guard},
      {"policy.headroom_release", &c.policy.headroom_release},
      {"policy.headroom_window_s", &c.policy.headroom_window_s},
      {"policy.headroom_correction_deadband", &c.policy.headroom_correction_deadband},
      {"policy.headroom_mid_low_mhz", &c.policy.headroom_mid_low_mhz},
      {"policy.headroom_mid_high_mhz", &c.policy.headroom_mid_high_mhz},
      {"control.telemetry_period_s", &c.control.telemetry_period_s},
      {"control.telemetry_delay_s", &c.control.telemetry_delay_s},
      {"control.actuation_latency_s", &c.control.actuation_latency_s},
      {"control.brake_latency_s", &c.control.brake_latency_s},
      {"control.max_reading_age_s", &c.control.max_reading_age_s},
      {"control.power_cap_response_s", &c.control.power_cap_response_s},
      {"control.training_response_s", &c.control.training_response_s},
      {"training.profile", &c.training.profile},
      {"training.stages", &c.training.stages},
      {"training.microbatches", &c.training.microbatches},
      {"training.p2p_power_w", &c.training.p2p_power_w},
      {"training.schedule", &c.training.schedule},
      {"training.unit_time_s", &c.training.unit_time_s},
      {"training.timeline_step_s", &c.training.timeline_step_s},
      {"training.plan_without_target", &c.training.plan_without_target},
      {"training.iteration_phase", &c.training.iteration_phase},
      {"training.apply_margin_s", &c.training.apply_margin_s},
  };
}

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

PolcaConfig A100() {
  PolcaConfig c;  // the member defaults are the DGX-A100 / BLOOM-176B calibration
  c.source = "built-in a100";
  c.gpu.name = "A100-SXM4-80GB";
  return c;
}

PolcaConfig H100() {
  PolcaConfig c;
  c.source = "built-in h100";
  c.gpu.name = "H100-SXM5-80GB";
  c.gpu.tdp_w = 700;
  c.gpu.idle_w = 100;
  c.gpu.max_freq_mhz = 1980;
  c.gpu.min_freq_mhz = 345;
  c.gpu.prompt_w_small = 480;
  c.gpu.prompt_w_large = 720;
  c.gpu.prompt_tokens_for_peak = 8192;
  c.gpu.token_w_batch1 = 220;
  c.gpu.token_w_full_batch = 380;
  c.gpu.prompt_power_freq_exponent = 1.3;
  c.gpu.token_power_freq_exponent = 1.0;
  c.gpu.prompt_compute_fraction = 0.9;
  c.gpu.token_compute_fraction = 0.2;
  c.server.other_idle_w = 2000;
  c.server.other_w_per_gpu_w = 0.15;
  c.server.nameplate_w = 10200;
  c.service.prompt_s_base = 0.015;
  c.service.prompt_s_per_token = 1.1e-4;
  c.service.token_iteration_s_base = 0.028;
  c.service.token_iteration_s_per_request = 3e-4;
  c.service.max_batch = 64;
  c.row.provisioned_w_per_server = 8600;
  c.workload.peak_requests_per_server_s = 2.0;
  c.policy.t1_low_mhz = 1785;
  c.policy.t2_low_mhz = 1530;
  c.policy.t2_high_mhz = 1830;
  // The headroom policy's middle level at the A100's decode slowdowns (+3.7 % / +0.8 %).
  c.policy.headroom_mid_low_mhz = 1725;
  c.policy.headroom_mid_high_mhz = 1920;
  c.policy.brake_mhz = 345;
  c.policy.cap_t1_w = 600;
  c.policy.cap_t2_w = 500;
  c.policy.t1_training_w = 600;
  c.policy.t2_training_w = 500;
  return c;
}

// An MI300X-class server (8 x AMD Instinct MI300X), from what is public and, where nothing is, the
// H100 preset scaled (docs/polca.md, "MI300X defaults", says which is which):
// * public (AMD's MI300X data sheet): 750 W peak board power, 2100 MHz peak engine clock;
// * read on the GPU through ROCm SMI: the lowest SCLK level, 500 MHz as on the MI200s;
// * assumed: idle 140 W; the phases' power the H100's in proportion to the board power
//   (x 750/700); the non-GPU part and the 84 % of nameplate provisioned, the H100 server's; the
//   service times the H100's (AMD's and NVIDIA's MLPerf Inference Llama 2 70B results for eight GPUs
//   are within a few percent of each other); the locks at the H100's fractions of the top clock,
//   on the backend's 15 MHz grid from 2100.
PolcaConfig Mi300x() {
  PolcaConfig c = H100();
  const double board = 750.0 / 700.0;
  c.source = "built-in mi300x";
  c.gpu.name = "MI300X-OAM-192GB";
  c.gpu.tdp_w = 750;
  c.gpu.idle_w = 140;
  c.gpu.max_freq_mhz = 2100;
  c.gpu.min_freq_mhz = 500;
  c.gpu.prompt_w_small = 480 * board;
  c.gpu.prompt_w_large = 720 * board;
  c.gpu.token_w_batch1 = 220 * board;
  c.gpu.token_w_full_batch = 380 * board;
  c.server.nameplate_w = 10200 + 8 * (750 - 700);
  c.row.provisioned_w_per_server = 8600.0 / 10200.0 * c.server.nameplate_w;
  c.policy.t1_low_mhz = 1890;
  c.policy.t2_low_mhz = 1620;
  c.policy.t2_high_mhz = 1935;
  c.policy.headroom_mid_low_mhz = 1830;
  c.policy.headroom_mid_high_mhz = 2040;
  c.policy.brake_mhz = 500;
  c.policy.cap_t1_w = 600 * board;
  c.policy.cap_t2_w = 500 * board;
  c.policy.t1_training_w = 600 * board;
  c.policy.t2_training_w = 500 * board;
  return c;
}

std::string Number(double v) {
  std::ostringstream s;
  s.precision(10);
  s << v;
  return s.str();
}

}  // namespace

std::vector<std::string> BuiltInConfigNames() { return {"a100", "h100", "mi300x"}; }

Result<PolcaConfig> BuiltInConfig(const std::string& name) {
  if (name == "a100") return A100();
  if (name == "h100") return H100();
  if (name == "mi300x") return Mi300x();
  return Error{"unknown built-in config '" + PrintableText(name) + "' (expected " + Joined(BuiltInConfigNames(), ", ") +
               ")"};
}

Result<PolcaConfig> ParseConfig(const std::string& text, const std::string& source_name) {
  PolcaConfig config = A100();
  std::vector<Field> fields = Fields(config);
  // A UTF-8 byte order mark (as some editors write) is not part of the first key.
  std::istringstream in(text.starts_with("\xEF\xBB\xBF") ? text.substr(3) : text);
  std::string raw;
  int line = 0;
  bool seen_setting = false;
  std::map<std::string, int> line_of_key;  // a key set twice is a mistake, whichever value was meant
  while (std::getline(in, raw)) {
    ++line;
    std::string content = Trim(raw.substr(0, raw.find('#')));
    if (content.empty()) continue;
    std::string where = source_name + ":" + std::to_string(line) + ": ";
    size_t eq = content.find('=');
    if (eq == std::string::npos) return Error{where + "expected 'key = value', got '" + PrintableText(content) + "'"};
    std::string key = Trim(content.substr(0, eq));
    std::string value = Trim(content.substr(eq + 1));
    where += "key '" + PrintableText(key) + "': ";
    if (value.empty()) return Error{where + "missing value"};
    if (auto [first, inserted] = line_of_key.emplace(key, line); !inserted) {
      return Error{where + "set twice, on line " + std::to_string(first->second) + " and on line " +
                   std::to_string(line)};
    }
    if (key == "base") {
      if (seen_setting) return Error{where + "must come before every other setting"};
      Result<PolcaConfig> base = BuiltInConfig(value);
      if (!base.ok()) return Error{where + base.error().message};
      config = *base;
      fields = Fields(config);
      seen_setting = true;
      continue;
    }
    seen_setting = true;
    const Field* field = nullptr;
    for (const Field& f : fields) {
      if (key == f.key) field = &f;
    }
    if (field == nullptr) return Error{where + "unknown key"};
    if (auto* s = std::get_if<std::string*>(&field->target)) {
      **s = value;
      continue;
    }
    errno = 0;
    char* end = nullptr;
    double number = std::strtod(value.c_str(), &end);
    if (!IsDecimalText(value) || end != value.c_str() + value.size() || errno == ERANGE || !std::isfinite(number)) {
      return Error{where + "expected a decimal number (such as 0.8 or 6.5e3), got '" + PrintableText(value) + "'"};
    }
    if (auto* d = std::get_if<double*>(&field->target)) {
      **d = number;
    } else {
      if (number != std::floor(number) || std::fabs(number) > 1e9) {
        return Error{where + "expected an integer, got '" + PrintableText(value) + "'"};
      }
      *std::get<int*>(field->target) = static_cast<int>(number);
    }
  }
  config.source = source_name;
  Status valid = Validate(config);
  if (!valid.ok()) return Error{source_name + ": " + valid.error().message};
  return config;
}

Result<PolcaConfig> ReadConfigFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return Error{path + ": is a directory, expected a config file"};
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path + ": cannot open config file for reading"};
  // Read one byte past the limit, so that a larger file (or an endless pipe) is refused
  // without being read whole.
  std::string text(kMaxConfigFileBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) return Error{path + ": cannot read the config file"};
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxConfigFileBytes) {
    return Error{path + ": larger than " + std::to_string(kMaxConfigFileBytes) + " bytes; not a config file"};
  }
  Result<PolcaConfig> config = ParseConfig(text, path);
  if (!config.ok()) return config;
  // A relative profile path is relative to the config file's folder, wherever wattcut runs.
  std::filesystem::path profile(config->training.profile);
  if (!profile.empty() && profile.is_relative()) {
    config->training.profile = (std::filesystem::path(path).parent_path() / profile).lexically_normal().string();
  }
  return config;
}

Status Validate(const PolcaConfig& c) {
  auto positive = [](double v) { return std::isfinite(v) && v > 0; };
  auto fraction = [](double v) { return v >= 0 && v <= 1; };
  const GpuSpec& g = c.gpu;
  const PolicySpec& p = c.policy;
  if (!positive(g.tdp_w) || !positive(g.idle_w) || g.idle_w >= g.tdp_w) {
    return Error{"gpu.idle_w and gpu.tdp_w must be positive with idle_w < tdp_w"};
  }
  if (!positive(g.min_freq_mhz) || g.max_freq_mhz <= g.min_freq_mhz) {
    return Error{"gpu.min_freq_mhz must be positive and below gpu.max_freq_mhz"};
  }
  if (g.prompt_w_small < g.idle_w || g.prompt_w_large < g.prompt_w_small) {
    return Error{"expected gpu.idle_w <= gpu.prompt_w_small <= gpu.prompt_w_large"};
  }
  if (g.token_w_batch1 < g.idle_w || g.token_w_full_batch < g.token_w_batch1) {
    return Error{"expected gpu.idle_w <= gpu.token_w_batch1 <= gpu.token_w_full_batch"};
  }
  if (!positive(g.prompt_tokens_for_peak)) return Error{"gpu.prompt_tokens_for_peak must be positive"};
  if (g.prompt_power_freq_exponent < 0 || g.token_power_freq_exponent < 0) {
    return Error{"gpu.*_power_freq_exponent must be >= 0"};
  }
  if (!fraction(g.prompt_compute_fraction) || !fraction(g.token_compute_fraction)) {
    return Error{"gpu.*_compute_fraction must be in [0, 1]"};
  }
  if (c.server.gpus < 1) return Error{"server.gpus must be at least 1"};
  if (c.server.other_idle_w < 0 || c.server.other_w_per_gpu_w < 0) {
    return Error{"server.other_idle_w and server.other_w_per_gpu_w must be >= 0"};
  }
  if (c.service.prompt_s_base < 0 || c.service.prompt_s_per_token < 0 || !positive(c.service.token_iteration_s_base) ||
      c.service.token_iteration_s_per_request < 0) {
    return Error{"service times must be >= 0 (token_iteration_s_base > 0)"};
  }
  if (c.service.max_batch < 1 || c.service.max_batch > kMaxBatch) {
    return Error{"service.max_batch must be between 1 and " + std::to_string(kMaxBatch) + ", got " +
                 std::to_string(c.service.max_batch)};
  }
  if (c.service.max_prefill_tokens < 1 || c.service.max_prefill_tokens > kMaxPrefillTokens) {
    return Error{"service.max_prefill_tokens must be between 1 and " + std::to_string(kMaxPrefillTokens) + ", got " +
                 std::to_string(c.service.max_prefill_tokens)};
  }
  if (Status s = CheckRowSize(c.row.baseline_servers, "row.baseline_servers"); !s.ok()) return s;
  if (!(c.row.provisioned_w_per_server >= 1 && c.row.provisioned_w_per_server <= kMaxServerPowerW)) {
    return Error{"row.provisioned_w_per_server must be between 1 W and " + Number(kMaxServerPowerW) +
                 " W (no server draws a megawatt)"};
  }
  if (!(c.row.budget_w == 0 || (c.row.budget_w >= 1 && c.row.budget_w <= kMaxRowBudgetW))) {
    return Error{"row.budget_w must be 0 (baseline_servers x provisioned_w_per_server) or between 1 W and " +
                 Number(kMaxRowBudgetW) + " W, got " + Number(c.row.budget_w)};
  }
  if (!fraction(c.row.low_priority_share)) return Error{"row.low_priority_share must be in [0, 1]"};
  if (!positive(c.workload.peak_requests_per_server_s) ||
      c.workload.peak_requests_per_server_s > kMaxRequestsPerServerS) {
    return Error{"workload.peak_requests_per_server_s must be positive and at most " + Number(kMaxRequestsPerServerS) +
                 ", got " + Number(c.workload.peak_requests_per_server_s)};
  }
  if (!(c.workload.peak_utilization >= 0 && c.workload.peak_utilization <= 1)) {
    return Error{
        "workload.peak_utilization must be 0 (not set: peak_requests_per_server_s states the load) or in "
        "(0, 1] (above 1 a server's queue grows without bound), got " +
        Number(c.workload.peak_utilization)};
  }
  if (!fraction(c.workload.diurnal_trough)) return Error{"workload.diurnal_trough must be in [0, 1]"};
  if (c.workload.peak_hour < 0 || c.workload.peak_hour > 24) return Error{"workload.peak_hour must be in [0, 24]"};
  if (c.workload.weekend_factor < 0) return Error{"workload.weekend_factor must be >= 0"};
  if (!(p.t1 > 0 && p.t1 < p.t2 && p.t2 < p.brake)) {
    return Error{"thresholds must satisfy 0 < policy.t1 < policy.t2 < policy.brake, got t1=" + Number(p.t1) +
                 " t2=" + Number(p.t2) + " brake=" + Number(p.brake)};
  }
  if (!(p.t1_release > 0 && p.t1_release <= p.t1)) return Error{"policy.t1_release must be in (0, policy.t1]"};
  if (!(p.t2_release > p.t1_release && p.t2_release <= p.t2)) {
    return Error{"policy.t2_release must be in (policy.t1_release, policy.t2]"};
  }
  if (!(p.brake_release > 0 && p.brake_release <= p.brake)) {
    return Error{"policy.brake_release must be in (0, policy.brake]"};
  }
  for (auto [name, f] : {std::pair{"policy.t1_low_mhz", p.t1_low_mhz},
                         {"policy.t2_low_mhz", p.t2_low_mhz},
                         {"policy.t2_high_mhz", p.t2_high_mhz},
                         {"policy.brake_mhz", p.brake_mhz},
                         {"policy.headroom_mid_low_mhz", p.headroom_mid_low_mhz},
                         {"policy.headroom_mid_high_mhz", p.headroom_mid_high_mhz}}) {
    if (f < g.min_freq_mhz || f > g.max_freq_mhz) {
      return Error{std::string(name) + " = " + Number(f) + " is outside the GPU's clock range [" +
                   Number(g.min_freq_mhz) + ", " + Number(g.max_freq_mhz) + "] MHz"};
    }
  }
  if (p.t2_low_mhz > p.t1_low_mhz) return Error{"policy.t2_low_mhz must not exceed policy.t1_low_mhz"};
  if (p.t2_high_mhz < p.t2_low_mhz) {
    return Error{"policy.t2_high_mhz must be >= policy.t2_low_mhz (high priority is never slowed more than low)"};
  }
  // The headroom policy's ladder (t1_low, then the middle level, then t2_low / t2_high) never
  // loosens a class on the way up, and its middle level never slows high priority more than low.
  if (!(p.headroom_mid_low_mhz >= p.t2_low_mhz && p.headroom_mid_low_mhz <= p.t1_low_mhz)) {
    return Error{"policy.headroom_mid_low_mhz must be in [policy.t2_low_mhz, policy.t1_low_mhz] = [" +
                 Number(p.t2_low_mhz) + ", " + Number(p.t1_low_mhz) + "] MHz (the headroom policy's ladder never " +
                 "loosens low priority on the way up), got " + Number(p.headroom_mid_low_mhz)};
  }
  if (!(p.headroom_mid_high_mhz >= p.t2_high_mhz && p.headroom_mid_high_mhz >= p.headroom_mid_low_mhz)) {
    return Error{"policy.headroom_mid_high_mhz must be >= policy.t2_high_mhz (" + Number(p.t2_high_mhz) +
                 ") and >= policy.headroom_mid_low_mhz (" + Number(p.headroom_mid_low_mhz) +
                 "): high priority is never slowed more than low, nor loosened on the way up; got " +
                 Number(p.headroom_mid_high_mhz)};
  }
  if (!(p.headroom_guard > 0 && p.headroom_guard <= p.brake)) {
    return Error{"policy.headroom_guard must be in (0, policy.brake], got " + Number(p.headroom_guard)};
  }
  if (!(p.headroom_release > 0 && p.headroom_release < p.headroom_guard)) {
    return Error{"policy.headroom_release must be in (0, policy.headroom_guard), got " + Number(p.headroom_release)};
  }
  if (!(p.headroom_correction_deadband >= 0 && p.headroom_correction_deadband <= 1)) {
    return Error{
        "policy.headroom_correction_deadband must be in [0, 1] (a fraction of the budget; 1 turns the "
        "forecast's correction off), got " +
        Number(p.headroom_correction_deadband)};
  }
  if (!(p.cap_t2_w > g.idle_w && p.cap_t2_w <= p.cap_t1_w)) {
    return Error{"expected gpu.idle_w < policy.cap_t2_w <= policy.cap_t1_w"};
  }
  if (!(p.t2_training_w > 0 && p.t2_training_w <= p.t1_training_w)) {
    return Error{"expected 0 < policy.t2_training_w <= policy.t1_training_w (W per GPU), got t1_training_w=" +
                 Number(p.t1_training_w) + " t2_training_w=" + Number(p.t2_training_w)};
  }
  if (!(c.row.training_share >= 0 && c.row.training_share < 1)) {
    return Error{"row.training_share must be in [0, 1) (at least some servers serve), got " +
                 Number(c.row.training_share)};
  }
  const TrainingSpec& t = c.training;
  if (t.stages < 1) return Error{"training.stages must be at least 1, got " + std::to_string(t.stages)};
  // Only for a row that trains: an inference row keeps any server.gpus.
  if (c.row.training_share > 0 && (t.stages > c.server.gpus || c.server.gpus % t.stages != 0)) {
    return Error{
        "training.stages must divide server.gpus (one pipeline per server, server.gpus / stages GPUs per "
        "stage), got stages=" +
        std::to_string(t.stages) + " gpus=" + std::to_string(c.server.gpus)};
  }
  if (t.microbatches < 1 || t.microbatches > kMaxTrainingMicrobatches) {
    return Error{"training.microbatches must be between 1 and " + std::to_string(kMaxTrainingMicrobatches) + ", got " +
                 std::to_string(t.microbatches)};
  }
  if (!(t.p2p_power_w >= 0 && std::isfinite(t.p2p_power_w))) return Error{"training.p2p_power_w must be >= 0"};
  if (!positive(t.unit_time_s) || t.unit_time_s > 1) {
    return Error{"training.unit_time_s must be in (0, 1] s, got " + Number(t.unit_time_s)};
  }
  if (!(t.timeline_step_s >= kMinTrainingTimelineStepS && t.timeline_step_s <= kMaxTrainingTimelineStepS)) {
    return Error{"training.timeline_step_s must be between " + Number(kMinTrainingTimelineStepS) + " s and " +
                 Number(kMaxTrainingTimelineStepS) + " s, got " + Number(t.timeline_step_s)};
  }
  if (t.plan_without_target != "fastest" && t.plan_without_target != "all-max") {
    return Error{"training.plan_without_target must be fastest or all-max, got '" +
                 PrintableText(t.plan_without_target) + "'"};
  }
  if (t.iteration_phase != "random" && t.iteration_phase != "aligned") {
    return Error{"training.iteration_phase must be random or aligned, got '" + PrintableText(t.iteration_phase) + "'"};
  }
  if (!(t.apply_margin_s >= 0 && t.apply_margin_s <= 3600)) {
    return Error{"training.apply_margin_s must be between 0 s and 3600 s, got " + Number(t.apply_margin_s)};
  }
  const ControlSpec& k = c.control;
  if (!(k.telemetry_period_s >= kMinTelemetryPeriodS && k.telemetry_period_s <= kMaxTelemetryPeriodS)) {
    return Error{"control.telemetry_period_s must be between " + Number(kMinTelemetryPeriodS) + " s and " +
                 Number(kMaxTelemetryPeriodS) + " s, got " + Number(k.telemetry_period_s)};
  }
  // A latency beyond kMaxControlLatencyS is no control loop at all: a sweep would say a policy
  // "holds" a row whose readings never reach it.
  for (const auto& [name, value] : {std::pair{"control.telemetry_delay_s", k.telemetry_delay_s},
                                    std::pair{"control.actuation_latency_s", k.actuation_latency_s},
                                    std::pair{"control.brake_latency_s", k.brake_latency_s},
                                    std::pair{"control.power_cap_response_s", k.power_cap_response_s},
                                    std::pair{"control.training_response_s", k.training_response_s}}) {
    if (!(value >= 0 && value <= kMaxControlLatencyS)) {
      return Error{std::string(name) + " must be between 0 s and " + Number(kMaxControlLatencyS) + " s, got " +
                   Number(value)};
    }
  }
  if (!positive(k.max_reading_age_s)) return Error{"control.max_reading_age_s must be positive"};
  // After the telemetry period, which bounds the window's readings.
  if (!(p.headroom_window_s >= c.control.telemetry_period_s && p.headroom_window_s <= kMaxHeadroomWindowS)) {
    return Error{"policy.headroom_window_s must be in [control.telemetry_period_s, " + Number(kMaxHeadroomWindowS) +
                 "] s, got " + Number(p.headroom_window_s)};
  }
  if (p.headroom_window_s / c.control.telemetry_period_s > kMaxHeadroomWindowReadings) {
    return Error{"policy.headroom_window_s / control.telemetry_period_s must be at most " +
                 std::to_string(kMaxHeadroomWindowReadings) + " readings, got " +
                 Number(p.headroom_window_s / c.control.telemetry_period_s)};
  }
  return Status::Ok();
}

std::string FormatConfig(const PolcaConfig& config) {
  PolcaConfig copy = config;
  std::string out = "# wattcut POLCA config (" + config.source + ")\n";
  std::string section;
  for (const Field& f : Fields(copy)) {
    std::string key = f.key;
    std::string s = key.substr(0, key.find('.'));
    if (s != section) {
      out += "\n";
      section = s;
    }
    if (auto* str = std::get_if<std::string*>(&f.target); str != nullptr && (**str).empty()) {
      // An empty value does not read back ("missing value"): the key is shown, commented out.
      out += "# " + key + " =\n";
      continue;
    }
    out += key + " = ";
    if (auto* str = std::get_if<std::string*>(&f.target))
      out += **str;
    else if (auto* d = std::get_if<double*>(&f.target))
      out += Number(**d);
    else
      out += std::to_string(*std::get<int*>(f.target));
    out += "\n";
  }
  return out;
}

}  // namespace wattcut::polca
