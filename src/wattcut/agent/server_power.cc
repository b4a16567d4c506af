#include "wattcut/agent/server_power.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "wattcut/agent/agent_tokens.h"
#include "wattcut/base/general_text.h"
#include "wattcut/base/json_object.h"
#include "wattcut/base/printable_text.h"
#include "wattcut/base/steady_time.h"
#include "wattcut/http/http_client.h"

namespace wattcut::agent {

using nlohmann::json;

namespace {

constexpr double kMaxFixedW = 1e6;
constexpr double kMaxGpuFactor = 100;
constexpr double kMinRedfishPeriodS = 0.01;
constexpr double kMaxRedfishPeriodS = 3600;
constexpr int kStalePeriods = 3;

// "2000000", "0.15": the shortest plain decimal that reads back as `value`, as the model is written.
std::string Plain(double value) {
  char buffer[400];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value, std::chars_format::fixed);
  if (ec != std::errc()) return GeneralText(value);
  return std::string(buffer, end);
}

// A tiny scanner over the model's text: the position is a character index, shown 1-based.
class ModelScanner {
 public:
  explicit ModelScanner(std::string_view text) : text_(text) {}

  void SkipBlanks() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
  }
  bool AtEnd() {
    SkipBlanks();
    return pos_ >= text_.size();
  }
  bool Take(char c) {
    SkipBlanks();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool TakeWord(std::string_view word) {
    SkipBlanks();
    if (text_.substr(pos_, word.size()) == word) {
      pos_ += word.size();
      return true;
    }
    return false;
  }
  // A plain decimal: digits with an optional fraction ("1700", "0.15", ".5").
  std::optional<double> Number() {
    SkipBlanks();
    size_t begin = pos_;
    size_t i = pos_;
    size_t digits = 0;
    while (i < text_.size() && text_[i] >= '0' && text_[i] <= '9') ++i, ++digits;
    if (i < text_.size() && text_[i] == '.') {
      ++i;
      while (i < text_.size() && text_[i] >= '0' && text_[i] <= '9') ++i, ++digits;
    }
    if (digits == 0) return std::nullopt;
    double value = 0;
    auto [ptr, ec] = std::from_chars(text_.data() + begin, text_.data() + i, value);
    if (ec != std::errc() || ptr != text_.data() + i) return std::nullopt;
    pos_ = i;
    return value;
  }
  size_t column() const { return pos_ + 1; }

 private:
  std::string_view text_;
  size_t pos_ = 0;
};

// Splits "https://bmc:8443/redfish/v1/Chassis/1/Power" into the client's base URL and the path.
Result<std::pair<std::string, std::string>> SplitUrl(const std::string& url) {
  const std::string expected = "expected http(s)://HOST[:PORT]/PATH, e.g. https://bmc/redfish/v1/Chassis/1/Power";
  size_t scheme_end = std::string::npos;
  if (url.rfind("https://", 0) == 0) scheme_end = 8;
  if (url.rfind("http://", 0) == 0) scheme_end = 7;
  if (scheme_end == std::string::npos) return Error{"Redfish URL '" + PrintableText(url) + "': " + expected};
  for (unsigned char c : url) {
    if (c <= 0x20 || c >= 0x7f)
      return Error{"Redfish URL '" + PrintableText(url) + "' holds a blank or a non-ASCII byte"};
  }
  size_t path_begin = url.find('/', scheme_end);
  std::string base = url.substr(0, path_begin);
  std::string path = path_begin == std::string::npos ? "/" : url.substr(path_begin);
  if (base.size() == scheme_end) return Error{"Redfish URL '" + PrintableText(url) + "' has no host; " + expected};
  return std::make_pair(base, path);
}

}  // namespace

Result<NonGpuPowerModel> NonGpuPowerModel::Parse(std::string_view text) {
  const std::string form =
      "the form is A+B*gpu (watts: A fixed, B times the GPUs' power; either may be left out), "
      "e.g. \"1700+0.15*gpu\"";
  const std::string quoted = "\"" + PrintableText(text, 64) + "\"";
  ModelScanner scan(text);
  if (scan.AtEnd()) return Error{"non-GPU power model " + quoted + " is empty; " + form};
  std::optional<double> fixed_w;
  std::optional<double> gpu_factor;
  for (int term = 0; term < 2; ++term) {
    size_t column = scan.column();
    std::optional<double> number = scan.Number();
    if (!number) {
      return Error{"non-GPU power model " + quoted + ": expected a number at character " + std::to_string(column) +
                   "; " + form};
    }
    if (scan.Take('*')) {
      if (!scan.TakeWord("gpu")) {
        return Error{"non-GPU power model " + quoted + ": expected 'gpu' after '*' at character " +
                     std::to_string(scan.column()) + "; " + form};
      }
      if (gpu_factor) return Error{"non-GPU power model " + quoted + ": two B*gpu terms; " + form};
      if (*number > kMaxGpuFactor) {
        return Error{"non-GPU power model " + quoted + ": the factor " + Plain(*number) + " of gpu is above " +
                     Plain(kMaxGpuFactor) + "; " + form};
      }
      gpu_factor = *number;
    } else {
      if (fixed_w) return Error{"non-GPU power model " + quoted + ": two fixed terms; " + form};
      if (*number > kMaxFixedW) {
        return Error{"non-GPU power model " + quoted + ": " + Plain(*number) + " W is above " + Plain(kMaxFixedW) +
                     " W; " + form};
      }
      fixed_w = *number;
    }
    if (scan.AtEnd()) return NonGpuPowerModel(fixed_w.value_or(0), gpu_factor.value_or(0));
    size_t at = scan.column();
    if (term == 1 || !scan.Take('+')) {
      return Error{"non-GPU power model " + quoted + ": unexpected text at character " + std::to_string(at) + "; " +
                   form};
    }
  }
  return Error{"non-GPU power model " + quoted + ": " + form};
}

