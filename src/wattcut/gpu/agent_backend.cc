#include "wattcut/gpu/agent_backend.h"

#include <sys/stat.h>

#include <cstdlib>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>

#include "wattcut/base/general_text.h"
#include "wattcut/base/json_object.h"
#include "wattcut/base/printable_text.h"
#include "wattcut/http/http_status.h"
#include "wattcut/http/token_file.h"

namespace wattcut {

namespace {

using nlohmann::json;

constexpr int kAgentApiVersion = 1;

bool StartsWith(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

// An agent's refusal: {"error": message, "code": name} (docs/agent.md), or what can be said of
// an answer that is not one.
Error RefusalError(const std::string& agent, const std::string& what, const http::HttpResponse& answer) {
  Error error = http::ErrorOfAnswer(answer.status, answer.body);
  // A refusal in the agent's own words stands alone; anything else says who answered it.
  json body = ParseJsonOrDiscarded(answer.body);
  if (body.is_object() && body.contains("error")) return error;
  return error.WithContext(agent + ": " + what + " answered ");
}

// Malformed answers of an agent (a different program on the socket, or a version mismatch).
Error Malformed(const std::string& agent, const std::string& what, const std::string& problem) {
  return Error::Malformed("the agent at " + agent + " answered " + what + " with " + problem);
}

Result<int> IntField(const json& object, const char* field, const std::string& where) {
  auto it = object.find(field);
  if (it == object.end() || !it->is_number_integer()) return Error::Malformed(where + "." + field + ": not an integer");
  const int64_t value = it->get<int64_t>();
  if (value < 0 || value > 1000000) return Error::Malformed(where + "." + field + ": out of range");
  return static_cast<int>(value);
}

Result<std::vector<int>> ClockList(const json& object, const char* field, const std::string& where) {
  auto it = object.find(field);
  if (it == object.end() || !it->is_array()) return Error::Malformed(where + "." + field + ": not an array");
  std::vector<int> clocks;
  for (const json& value : *it) {
    if (!value.is_number_integer() || value.get<int64_t>() <= 0 || value.get<int64_t>() > 1000000) {
      return Error::Malformed(where + "." + field + ": not a list of MHz");
    }
    clocks.push_back(value.get<int>());
  }
  std::sort(clocks.begin(), clocks.end(), std::greater<>());
  return clocks;
}

int64_t Milliwatts(double watts) { return static_cast<int64_t>(std::llround(watts * 1000.0)); }

std::string Watts(int64_t milliwatts) { return json(static_cast<double>(milliwatts) / 1000.0).dump(); }

std::string ClockBody(int min_mhz, int max_mhz) { return json{{"min_mhz", min_mhz}, {"max_mhz", max_mhz}}.dump(); }

std::string GpuPath(int gpu, const char* what) { return "/v1/gpus/" + std::to_string(gpu) + "/" + what; }

std::string GpuList(const std::vector<int>& gpus) {
  std::string text;
  for (int gpu : gpus) text += (text.empty() ? "" : ", ") + std::to_string(gpu);
  return text;
}

}  // namespace

std::string AgentFromEnvironment() {
  const char* from_environment = std::getenv(kAgentSocketVariable);
  if (from_environment != nullptr && *from_environment != '\0') return from_environment;
  struct stat file {};
  if (::stat(kDefaultAgentSocket, &file) == 0 && S_ISSOCK(file.st_mode)) return kDefaultAgentSocket;
  return "";
}

Result<http::HttpEndpoint> AgentEndpoint(const std::string& agent, const std::string& token_file) {
  http::HttpEndpoint endpoint;
  if (agent.empty()) return Error{"no agent named: give a socket path or an http:// URL"};
  if (StartsWith(agent, "http://") || StartsWith(agent, "https://")) {
    endpoint.base_url = agent;
  } else if (StartsWith(agent, "unix:")) {
    endpoint.unix_socket = agent.substr(5);
  } else if (agent.find("://") != std::string::npos) {
    return Error{"agent '" + PrintableText(agent) + "': expected a socket path or an http:// or https:// URL"};
  } else {
    endpoint.unix_socket = agent;
  }
  if (endpoint.base_url.empty() && endpoint.unix_socket.empty()) return Error{"agent 'unix:': no socket path"};
  if (token_file.empty()) {
    const char* credential = std::getenv(kAgentCredentialVariable);
    if (!endpoint.unix_socket.empty() && credential != nullptr && *credential != '\0') {
      endpoint.bearer_token = credential;
    }
    return endpoint;
  }
  auto token = http::ReadTokenFile(token_file, http::TokenPlace::kFirstLineWithToken, "the agent token file");
  if (!token.ok()) return token.error();
  endpoint.bearer_token = std::move(*token);
  return endpoint;
}

AgentBackend::AgentBackend(AgentBackendOptions options, std::unique_ptr<http::HttpClient> client)
    : options_(std::move(options)), client_(std::move(client)) {}

Result<std::unique_ptr<AgentBackend>> AgentBackend::Open(AgentBackendOptions options) {
  if (options.lease_ttl_s < 1 || options.lease_ttl_s > 3600) {
    return Error{"agent lease ttl " + std::to_string(options.lease_ttl_s) + " s: expected 1 to 3600 s"};
  }
  auto client = http::HttpClient::Create(options.endpoint);
  if (!client.ok()) return client.error();
  std::unique_ptr<http::HttpClient> renew_client;
  if (!options.endpoint.unix_socket.empty()) {
    auto second = http::HttpClient::Create(options.endpoint);
    if (!second.ok()) return second.error();
    renew_client = std::move(*second);
  }
  std::unique_ptr<AgentBackend> backend(new AgentBackend(std::move(options), std::move(*client)));
  backend->renew_client_ = std::move(renew_client);
  if (Status s = backend->Discover(); !s.ok()) return s.error();
  return backend;
}

AgentBackend::~AgentBackend() {
  StopRenewing();
  (void)ReleaseLeases();
}

void AgentBackend::Log(const std::string& line) const {
  if (options_.log) {
    options_.log(line);
  } else {
    std::cerr << "wattcut: " << line << "\n";
  }
}

Result<std::string> AgentBackend::Call(const std::string& method, const std::string& path, const std::string& body,
                                       int* status) {
  return CallOn(*client_, method, path, body, status);
}

Result<std::string> AgentBackend::CallOn(http::HttpClient& client, const std::string& method, const std::string& path,
                                         const std::string& body, int* status) {
  if (status != nullptr) *status = 0;
  auto answer = client.Request(method, path, body);
  if (!answer.ok()) return answer.error();
  if (status != nullptr) *status = answer->status;
  if (answer->status >= 200 && answer->status < 300) return std::move(answer->body);
  return RefusalError(client.description(), method + " " + path, *answer);
}

Status AgentBackend::Discover() {
  const std::string agent = client_->description();
  auto about_text = Call("GET", "/v1/agent", "");
  if (!about_text.ok()) return about_text.error();
  json about = ParseJsonOrDiscarded(*about_text);
  if (!about.is_object() || !about.contains("api_version") || !about["api_version"].is_number_integer()) {
    return Malformed(agent, "GET /v1/agent", "no api_version (is it a wattcut agent?)");
  }
  if (about["api_version"].get<int64_t>() != kAgentApiVersion) {
    return Error::InvalidArgument("the agent at " + agent + " speaks API version " + about["api_version"].dump() +
                                  "; this wattcut speaks version " + std::to_string(kAgentApiVersion));
  }
  if (about.contains("backend") && about["backend"].is_string()) agent_backend_name_ = about["backend"];

  auto gpus_text = Call("GET", "/v1/gpus", "");
  if (!gpus_text.ok()) return gpus_text.error();
  json listed = ParseJsonOrDiscarded(*gpus_text);
  if (!listed.is_object() || !listed.contains("gpus") || !listed["gpus"].is_array()) {
    return Malformed(agent, "GET /v1/gpus", "no \"gpus\" array");
  }
  for (size_t i = 0; i < listed["gpus"].size(); ++i) {
    const json& g = listed["gpus"][i];
    const std::string where = "gpus[" + std::to_string(i) + "]";
    if (!g.is_object()) return Malformed(agent, "GET /v1/gpus", where + ": not an object");
    GpuEntry entry;
    auto index = IntField(g, "index", where);
    if (!index.ok()) return Malformed(agent, "GET /v1/gpus", index.error().message);
    if (*index != static_cast<int>(i)) {
      return Malformed(
          agent, "GET /v1/gpus",
          where + ".index: " + std::to_string(*index) + ", expected " + std::to_string(i) + " (GPUs in index order)");
    }
    entry.info.index = *index;
    if (g.contains("name") && g["name"].is_string()) entry.info.name = g["name"];
    if (g.contains("uuid") && g["uuid"].is_string()) entry.info.uuid = g["uuid"];
    auto sm = ClockList(g, "sm_clocks_mhz", where);
    if (!sm.ok()) return Malformed(agent, "GET /v1/gpus", sm.error().message);
    auto memory = ClockList(g, "memory_clocks_mhz", where);
    if (!memory.ok()) return Malformed(agent, "GET /v1/gpus", memory.error().message);
    entry.sm_clocks_mhz = std::move(*sm);
    entry.memory_clocks_mhz = std::move(*memory);
    if (g.contains("power_limit_w") && g["power_limit_w"].is_object()) {
      const json& limits = g["power_limit_w"];
      for (const char* field : {"min", "max", "default"}) {
        if (!limits.contains(field) || !limits[field].is_number()) {
          return Malformed(agent, "GET /v1/gpus", where + ".power_limit_w." + field + ": not a number");
        }
      }
      entry.power_limits =
          PowerLimitsMw{Milliwatts(limits["default"].get<double>()), Milliwatts(limits["min"].get<double>()),
                        Milliwatts(limits["max"].get<double>())};
    }
    entry.energy_counter = g.contains("energy_counter") && g["energy_counter"].is_boolean() && g["energy_counter"];
    gpus_.push_back(std::move(entry));
  }
  return Status::Ok();
}

Status AgentBackend::CheckGpu(int gpu) const { return CheckGpuIndex(gpu, static_cast<int>(gpus_.size())); }

Result<GpuInfo> AgentBackend::Info(int gpu) {
  if (Status s = CheckGpu(gpu); !s.ok()) return s.error();
  return gpus_[static_cast<size_t>(gpu)].info;
}

Result<std::vector<int>> AgentBackend::SupportedMemoryClocksMhz(int gpu) {
  if (Status s = CheckGpu(gpu); !s.ok()) return s.error();
  return gpus_[static_cast<size_t>(gpu)].memory_clocks_mhz;
}

Result<std::vector<int>> AgentBackend::SupportedGraphicsClocksMhz(int gpu, int memory_clock_mhz) {
  if (Status s = CheckGpu(gpu); !s.ok()) return s.error();
  const GpuEntry& entry = gpus_[static_cast<size_t>(gpu)];
  if (entry.memory_clocks_mhz.empty() || memory_clock_mhz != entry.memory_clocks_mhz.front()) {
    return Error{"GPU " + std::to_string(gpu) + ": the agent lists SM clocks at the highest memory clock" +
                 (entry.memory_clocks_mhz.empty() ? std::string()
                                                  : " (" + std::to_string(entry.memory_clocks_mhz.front()) + " MHz)") +
                 " only, not at " + std::to_string(memory_clock_mhz) + " MHz"};
  }
  return entry.sm_clocks_mhz;
}

Result<PowerLimitsMw> AgentBackend::PowerLimits(int gpu) {
  if (Status s = CheckGpu(gpu); !s.ok()) return s.error();
  const GpuEntry& entry = gpus_[static_cast<size_t>(gpu)];
  if (!entry.power_limits) {
    return Error::DeviceError("GPU " + std::to_string(gpu) + ": the agent cannot read its power-limit range");
  }
  return *entry.power_limits;
}

// One field of one GPU's reading (GET /v1/readings): its value, or the agent's error for it.
Result<double> AgentBackend::ReadField(int gpu, const char* field) {
  if (Status s = CheckGpu(gpu); !s.ok()) return s.error();
  const std::string agent = client_->description();
  auto text = Call("GET", "/v1/readings", "");
  if (!text.ok()) return text.error();
  json readings = ParseJsonOrDiscarded(*text);
  if (!readings.is_object() || !readings.contains("gpus") || !readings["gpus"].is_array()) {
    return Malformed(agent, "GET /v1/readings", "no \"gpus\" array");
  }
  for (const json& reading : readings["gpus"]) {
    if (!reading.is_object() || !reading.contains("index") || reading["index"] != gpu) continue;
    auto value = reading.find(field);
    if (value != reading.end() && value->is_number()) return value->get<double>();
    if (value != reading.end() && !value->is_null()) {
      return Malformed(agent, "GET /v1/readings",
                       std::string("a GPU ") + std::to_string(gpu) + " " + field + " that is not a number");
    }
    std::string why = "no value";
    if (reading.contains("errors") && reading["errors"].is_object() && reading["errors"].contains(field) &&
        reading["errors"][field].is_string()) {
      why = reading["errors"][field].get<std::string>();
    }
    return Error::DeviceError("GPU " + std::to_string(gpu) + ": the agent could not read " + field + ": " + why);
  }
  return Malformed(agent, "GET /v1/readings", "no reading of GPU " + std::to_string(gpu));
}

Result<int64_t> AgentBackend::PowerLimitMw(int gpu) {
  auto watts = ReadField(gpu, "power_limit_w");
  if (!watts.ok()) return watts.error();
  return Milliwatts(*watts);
}

Result<int64_t> AgentBackend::PowerUsageMw(int gpu) {
  auto watts = ReadField(gpu, "power_w");
  if (!watts.ok()) return watts.error();
  return Milliwatts(*watts);
}

Result<int64_t> AgentBackend::TotalEnergyMj(int gpu) {
  auto energy = ReadField(gpu, "energy_mj");
  if (!energy.ok()) return energy.error();
  return static_cast<int64_t>(std::llround(*energy));
}

Result<int> AgentBackend::SmClockMhz(int gpu) {
  auto clock = ReadField(gpu, "sm_clock_mhz");
  if (!clock.ok()) return clock.error();
  return static_cast<int>(std::lround(*clock));
}

// Leases and setters.

std::optional<size_t> AgentBackend::LeaseIndexOf(int gpu) const {
  for (size_t i = 0; i < leases_.size(); ++i) {
    if (std::find(leases_[i].gpus.begin(), leases_[i].gpus.end(), gpu) != leases_[i].gpus.end()) return i;
  }
  return std::nullopt;
}

Result<AgentBackend::HeldLease> AgentBackend::TakeLease(const std::vector<int>& gpus) {
  const json request{{"gpus", gpus}, {"ttl_s", options_.lease_ttl_s}};
  auto text = Call("POST", "/v1/leases", request.dump());
  if (!text.ok()) return text.error();
  json lease = ParseJsonOrDiscarded(*text);
  HeldLease held;
  held.gpus = gpus;
  if (lease.is_object() && lease.contains("id") && lease["id"].is_number_unsigned()) {
    held.id = std::to_string(lease["id"].get<uint64_t>());
  } else if (lease.is_object() && lease.contains("id") && lease["id"].is_string()) {
    held.id = lease["id"].get<std::string>();
  }
  if (held.id.empty() || held.id.find_first_not_of("0123456789") != std::string::npos) {
    return Malformed(client_->description(), "POST /v1/leases", "a lease without a numeric \"id\"");
  }
  if (!renewer_.joinable()) renewer_ = std::thread([this] { RenewLoop(); });
  return held;
}

Status AgentBackend::EnsureLeased(int gpu) {
  if (LeaseIndexOf(gpu)) return Status::Ok();
  auto taken = TakeLease({gpu});
  if (!taken.ok()) return taken.error();
  leases_.push_back(std::move(*taken));
  return Status::Ok();
}

Status AgentBackend::LeaseGpus(const std::vector<int>& gpus) {
  std::vector<int> wanted;
  for (int gpu : gpus) {
    if (Status s = CheckGpu(gpu); !s.ok()) return s;
    if (std::find(wanted.begin(), wanted.end(), gpu) == wanted.end()) wanted.push_back(gpu);
  }
  std::lock_guard lock(mu_);
  wanted.erase(std::remove_if(wanted.begin(), wanted.end(), [this](int gpu) { return LeaseIndexOf(gpu).has_value(); }),
               wanted.end());
  if (wanted.empty()) return Status::Ok();
  auto taken = TakeLease(wanted);
  if (!taken.ok()) return taken.error();
  leases_.push_back(std::move(*taken));
  return Status::Ok();
}

Status AgentBackend::ReleaseLeases() {
  std::lock_guard lock(mu_);
  Status first = Status::Ok();
  for (const HeldLease& lease : leases_) {
    int status = 0;
    auto released = Call("DELETE", "/v1/leases/" + lease.id, "", &status);
    if (!released.ok() && status != 404 && first.ok()) first = released.error();  // 404: ended already
    for (int gpu : lease.gpus) settings_.erase(gpu);
  }
  leases_.clear();
  return first;
}

std::vector<int> AgentBackend::leased_gpus() const {
  std::lock_guard lock(mu_);
  std::vector<int> gpus;
  for (const HeldLease& lease : leases_) gpus.insert(gpus.end(), lease.gpus.begin(), lease.gpus.end());
  std::sort(gpus.begin(), gpus.end());
  return gpus;
}

uint64_t AgentBackend::leases_retaken() const {
  std::lock_guard lock(mu_);
  return leases_retaken_;
}

Status AgentBackend::Apply(int gpu, const std::string& method, const std::string& what, const std::string& body) {
  auto answer = Call(method, GpuPath(gpu, what.c_str()), body);
  return answer.ok() ? Status::Ok() : Status(answer.error());
}

Status AgentBackend::RetakeLease(const HeldLease& lost, const std::string& why) {
  const std::string gpus = GpuList(lost.gpus);
  auto taken = TakeLease(lost.gpus);
  if (!taken.ok()) {
    Log("agent " + client_->description() + ": lease " + lost.id + " of GPU(s) " + gpus + " " + why +
        "; cannot lease them again: " + taken.error().message);
    return taken.error();
  }
  leases_.push_back(*taken);
  ++leases_retaken_;
  std::string problems;
  for (int gpu : lost.gpus) {
    GpuSettings settings = settings_[gpu];
    Status s = Status::Ok();
    // The memory clock first: which SM clocks a GPU supports depends on it.
    for (ClockKind kind : {ClockKind::kMemory, ClockKind::kSm}) {
      const std::optional<std::pair<int, int>>& clocks = settings.clocks_mhz(kind);
      if (s.ok() && clocks) {
        s = Apply(gpu, "PUT", std::string(ClockKindResource(kind)), ClockBody(clocks->first, clocks->second));
      }
    }
    if (s.ok() && settings.power_limit_mw) {
      s = Apply(gpu, "PUT", "power-limit", "{\"watts\":" + Watts(*settings.power_limit_mw) + "}");
    }
    if (!s.ok()) problems += "; GPU " + std::to_string(gpu) + " could not be set again: " + s.error().message;
  }
  Log("agent " + client_->description() + ": lease " + lost.id + " of GPU(s) " + gpus + " " + why +
      ": leased them again (lease " + taken->id + ")" + (problems.empty() ? " and set them again" : problems));
  return Status::Ok();
}

Status AgentBackend::Set(int gpu, const std::string& method, const std::string& what, const std::string& body) {
  if (Status s = CheckGpu(gpu); !s.ok()) return s;
  if (Status s = EnsureLeased(gpu); !s.ok()) return s;
  int status = 0;
  auto answer = Call(method, GpuPath(gpu, what.c_str()), body, &status);
  if (answer.ok()) return Status::Ok();
  const std::optional<size_t> index = LeaseIndexOf(gpu);
  if (status != 403 || !index) return answer.error();
  // The agent does not know this backend holds the GPU: it restarted (or the lease ran out).
  const HeldLease lost = leases_[*index];
  leases_.erase(leases_.begin() + static_cast<std::ptrdiff_t>(*index));
  if (Status s = RetakeLease(lost, "was refused (" + answer.error().message + ")"); !s.ok()) return s;
  return Apply(gpu, method, what, body);
}

Status AgentBackend::LockClocks(ClockKind kind, int gpu, int min_mhz, int max_mhz) {
  std::lock_guard lock(mu_);
  Status s = Set(gpu, "PUT", std::string(ClockKindResource(kind)), ClockBody(min_mhz, max_mhz));
  if (s.ok()) settings_[gpu].clocks_mhz(kind) = std::make_pair(min_mhz, max_mhz);
  return s;
}

Status AgentBackend::ResetClocks(ClockKind kind, int gpu) {
  std::lock_guard lock(mu_);
  Status s = Set(gpu, "DELETE", std::string(ClockKindResource(kind)), "");
  if (s.ok()) settings_[gpu].clocks_mhz(kind).reset();
  return s;
}

Status AgentBackend::LockGpuClocks(int gpu, int min_mhz, int max_mhz) {
  return LockClocks(ClockKind::kSm, gpu, min_mhz, max_mhz);
}

Status AgentBackend::ResetGpuClocks(int gpu) { return ResetClocks(ClockKind::kSm, gpu); }

Status AgentBackend::LockMemoryClocks(int gpu, int min_mhz, int max_mhz) {
  return LockClocks(ClockKind::kMemory, gpu, min_mhz, max_mhz);
}

Status AgentBackend::ResetMemoryClocks(int gpu) { return ResetClocks(ClockKind::kMemory, gpu); }

Status AgentBackend::SetPowerLimitMw(int gpu, int64_t limit_mw) {
  if (Status s = CheckGpu(gpu); !s.ok()) return s;
  const std::optional<PowerLimitsMw>& limits = gpus_[static_cast<size_t>(gpu)].power_limits;
  std::lock_guard lock(mu_);
  // The default is set by lifting the holder's limit, so that the agent knows nothing is left to undo.
  if (limits && limit_mw == limits->default_mw) {
    Status s = Set(gpu, "DELETE", "power-limit", "");
    if (s.ok()) settings_[gpu].power_limit_mw.reset();
    return s;
  }
  Status s = Set(gpu, "PUT", "power-limit", "{\"watts\":" + Watts(limit_mw) + "}");
  if (s.ok()) settings_[gpu].power_limit_mw = limit_mw;
  return s;
}

// Renewal.

void AgentBackend::RenewLoop() {
  const auto period = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(options_.lease_ttl_s / 3.0));
  std::unique_lock lock(mu_);
  bool failing = false;  // the last round could not reach the agent (said once)
  while (!stopping_) {
    renew_cv_.wait_for(lock, period, [this] { return stopping_; });
    if (stopping_) break;
    // The round trips hold no lock: a setter meanwhile goes ahead (on its own connection, on the
    // socket). What they found is dealt with under the lock, against the leases as they are then.
    const std::vector<HeldLease> held = leases_;
    std::vector<std::pair<int, Result<std::string>>> answers;
    lock.unlock();
    http::HttpClient& client = renew_client_ ? *renew_client_ : *client_;
    for (const HeldLease& lease : held) {
      int status = 0;
      auto renewed = CallOn(client, "POST", "/v1/leases/" + lease.id + "/renew", "", &status);
      answers.emplace_back(status, std::move(renewed));
    }
    lock.lock();
    for (size_t k = 0; k < held.size(); ++k) {
      const HeldLease& lease = held[k];
      const int status = answers[k].first;
      const Result<std::string>& renewed = answers[k].second;
      if (renewed.ok()) {
        if (failing) Log("agent " + client_->description() + ": reachable again; leases renewed");
        failing = false;
        continue;
      }
      if (status == 404 || status == 403) {  // forgotten (an agent restart; 403: its id is someone else's now)
        auto it = std::find_if(leases_.begin(), leases_.end(), [&](const HeldLease& l) { return l.id == lease.id; });
        if (it == leases_.end()) continue;
        leases_.erase(it);
        (void)RetakeLease(lease, "was unknown to the agent on renewal (restarted?)");
      } else if (!failing) {
        failing = true;
        Log("agent " + client_->description() + ": cannot renew lease " + lease.id + " (retrying every " +
            GeneralText(options_.lease_ttl_s / 3.0, 3) + " s): " + renewed.error().message);
      }
    }
  }
}

void AgentBackend::StopRenewing() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  renew_cv_.notify_all();
  if (renewer_.joinable()) renewer_.join();
}

}  // namespace wattcut
