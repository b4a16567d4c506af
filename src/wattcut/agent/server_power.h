// The server's power as the node agent reports it (GET /v1/readings "server", GET /metrics): its
// GPUs' power plus the rest of the server, from one of two sources (docs/agent.md, "Server power"):
//
//   * a model of the non-GPU power, `--non-gpu-power "A+B*gpu"`: A watts fixed (CPUs, memory, fans
//     at idle) plus B times the GPUs' total power (what grows with the GPUs' load: fans, power
//     supply losses);
//   * the BMC's own reading, Redfish `Chassis/{id}/Power` `PowerControl[0].PowerConsumedWatts`,
//     polled every period on a background thread (RedfishPowerReader). A reading older than three
//     periods is stale, and the model stands in until the BMC answers again.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "wattcut/base/mutex.h"
#include "wattcut/base/result.h"

namespace wattcut::http {
class HttpClient;
}

namespace wattcut::agent {

// non_gpu_w = fixed_w + gpu_factor * gpu_power_w.
class NonGpuPowerModel {
 public:
  NonGpuPowerModel() = default;  // 0 W: the server's power is its GPUs' power
  NonGpuPowerModel(double fixed_w, double gpu_factor) : fixed_w_(fixed_w), gpu_factor_(gpu_factor) {}

  // "A", "B*gpu", "A+B*gpu" or "B*gpu+A", blanks allowed between the parts: A in watts (0 to
  // 1,000,000), B a factor (0 to 100), both plain decimals ("1700", "0.15"). The error says what was
  // expected where: `non-GPU power model "1700+0.15*cpu": expected 'gpu' after '*' at character 11; ...`.
  static Result<NonGpuPowerModel> Parse(std::string_view text);

  double NonGpuW(double gpu_power_w) const { return fixed_w_ + gpu_factor_ * gpu_power_w; }
  double fixed_w() const { return fixed_w_; }
  double gpu_factor() const { return gpu_factor_; }
  // "1700+0.15*gpu", the form Parse reads back.
  std::string ToString() const;

 private:
  double fixed_w_ = 0;
  double gpu_factor_ = 0;
};

// PowerControl[0].PowerConsumedWatts of a Redfish Power resource (DMTF schema Power.v1_x: the
// JSON of GET /redfish/v1/Chassis/{id}/Power). Errors name what is missing or wrong
// ("no member 'PowerControl': not a Redfish Power resource (GET .../Chassis/{id}/Power)",
// "PowerControl[0].PowerConsumedWatts is null: the BMC has no reading"); a body that is not
// JSON is kMalformed.
Result<double> ParseRedfishPower(std::string_view body);

// `user:password` from a file of one line (a trailing newline is allowed). Like the token file,
// refused when group or others may access it ("chmod 600 FILE").
Result<std::string> ReadRedfishAuthFile(const std::string& path);

struct RedfishSettings {
  std::string url;        // "https://bmc/redfish/v1/Chassis/1/Power"
  std::string auth_file;  // a `user:password` file for HTTP basic auth; "" for none
  bool verify_tls = true;
  double period_s = 5;  // between polls; also each poll's timeout
};

// The last good Redfish reading and how old it is.
struct RedfishSample {
  double power_w = 0;
  double age_s = 0;
};

// Polls a Redfish Power URL every period on its own thread (the first poll at once), keeping the
// last good reading and the last error. Thread-safe; the destructor stops the thread (within one
// poll's timeout).
class RedfishPowerReader {
 public:
  // Fails, before any thread starts, on a URL that is not http(s)://HOST/PATH, a period outside
  // [0.01, 3600] s, or an auth file that ReadRedfishAuthFile refuses.
  static Result<std::unique_ptr<RedfishPowerReader>> Start(const RedfishSettings& settings);
  ~RedfishPowerReader();
  RedfishPowerReader(const RedfishPowerReader&) = delete;
  RedfishPowerReader& operator=(const RedfishPowerReader&) = delete;

  // nullopt until the first good reading.
  std::optional<RedfishSample> Last() const EXCLUDES(mu_);
  // Why the last poll failed ("HTTP 401 from https://bmc/...: check --redfish-auth-file"); ""
  // when it succeeded (or none finished yet).
  std::string LastError() const EXCLUDES(mu_);
  uint64_t polls() const { return polls_.load(); }
  uint64_t failed_polls() const { return failed_polls_.load(); }
  double period_s() const { return period_s_; }
  const std::string& url() const { return url_; }

 private:
  RedfishPowerReader(std::unique_ptr<http::HttpClient> client, std::string url, std::string path, double period_s);
  void Run() EXCLUDES(mu_);
  void PollOnce() EXCLUDES(mu_);

  std::unique_ptr<http::HttpClient> client_;
  const std::string url_;
  const std::string path_;
  const double period_s_;

  mutable Mutex mu_;
  CondVar stop_cv_;
  bool stop_ GUARDED_BY(mu_) = false;
  std::optional<double> last_power_w_ GUARDED_BY(mu_);
  double last_reading_time_s_ GUARDED_BY(mu_) = 0;  // steady clock
  std::string last_error_ GUARDED_BY(mu_);
  std::atomic<uint64_t> polls_{0};
  std::atomic<uint64_t> failed_polls_{0};
  std::thread thread_;
};

// What the agent reports: power_w = gpu_power_w + non_gpu_power_w.
struct ServerPowerReading {
  double power_w = 0;
  double gpu_power_w = 0;
  double non_gpu_power_w = 0;
  std::string source = "model";         // "model" | "redfish"
  std::optional<double> redfish_age_s;  // the last Redfish reading's age; none without one
};

// A Redfish reading older than three periods is stale.
bool IsStaleRedfishReading(double age_s, double period_s);

// The server's power from the GPUs' total and the sources: the Redfish reading when there is one
// that is not stale (non-GPU power = the reading minus the GPUs', at least 0), the model otherwise.
ServerPowerReading CombineServerPower(double gpu_power_w, const NonGpuPowerModel& model,
                                      const std::optional<RedfishSample>& redfish, double redfish_period_s);

// {"power_w","gpu_power_w","non_gpu_power_w","source","redfish_age_s"} (the age null without one).
nlohmann::json ToJson(const ServerPowerReading& reading);

// The agent's server power: the model, and the Redfish reader when one is configured. Counts the
// readings for which Redfish was configured but the model had to stand in (no reading yet, or a
// stale one). Thread-safe.
class ServerPowerMeter {
 public:
  explicit ServerPowerMeter(NonGpuPowerModel model, std::unique_ptr<RedfishPowerReader> redfish = nullptr);

  ServerPowerReading Read(double gpu_power_w);
  uint64_t stale_redfish_readings() const { return stale_redfish_readings_.load(); }
  const NonGpuPowerModel& model() const { return model_; }
  const RedfishPowerReader* redfish() const { return redfish_.get(); }

 private:
  NonGpuPowerModel model_;
  std::unique_ptr<RedfishPowerReader> redfish_;
  std::atomic<uint64_t> stale_redfish_readings_{0};
};

}  // namespace wattcut::agent