std::string NonGpuPowerModel::ToString() const {
  if (gpu_factor_ == 0) return Plain(fixed_w_);
  std::string gpu = Plain(gpu_factor_) + "*gpu";
  return fixed_w_ == 0 ? gpu : Plain(fixed_w_) + "+" + gpu;
}

Result<double> ParseRedfishPower(std::string_view body) {
  Result<json> parsed = ParseJsonWithoutDuplicateKeys(body);
  if (!parsed)
    return Error::Malformed("Redfish Power answer is not JSON: " + PrintableText(parsed.error().message, 200));
  const json document = std::move(*parsed);
  const std::string resource = "not a Redfish Power resource (GET /redfish/v1/Chassis/{id}/Power)";
  if (!document.is_object()) return Error{"Redfish Power answer is not a JSON object; " + resource};
  auto control = document.find("PowerControl");
  if (control == document.end()) return Error{"Redfish Power answer has no member 'PowerControl'; " + resource};
  if (!control->is_array()) return Error{"Redfish Power answer: 'PowerControl' is not an array; " + resource};
  if (control->empty()) return Error{"Redfish Power answer: 'PowerControl' is empty: the BMC reports no power"};
  const json& first = (*control)[0];
  if (!first.is_object()) return Error{"Redfish Power answer: PowerControl[0] is not an object; " + resource};
  auto consumed = first.find("PowerConsumedWatts");
  if (consumed == first.end()) {
    return Error{"Redfish Power answer has no member PowerControl[0].PowerConsumedWatts: the BMC reports no reading"};
  }
  if (consumed->is_null())
    return Error{"Redfish Power answer: PowerControl[0].PowerConsumedWatts is null: the BMC has no reading"};
  if (!consumed->is_number()) {
    return Error{"Redfish Power answer: PowerControl[0].PowerConsumedWatts is a " + std::string(consumed->type_name()) +
                 ", expected a number of watts"};
  }
  double watts = consumed->get<double>();
  if (!std::isfinite(watts) || watts < 0) {
    return Error{"Redfish Power answer: PowerControl[0].PowerConsumedWatts is " + GeneralText(watts) +
                 ", expected a non-negative number of watts"};
  }
  return watts;
}

Result<std::string> ReadRedfishAuthFile(const std::string& path) {
  auto text = ReadSecretFile(path, "Redfish auth file");
  if (!text) return text.error();
  std::string line = *text;
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  const std::string where = PrintableText(path, 256);
  if (line.find('\n') != std::string::npos) {
    return Error{"Redfish auth file " + where + ": expected one 'user:password' line, got several"};
  }
  size_t colon = line.find(':');
  if (colon == std::string::npos || colon == 0) {
    return Error{"Redfish auth file " + where + ": expected one 'user:password' line"};
  }
  for (unsigned char c : line) {
    if (c < 0x20 || c == 0x7f) return Error{"Redfish auth file " + where + " holds a control byte"};
  }
  return line;
}

Result<std::unique_ptr<RedfishPowerReader>> RedfishPowerReader::Start(const RedfishSettings& settings) {
  auto parts = SplitUrl(settings.url);
  if (!parts) return parts.error();
  if (!std::isfinite(settings.period_s) || settings.period_s < kMinRedfishPeriodS ||
      settings.period_s > kMaxRedfishPeriodS) {
    return Error{"Redfish period " + GeneralText(settings.period_s) + " s is out of range; expected " +
                 GeneralText(kMinRedfishPeriodS) + " to " + GeneralText(kMaxRedfishPeriodS) + " s"};
  }
  http::HttpEndpoint endpoint;
  endpoint.base_url = parts->first;
  endpoint.verify_tls = settings.verify_tls;
  endpoint.timeout_s = std::min(settings.period_s, 30.0);
  endpoint.connect_timeout_s = std::min(settings.period_s, 2.0);
  // A Power resource is a few kilobytes.
  endpoint.max_response_bytes = 1 << 20;
  if (!settings.auth_file.empty()) {
    auto auth = ReadRedfishAuthFile(settings.auth_file);
    if (!auth) return auth.error();
    endpoint.basic_auth = *auth;
  }
  auto client = http::HttpClient::Create(std::move(endpoint));
  if (!client) return client.error();
  std::unique_ptr<RedfishPowerReader> reader(
      new RedfishPowerReader(std::move(*client), settings.url, parts->second, settings.period_s));
  reader->thread_ = std::thread([r = reader.get()] { r->Run(); });
  return reader;
}

RedfishPowerReader::RedfishPowerReader(std::unique_ptr<http::HttpClient> client, std::string url, std::string path,
                                       double period_s)
    : client_(std::move(client)), url_(std::move(url)), path_(std::move(path)), period_s_(period_s) {}

RedfishPowerReader::~RedfishPowerReader() {
  {
    MutexLock lock(mu_);
    stop_ = true;
  }
  stop_cv_.NotifyAll();
  if (thread_.joinable()) thread_.join();
}

void RedfishPowerReader::Run() {
  auto period =
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(period_s_));
  auto next = std::chrono::steady_clock::now();
  while (true) {
    PollOnce();
    next += period;
    MutexLock lock(mu_);
    // A poll slower than the period is not made up for: the next one starts a period after now.
    if (next < std::chrono::steady_clock::now()) next = std::chrono::steady_clock::now() + period;
    while (!stop_ && stop_cv_.WaitUntil(mu_, next)) {
    }
    if (stop_) return;
  }
}

void RedfishPowerReader::PollOnce() {
  std::string error;
  std::optional<double> watts;
  auto response = client_->Get(path_);
  if (!response) {
    error = response.error().message;
  } else if (response->status != 200) {
    error = "HTTP " + std::to_string(response->status) + " from " + PrintableText(url_);
    if (response->status == 401 || response->status == 403) error += ": check --redfish-auth-file";
  } else {
    auto parsed = ParseRedfishPower(response->body);
    if (parsed) {
      watts = *parsed;
    } else {
      error = parsed.error().message + " (from " + PrintableText(url_) + ")";
    }
  }
  ++polls_;
  if (!watts) ++failed_polls_;
  std::string previous_error;
  {
    MutexLock lock(mu_);
    previous_error = last_error_;
    last_error_ = error;
    if (watts) {
      last_power_w_ = *watts;
      last_reading_time_s_ = SteadyNowS();
    }
  }
  // Said once per change, not once per poll: a BMC away for an hour is one line, and one when back.
  if (error != previous_error) {
    if (!error.empty()) {
      std::fprintf(stderr, "wattcut agent: Redfish power: %s\n", error.c_str());
    } else {
      std::fprintf(stderr, "wattcut agent: Redfish power: %s answers again\n", PrintableText(url_).c_str());
    }
  }
}

std::optional<RedfishSample> RedfishPowerReader::Last() const {
  MutexLock lock(mu_);
  if (!last_power_w_) return std::nullopt;
  return RedfishSample{*last_power_w_, std::max(0.0, SteadyNowS() - last_reading_time_s_)};
}

std::string RedfishPowerReader::LastError() const {
  MutexLock lock(mu_);
  return last_error_;
}

bool IsStaleRedfishReading(double age_s, double period_s) { return age_s > kStalePeriods * period_s; }

ServerPowerReading CombineServerPower(double gpu_power_w, const NonGpuPowerModel& model,
                                      const std::optional<RedfishSample>& redfish, double redfish_period_s) {
  ServerPowerReading reading;
  reading.gpu_power_w = gpu_power_w;
  if (redfish) reading.redfish_age_s = redfish->age_s;
  if (redfish && !IsStaleRedfishReading(redfish->age_s, redfish_period_s)) {
    reading.source = "redfish";
    reading.power_w = redfish->power_w;
    // The BMC and NVML average over different windows: a GPU reading may run ahead of the BMC's.
    reading.non_gpu_power_w = std::max(0.0, redfish->power_w - gpu_power_w);
    return reading;
  }
  reading.source = "model";
  reading.non_gpu_power_w = model.NonGpuW(gpu_power_w);
  reading.power_w = gpu_power_w + reading.non_gpu_power_w;
  return reading;
}

json ToJson(const ServerPowerReading& reading) {
  return {{"power_w", reading.power_w},
          {"gpu_power_w", reading.gpu_power_w},
          {"non_gpu_power_w", reading.non_gpu_power_w},
          {"source", reading.source},
          {"redfish_age_s", reading.redfish_age_s ? json(*reading.redfish_age_s) : json(nullptr)}};
}

ServerPowerMeter::ServerPowerMeter(NonGpuPowerModel model, std::unique_ptr<RedfishPowerReader> redfish)
    : model_(model), redfish_(std::move(redfish)) {}

ServerPowerReading ServerPowerMeter::Read(double gpu_power_w) {
  if (!redfish_) return CombineServerPower(gpu_power_w, model_, std::nullopt, 1);
  ServerPowerReading reading = CombineServerPower(gpu_power_w, model_, redfish_->Last(), redfish_->period_s());
  if (reading.source != "redfish") ++stale_redfish_readings_;
  return reading;
}

}  // namespace wattcut::agent
