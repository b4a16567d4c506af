#include "wattcut/agent/zeusd_routes.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "wattcut/agent/agent_routes.h"
#include "wattcut/base/unix_time.h"
#include "wattcut/gpu/clock_kind.h"

namespace wattcut::agent {
namespace {

// zeusd writes device maps in numeric order; nlohmann's plain json would sort "10" before "2".
using ojson = nlohmann::ordered_json;

void AnswerJson(httplib::Response& res, int status, const ojson& doc) {
  res.status = status;
  res.set_content(doc.dump(-1, ' ', false, ojson::error_handler_t::replace), "application/json");
}
void AnswerError(httplib::Response& res, int status, const std::string& message) {
  AnswerJson(res, status, ojson{{"error", message}});
}
void AnswerText(httplib::Response& res, int status, const std::string& text) {
  res.status = status;
  res.set_content(text, "text/plain; charset=utf-8");
}
// An unknown path or method: zeusd's router answers 404 with nothing in it.
void AnswerNotFound(httplib::Response& res) {
  res.status = 404;
  res.set_content("", "text/plain");
}

std::optional<ZeusdGroup> GroupOf(const std::string& path) {
  if (path.rfind("/gpu/set_", 0) == 0 || path.rfind("/gpu/reset_", 0) == 0) return ZeusdGroup::kGpuControl;
  if (path.rfind("/gpu/", 0) == 0) return ZeusdGroup::kGpuRead;
  if (path.rfind("/cpu/", 0) == 0) return ZeusdGroup::kCpuRead;
  return std::nullopt;
}

bool Enabled(const ZeusdApiContext& z, ZeusdGroup group) {
  return std::find(z.enabled_groups.begin(), z.enabled_groups.end(), group) != z.enabled_groups.end();
}

// Steps 1 and 2 of zeusd_routes.h; the token's claims when there is a key, or an answer written.
struct Admission {
  bool admitted = false;
  std::optional<ZeusdClaims> claims;
};
Admission Admit(const ZeusdApiContext& z, AgentTransport transport, const httplib::Request& req,
                httplib::Response& res) {
  const std::optional<ZeusdGroup> group = GroupOf(req.path);
  if (group && !Enabled(z, *group)) {
    AnswerError(res, 404, "API group '" + std::string(ZeusdGroupName(*group)) + "' is not enabled on this server.");
    return {};
  }
  if (z.signing_key == nullptr) {
    if (req.path.rfind("/auth/", 0) == 0) {
      AnswerError(res, 404, "Authentication is not enabled on this server.");
      return {};
    }
    const http::ConnectionInfo* connection = http::BoundedHttpServer::CurrentConnection();
    if (transport == AgentTransport::kTcp && (connection == nullptr || !connection->loopback)) {
      AnswerError(res, 403,
                  "this agent has no --zeusd-signing-key: over TCP its zeusd API answers loopback peers only");
      return {};
    }
    if (transport == AgentTransport::kTcp && group == ZeusdGroup::kGpuControl) {
      AnswerError(res, 403,
                  "this agent has no --zeusd-signing-key: over TCP zeusd's setters need a token (or use the "
                  "Unix socket)");
      return {};
    }
    return {true, std::nullopt};
  }
  if (req.path == "/discover" || req.path == "/time") return {true, std::nullopt};
  const std::string authorization = req.get_header_value("Authorization");
  constexpr std::string_view kBearer = "Bearer ";
  auto unauthorized = [&res](const std::string& message) {
    res.set_header("WWW-Authenticate", "Bearer realm=\"zeusd\"");
    AnswerError(res, 401, message);
    return Admission{};
  };
  if (authorization.rfind(kBearer, 0) != 0) {
    return unauthorized("Authentication required. Provide an Authorization: Bearer <token> header.");
  }
  const int64_t now_s = UnixNowMs() / 1000;
  Result<ZeusdClaims> claims =
      VerifyZeusdToken(std::string_view(authorization).substr(kBearer.size()), *z.signing_key, now_s);
  if (!claims.ok()) return unauthorized(claims.error().message);
  if (group && !claims->Has(*group)) {
    std::string held;
    for (ZeusdGroup g : claims->scopes) held += (held.empty() ? "'" : ", '") + std::string(ZeusdGroupName(g)) + "'";
    AnswerError(res, 403,
                "Token for user '" + claims->sub + "' lacks required scope '" + std::string(ZeusdGroupName(*group)) +
                    "'. Token scopes: [" + held + "]");
    return {};
  }
  return {true, *claims};
}

// Step 4: the query's parameters against the endpoint's (`required` a subset of `allowed`).
bool CheckQuery(const httplib::Request& req, httplib::Response& res, const std::vector<std::string>& allowed,
                const std::vector<std::string>& required) {
  auto refuse = [&res](const std::string& detail) {
    AnswerText(res, 400, "Query deserialize error: " + detail);
    return false;
  };
  std::set<std::string> seen;
  for (const auto& [name, value] : req.params) {
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      std::string expected;
      for (const std::string& a : allowed) expected += (expected.empty() ? "`" : ", `") + a + "`";
      return refuse("unknown field `" + name + "`, expected " +
                    (allowed.empty() ? std::string("nothing") : (allowed.size() == 1 ? "" : "one of ") + expected));
    }
    if (!seen.insert(name).second) return refuse("duplicate field `" + name + "`");
  }
  for (const std::string& r : required) {
    if (!seen.count(r)) return refuse("missing field `" + r + "`");
  }
  return true;
}

std::optional<bool> BoolParam(const httplib::Request& req, httplib::Response& res, const std::string& name) {
  const std::string value = req.get_param_value(name);
  if (value == "true") return true;
  if (value == "false") return false;
  AnswerText(res, 400, "Query deserialize error: provided string was not `true` or `false`");
  return std::nullopt;
}

// A device list (zeusd_routes.h step 5): "0,1" (spaces around an index allowed), sorted, without
// repeats; absent: every device in `known`. `lower` is "GPU" or "CPU", for the messages.
std::optional<std::vector<int>> DeviceIds(const httplib::Request& req, httplib::Response& res, const char* param,
                                          const std::string& lower, const std::vector<int>& known, bool write = false) {
  if (!req.has_param(param)) return known;  // a setter's list is required (CheckQuery saw to it)
  const std::string text = req.get_param_value(param);
  auto trim = [](std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
  };
  if (trim(text).empty()) {
    AnswerError(res, 400, std::string(param) + " must contain at least one " + lower + " index");
    return std::nullopt;
  }
  std::set<int> ids;
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find(',', begin);
    if (end == std::string::npos) end = text.size();
    std::string_view piece = trim(std::string_view(text).substr(begin, end - begin));
    if (piece.empty()) {
      AnswerError(res, 400, std::string(param) + " contains an empty " + lower + " index");
      return std::nullopt;
    }
    std::string_view digits = piece.front() == '+' ? piece.substr(1) : piece;
    unsigned long value = 0;
    auto [at, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (digits.empty() || ec != std::errc() || at != digits.data() + digits.size() || value > 1'000'000) {
      AnswerError(res, 400, "Invalid " + lower + " index: " + std::string(piece.substr(0, 40)));
      return std::nullopt;
    }
    ids.insert(static_cast<int>(value));
    begin = end + 1;
  }
  for (int id : ids) {
    if (std::find(known.begin(), known.end(), id) == known.end()) {
      // zeusd's writes say it in text, its reads in JSON.
      if (write) {
        AnswerText(res, 400, lower + " index " + std::to_string(id) + " does not exist.");
      } else {
        AnswerError(res, 400, lower + " " + std::to_string(id) + " not found");
      }
      return std::nullopt;
    }
  }
  return std::vector<int>(ids.begin(), ids.end());
}

// An unsigned 32-bit query parameter, as zeusd's deserializer reads it.
std::optional<int64_t> U32Param(const httplib::Request& req, httplib::Response& res, const std::string& name) {
  const std::string text = req.get_param_value(name);
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  std::string detail;
  if (text.empty()) {
    detail = "cannot parse integer from empty string";
  } else if (ec == std::errc::result_out_of_range || (ec == std::errc() && value > 4294967295LL)) {
    detail = "number too large to fit in target type";
  } else if (ec != std::errc() || end != text.data() + text.size() || value < 0 || text.front() == '-') {
    detail = "invalid digit found in string";
  }
  if (!detail.empty()) {
    AnswerText(res, 400, "Query deserialize error: " + detail);
    return std::nullopt;
  }
  return value;
}

// A setter's failure as zeusd's statuses go: the request's fault 400, a permission 403, another
// holder's lease 409 (zeusd has no leases), the device's or the agent's fault 500.
int ZeusdStatusFor(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kMalformed:
    case ErrorCode::kNotFound:
      return 400;
    case ErrorCode::kPermissionDenied:
      return 403;
    case ErrorCode::kConflict:
      return 409;
    default:
      return 500;
  }
}

// Per-device failures, as zeusd aggregates them: the largest status, every device's message.
struct DeviceErrors {
  int status = 0;
  ojson errors = ojson::object();
  void Add(int id, int s, const std::string& message) {
    status = std::max(status, s);
    errors[std::to_string(id)] = message;
  }
  bool Answered(httplib::Response& res) const {
    if (status == 0) return false;
    AnswerJson(res, status, ojson{{"errors", errors}});
    return true;
  }
};

std::string FieldError(const GpuReading& r, const std::string& field) {
  for (const auto& [f, message] : r.errors) {
    if (f == field) return "NVML error: " + message;
  }
  return "NVML error: the value could not be read";
}

std::vector<int> GpuIds(const NodeAgent& node) {
  std::vector<int> ids;
  for (const GpuDescription& d : node.gpus()) ids.push_back(d.index);
  return ids;
}

std::vector<int> CpuIds(const ZeusdApiContext& z) {
  std::vector<int> ids;
  if (z.cpu != nullptr) {
    for (const cpu::RaplPackage& p : z.cpu->packages()) ids.push_back(p.index);
  }
  return ids;
}

// The meter's readings by package index, or the per-package errors answered.
std::optional<std::map<int, cpu::CpuEnergyReading>> CpuReadings(const ZeusdApiContext& z, const std::vector<int>& ids,
                                                                httplib::Response& res) {
  Result<std::vector<cpu::CpuEnergyReading>> read = z.cpu->Read();
  if (!read.ok()) {
    DeviceErrors errors;
    for (int id : ids) errors.Add(id, 500, "IOError: " + read.error().message);
    errors.Answered(res);
    return std::nullopt;
  }
  std::map<int, cpu::CpuEnergyReading> by_index;
  for (const cpu::CpuEnergyReading& r : *read) by_index[r.index] = r;
  return by_index;
}

// A stream's devices: `param` absent, all of `known`; ids it names that are not known: 400 with
// zeusd's "Unknown GPU indices: [5, 7]. Available: [0, 1]".
std::optional<std::vector<int>> StreamIds(const httplib::Request& req, httplib::Response& res, const char* param,
                                          const std::string& kind, const std::vector<int>& known) {
  if (!req.has_param(param)) return known;
  std::set<int> asked, unknown;
  const std::string text = req.get_param_value(param);
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find(',', begin);
    if (end == std::string::npos) end = text.size();
    std::string piece = text.substr(begin, end - begin);
    piece.erase(0, piece.find_first_not_of(" \t"));
    piece.erase(piece.find_last_not_of(" \t") + 1);
    int id = -1;
    auto [at, ec] = std::from_chars(piece.data(), piece.data() + piece.size(), id);
    if (piece.empty() || ec != std::errc() || at != piece.data() + piece.size() || id < 0) {
      AnswerError(res, 400, "Invalid " + kind + " index: " + piece.substr(0, 40));
      return std::nullopt;
    }
    (std::find(known.begin(), known.end(), id) == known.end() ? unknown : asked).insert(id);
    begin = end + 1;
  }
  if (!unknown.empty()) {
    auto list = [](auto ids) {
      std::string out;
      for (int id : ids) out += (out.empty() ? "" : ", ") + std::to_string(id);
      return "[" + out + "]";
    };
    AnswerError(res, 400, "Unknown " + kind + " indices: " + list(unknown) + ". Available: " + list(known));
    return std::nullopt;
  }
  return std::vector<int>(asked.begin(), asked.end());
}

// Sleeps `period_s` in slices, so that a stopping agent ends a stream within 100 ms; false then.
bool PauseUnlessStopping(const AgentRouteContext& context, double period_s) {
  using std::chrono::steady_clock;
  const steady_clock::time_point until =
      steady_clock::now() + std::chrono::duration_cast<steady_clock::duration>(std::chrono::duration<double>(period_s));
  while (steady_clock::now() < until) {
    if (context.stopping != nullptr && *context.stopping) return false;
    std::this_thread::sleep_for(
        std::min<steady_clock::duration>(until - steady_clock::now(), std::chrono::milliseconds(100)));
  }
  return !(context.stopping != nullptr && *context.stopping);
}

// One server-sent event: exactly "data: <compact JSON>\n\n", as Zeus's PowerStreamingClient splits them.
std::string Event(const ojson& doc) {
  return "data: " + doc.dump(-1, ' ', false, ojson::error_handler_t::replace) + "\n\n";
}

// What a stream writes next: its events, or after kHeartbeatS without one an SSE comment (":",
// which clients skip), so that a stream whose reader left is noticed and its worker freed even
// while the power does not change (zeusd sends nothing then).
class StreamWriter {
 public:
  static constexpr double kHeartbeatS = 10;
  bool Write(httplib::DataSink& sink, const std::string& events) {
    // A client gone (closed or reset) ends the stream now, freeing its slot: before, its slot was
    // held until the next write failed, up to a heartbeat (10 s) later, and new streams got 503.
    if (http::BoundedHttpServer::PeerClosed()) return false;
    const auto now = std::chrono::steady_clock::now();
    std::string out = events;
    if (out.empty() && std::chrono::duration<double>(now - last_).count() >= kHeartbeatS) out = ":\n\n";
    if (out.empty()) return true;
    last_ = now;
    return sink.write(out.data(), out.size());
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

}  // namespace

void AddZeusdRoutes(http::BoundedHttpServer& server, AgentTransport transport, const AgentRouteContext& context,
                    const ZeusdApiContext& zeusd, std::shared_ptr<std::atomic<int>> open_streams) {
  const ZeusdApiContext* z = &zeusd;
  NodeAgent* node = context.node;
  // Over TCP, any request of a zeusd client that holds a lease keeps its connection, and so its
  // lease, alive (a recycled connection whose first request is a read carries the lease on too).
  auto admit = [z, node, transport](const httplib::Request& req, httplib::Response& res) {
    Admission admission = Admit(*z, transport, req, res);
    const http::ConnectionInfo* connection = http::BoundedHttpServer::CurrentConnection();
    if (admission.admitted && admission.claims && transport == AgentTransport::kTcp && connection != nullptr &&
        node->ZeusdClientSeen(LeaseHolder::ZeusdClient(admission.claims->sub, connection->peer_address),
                              connection->id)) {
      http::BoundedHttpServer::KeepOpenWhileIdle();
    }
    return admission;
  };

  server.Get("/discover", [z, node, admit, transport](const httplib::Request& req, httplib::Response& res) {
    if (!admit(req, res).admitted) return;  // zeusd reads no query here: parameters are ignored
    ojson gpus = ojson::array();
    if (Enabled(*z, ZeusdGroup::kGpuRead) || Enabled(*z, ZeusdGroup::kGpuControl)) {
      for (const GpuDescription& d : node->gpus()) {
        // null where the backend does not know it (the simulated GPUs): Zeus's NVIDIA classes do
        // not use it, its AMD class matches GPUs by it.
        gpus.push_back(ojson{{"id", d.index},
                             {"name", d.name},
                             {"pci_address", d.pci_address.empty() ? ojson(nullptr) : ojson(d.pci_address)},
                             {"cumulative_energy_available", d.energy_counter}});
      }
    }
    ojson cpus = ojson::array();
    if (Enabled(*z, ZeusdGroup::kCpuRead) && z->cpu != nullptr) {
      for (const cpu::RaplPackage& p : z->cpu->packages()) {
        cpus.push_back(ojson{{"id", p.index}, {"dram_available", p.dram.has_value()}});
      }
    }
    // Over TCP without a signing key the setters are refused (Admit): not offered either.
    const bool setters = transport == AgentTransport::kUnixSocket || z->signing_key != nullptr;
    ojson groups = ojson::array();
    for (ZeusdGroup g : z->enabled_groups) {
      if (g != ZeusdGroup::kGpuControl || setters) groups.push_back(std::string(ZeusdGroupName(g)));
    }
    AnswerJson(res, 200,
               ojson{{"gpus", gpus},
                     {"cpus", cpus},
                     {"enabled_api_groups", groups},
                     {"auth_required", z->signing_key != nullptr}});
  });

  server.Get("/time", [admit](const httplib::Request& req, httplib::Response& res) {
    if (!admit(req, res).admitted) return;
    AnswerJson(res, 200, ojson{{"timestamp_ms", UnixNowMs()}});
  });

  server.Get("/auth/whoami", [admit](const httplib::Request& req, httplib::Response& res) {
    Admission admission = admit(req, res);
    if (!admission.admitted) return;
    const ZeusdClaims& claims = *admission.claims;  // the path needs a key, so a token was checked
    ojson scopes = ojson::array();
    for (ZeusdGroup g : claims.scopes) scopes.push_back(std::string(ZeusdGroupName(g)));
    ojson doc{{"sub", claims.sub}, {"scopes", scopes}};
    if (claims.exp_unix_s) doc["exp"] = *claims.exp_unix_s;
    AnswerJson(res, 200, doc);
  });

  // The GPU reads: one reading of every GPU, the asked ones answered.
  using GpuField = std::function<std::optional<ojson>(const GpuDescription&, const GpuReading&, DeviceErrors&)>;
  auto gpu_read = [node, admit](GpuField field) {
    return [node, admit, field](const httplib::Request& req, httplib::Response& res) {
      if (!admit(req, res).admitted || !CheckQuery(req, res, {"gpu_ids"}, {})) return;
      std::optional<std::vector<int>> ids = DeviceIds(req, res, "gpu_ids", "GPU", GpuIds(*node));
      if (!ids) return;
      const std::vector<GpuReading> readings = node->Read();
      DeviceErrors errors;
      ojson doc = ojson::object();
      for (int id : *ids) {
        const size_t k = static_cast<size_t>(id);
        std::optional<ojson> value = field(node->gpus()[k], readings[k], errors);
        if (value) doc[std::to_string(id)] = *value;
      }
      if (errors.Answered(res)) return;
      AnswerJson(res, 200, doc);
    };
  };
  server.Get("/gpu/get_cumulative_energy",
             gpu_read([](const GpuDescription& d, const GpuReading& r, DeviceErrors& errors) -> std::optional<ojson> {
               if (r.energy_mj) return ojson{{"energy_mj", *r.energy_mj}};
               if (!d.energy_counter) {
                 errors.Add(d.index, 400, "NVML error: the requested operation is not available on the target device");
               } else {
                 errors.Add(d.index, 500, FieldError(r, "energy_mj"));
               }
               return std::nullopt;
             }));
  server.Get("/gpu/get_power_limit",
             gpu_read([](const GpuDescription& d, const GpuReading& r, DeviceErrors& errors) -> std::optional<ojson> {
               if (r.power_limit_w) return ojson{{"power_limit_mw", std::llround(*r.power_limit_w * 1000)}};
               errors.Add(d.index, 500, FieldError(r, "power_limit_w"));
               return std::nullopt;
             }));
  server.Get(
      "/gpu/get_power_limit_constraints",
      gpu_read([](const GpuDescription& d, const GpuReading&, DeviceErrors& errors) -> std::optional<ojson> {
        if (d.power_limits) {
          return ojson{{"min_power_limit_mw", d.power_limits->min_mw}, {"max_power_limit_mw", d.power_limits->max_mw}};
        }
        errors.Add(d.index, 400, "NVML error: the requested operation is not available on the target device");
        return std::nullopt;
      }));
  server.Get("/gpu/get_persistence_mode",
             gpu_read([node](const GpuDescription& d, const GpuReading&, DeviceErrors& errors) -> std::optional<ojson> {
               Result<bool> mode = node->PersistenceMode(d.index);
               if (mode.ok()) return ojson{{"enabled", *mode}};
               errors.Add(d.index, ZeusdStatusFor(mode.error().code), "NVML error: " + mode.error().message);
               return std::nullopt;
             }));
  server.Get("/gpu/get_power", [node, admit](const httplib::Request& req, httplib::Response& res) {
    if (!admit(req, res).admitted || !CheckQuery(req, res, {"gpu_ids"}, {})) return;
    std::optional<std::vector<int>> ids = DeviceIds(req, res, "gpu_ids", "GPU", GpuIds(*node));
    if (!ids) return;
    const std::vector<GpuReading> readings = node->ReadPower();
    DeviceErrors errors;
    ojson power = ojson::object();
    for (int id : *ids) {
      const GpuReading& r = readings[static_cast<size_t>(id)];
      // zeusd reads NVML's instant field; where the driver lacks it, the power usage.
      if (const std::optional<double> w = r.power_instant_w ? r.power_instant_w : r.power_w) {
        power[std::to_string(id)] = std::llround(*w * 1000);
      } else {
        errors.Add(id, 500, FieldError(r, "power_w"));
      }
    }
    if (errors.Answered(res)) return;
    AnswerJson(res, 200, ojson{{"timestamp_ms", UnixNowMs()}, {"power_mw", power}});
  });

  server.Get("/cpu/get_cumulative_energy", [z, admit](const httplib::Request& req, httplib::Response& res) {
    if (!admit(req, res).admitted || !CheckQuery(req, res, {"cpu_ids", "cpu", "dram"}, {"cpu", "dram"})) return;
    std::optional<bool> want_cpu = BoolParam(req, res, "cpu");
    if (!want_cpu) return;
    std::optional<bool> want_dram = BoolParam(req, res, "dram");
    if (!want_dram) return;
    std::optional<std::vector<int>> ids = DeviceIds(req, res, "cpu_ids", "CPU", CpuIds(*z));
    if (!ids) return;
    ojson doc = ojson::object();
    if (!ids->empty()) {
      auto readings = CpuReadings(*z, *ids, res);
      if (!readings) return;
      for (int id : *ids) {
        const cpu::CpuEnergyReading& r = readings->at(id);
        doc[std::to_string(id)] =
            ojson{{"cpu_energy_uj", *want_cpu ? ojson(r.package_energy_uj) : ojson(nullptr)},
                  {"dram_energy_uj", *want_dram && r.dram_energy_uj ? ojson(*r.dram_energy_uj) : ojson(nullptr)}};
      }
    }
    AnswerJson(res, 200, doc);
  });

  server.Get("/cpu/get_power", [z, admit](const httplib::Request& req, httplib::Response& res) {
    if (!admit(req, res).admitted || !CheckQuery(req, res, {"cpu_ids"}, {})) return;
    std::optional<std::vector<int>> ids = DeviceIds(req, res, "cpu_ids", "CPU", CpuIds(*z));
    if (!ids) return;
    ojson power = ojson::object();
    if (!ids->empty()) {
      auto before = CpuReadings(*z, *ids, res);
      if (!before) return;
      const auto started = std::chrono::steady_clock::now();
      std::this_thread::sleep_for(std::chrono::duration<double>(z->cpu_power_window_s));
      auto after = CpuReadings(*z, *ids, res);
      if (!after) return;
      const double elapsed_us =
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - started).count();
      auto milliwatts = [elapsed_us](int64_t from_uj, int64_t to_uj) {
        return static_cast<int64_t>(static_cast<double>(std::max<int64_t>(0, to_uj - from_uj)) * 1000 / elapsed_us);
      };
      for (int id : *ids) {
        const cpu::CpuEnergyReading& a = before->at(id);
        const cpu::CpuEnergyReading& b = after->at(id);
        ojson dram = nullptr;
        if (a.dram_energy_uj && b.dram_energy_uj) dram = milliwatts(*a.dram_energy_uj, *b.dram_energy_uj);
        power[std::to_string(id)] =
            ojson{{"cpu_mw", milliwatts(a.package_energy_uj, b.package_energy_uj)}, {"dram_mw", dram}};
      }
    }
    AnswerJson(res, 200, ojson{{"timestamp_ms", UnixNowMs()}, {"power_mw", power}});
  });

  // The setters. Each GPU is acted on under the caller's lease, taken implicitly when it holds
  // none (NodeAgent::ImplicitLeaseHolder): what it sets is undone when it exits or, over TCP, when
  // its connection closes, and a row ceiling still caps its clocks (the agent's composition).
  using GpuSetter = std::function<Status(NodeAgent&, const LeaseHolder&, int gpu, const httplib::Request&)>;
  auto gpu_set = [node, admit, transport](std::vector<std::string> extra, GpuSetter set) {
    return [node, admit, transport, extra, set](const httplib::Request& req, httplib::Response& res) {
      const Admission admission = admit(req, res);
      if (!admission.admitted) return;
      std::vector<std::string> params = {"gpu_ids", "block"};
      params.insert(params.end(), extra.begin(), extra.end());
      if (!CheckQuery(req, res, params, params)) return;
      std::optional<bool> block = BoolParam(req, res, "block");
      if (!block) return;
      for (const std::string& name : extra) {
        if (name != "enabled" && !U32Param(req, res, name)) return;
        if (name == "enabled" && !BoolParam(req, res, name)) return;
      }
      std::optional<std::vector<int>> ids = DeviceIds(req, res, "gpu_ids", "GPU", GpuIds(*node), /*write=*/true);
      if (!ids) return;
      const http::ConnectionInfo* connection = http::BoundedHttpServer::CurrentConnection();
      if (connection == nullptr) {
        AnswerError(res, 500, "no connection information");
        return;
      }
      // Over TCP a setter always carries a token (Admit): the lease is its user's at its address,
      // alive while it keeps a connection (which the agent then never closes for being idle).
      const LeaseHolder caller =
          transport == AgentTransport::kUnixSocket
              ? LeaseHolder::Process(connection->pid, connection->uid)
              : LeaseHolder::ZeusdClient(admission.claims ? admission.claims->sub : "", connection->peer_address);
      if (transport == AgentTransport::kTcp) http::BoundedHttpServer::KeepOpenWhileIdle();
      DeviceErrors errors;
      for (int id : *ids) {
        Result<LeaseHolder> holder = node->ImplicitLeaseHolder(caller, id, connection->id);
        Status done = holder.ok() ? set(*node, *holder, id, req) : Status(holder.error());
        if (!done.ok()) errors.Add(id, ZeusdStatusFor(done.error().code), done.error().message);
      }
      // block=false: zeusd answers before the command runs and only logs its failure; here it has
      // run (the agent's setters take milliseconds), and a failure is in the agent's command counters.
      if (*block && errors.Answered(res)) return;
      res.status = 200;
    };
  };
  // A clock parameter U32Param accepted (0 to 2^32 - 1); past any int, which no GPU supports, the
  // agent's own check refuses it as an unsupported clock.
  auto u32 = [](const httplib::Request& req, const char* name) {
    return static_cast<int>(std::min<int64_t>(std::stoll(req.get_param_value(name)), INT32_MAX));
  };
  auto status_of = [](const Result<GpuControl>& r) { return r.ok() ? Status::Ok() : Status(r.error()); };
  server.Post("/gpu/set_power_limit", gpu_set({"power_limit_mw"}, [status_of](NodeAgent& n, const LeaseHolder& h,
                                                                              int gpu, const httplib::Request& req) {
                const double watts = static_cast<double>(std::stoll(req.get_param_value("power_limit_mw"))) / 1000.0;
                return status_of(n.SetPowerLimit(h, gpu, watts));
              }));
  server.Post("/gpu/set_persistence_mode",
              gpu_set({"enabled"}, [](NodeAgent&, const LeaseHolder&, int, const httplib::Request& req) -> Status {
                // The agent holds NVML open for as long as it runs, which keeps the driver loaded as
                // persistence mode does: on is already so; it never turns it off.
                if (req.get_param_value("enabled") == "true") return Status::Ok();
                return Error{
                    "Invalid request: the wattcut agent keeps GPUs initialised; it does not turn persistence "
                    "mode off"};
              }));
  for (ClockKind kind : {ClockKind::kSm, ClockKind::kMemory}) {
    const std::string clocks = kind == ClockKind::kSm ? "gpu_locked_clocks" : "mem_locked_clocks";  // zeusd's names
    server.Post(
        "/gpu/set_" + clocks,
        gpu_set({"min_clock_mhz", "max_clock_mhz"},
                [u32, status_of, kind](NodeAgent& n, const LeaseHolder& h, int gpu, const httplib::Request& req) {
                  return status_of(n.LockClocks(h, gpu, kind, {u32(req, "min_clock_mhz"), u32(req, "max_clock_mhz")}));
                }));
    server.Post("/gpu/reset_" + clocks,
                gpu_set({}, [status_of, kind](NodeAgent& n, const LeaseHolder& h, int gpu, const httplib::Request&) {
                  return status_of(n.UnlockClocks(h, gpu, kind));
                }));
  }
  server.Post("/gpu/reset_locked_clocks",
              gpu_set({}, [status_of](NodeAgent& n, const LeaseHolder& h, int gpu, const httplib::Request&) {
                Status sm = status_of(n.UnlockSmClocks(h, gpu));  // both tried; the first failure answered
                Status memory = status_of(n.UnlockMemoryClocks(h, gpu));
                return sm.ok() ? memory : sm;
              }));

  // The power streams (server-sent events, never ending): each stream polls at zeusd's rate and
  // sends a device's sample when it differs from the one it sent last (the first always), as
  // zeusd's pollers do. A stream holds a worker while it is open: they count against the listener's
  // kMaxReadingStreams with /v1's.
  const AgentRouteContext* ctx = &context;
  auto take_stream_slot = [open_streams](httplib::Response& res) -> std::shared_ptr<void> {
    if (open_streams->fetch_add(1) >= kMaxReadingStreams) {
      --*open_streams;
      AnswerError(res, 503,
                  std::to_string(kMaxReadingStreams) + " streams are open on this listener: close one, or poll");
      return nullptr;
    }
    return std::shared_ptr<void>(reinterpret_cast<void*>(1), [open_streams](void*) { --*open_streams; });
  };
  server.Get("/gpu/stream_power",
             [z, node, ctx, admit, take_stream_slot](const httplib::Request& req, httplib::Response& res) {
               if (!admit(req, res).admitted || !CheckQuery(req, res, {"gpu_ids"}, {})) return;
               std::optional<std::vector<int>> ids = StreamIds(req, res, "gpu_ids", "GPU", GpuIds(*node));
               if (!ids) return;
               std::shared_ptr<void> slot = take_stream_slot(res);
               if (!slot) return;
               res.set_header("Cache-Control", "no-cache");
               auto last = std::make_shared<std::map<int, int64_t>>();
               const double period_s = z->gpu_stream_period_s;
               auto first = std::make_shared<bool>(true);
               auto writer = std::make_shared<StreamWriter>();
               res.set_chunked_content_provider("text/event-stream", [node, ctx, ids = *ids, last, period_s, first,
                                                                      writer, slot](size_t, httplib::DataSink& sink) {
                 if (!*first && !PauseUnlessStopping(*ctx, period_s)) {
                   sink.done();
                   return true;
                 }
                 *first = false;
                 if (ids.empty()) return writer->Write(sink, "");  // zeusd: a stream of no GPU is silent
                 const std::vector<GpuReading> readings = node->ReadPower();
                 std::string events;
                 for (int id : ids) {
                   const GpuReading& r = readings[static_cast<size_t>(id)];
                   const std::optional<double> w = r.power_instant_w ? r.power_instant_w : r.power_w;
                   if (!w) continue;  // a failed reading is skipped, as zeusd's poller does
                   const int64_t mw = std::llround(*w * 1000);
                   auto seen = last->find(id);
                   if (seen != last->end() && seen->second == mw) continue;
                   (*last)[id] = mw;
                   events += Event(ojson{{"timestamp_ms", UnixNowMs()}, {"gpu_id", id}, {"power_mw", mw}});
                 }
                 return writer->Write(sink, events);
               });
             });
  server.Get("/cpu/stream_power", [z, ctx, admit, take_stream_slot](const httplib::Request& req,
                                                                    httplib::Response& res) {
    if (!admit(req, res).admitted || !CheckQuery(req, res, {"cpu_ids"}, {})) return;
    std::optional<std::vector<int>> ids = StreamIds(req, res, "cpu_ids", "CPU", CpuIds(*z));
    if (!ids) return;
    std::shared_ptr<void> slot = take_stream_slot(res);
    if (!slot) return;
    res.set_header("Cache-Control", "no-cache");
    struct Sent {
      int64_t cpu_mw = -1;
      std::optional<int64_t> dram_mw;
    };
    auto baseline = std::make_shared<std::map<int, cpu::CpuEnergyReading>>();
    auto last = std::make_shared<std::map<int, Sent>>();
    auto writer = std::make_shared<StreamWriter>();
    auto first = std::make_shared<bool>(true);
    res.set_chunked_content_provider("text/event-stream", [z, ctx, ids = *ids, baseline, last, writer, first, slot](
                                                              size_t, httplib::DataSink& sink) {
      // Every call but the first waits a period first, so a stream whose reads fail, or that has no
      // package, polls at its rate rather than as fast as it can.
      if (!*first && !PauseUnlessStopping(*ctx, z->cpu_power_window_s)) {
        sink.done();
        return true;
      }
      *first = false;
      if (ids.empty()) return writer->Write(sink, "");
      Result<std::vector<cpu::CpuEnergyReading>> read = z->cpu->Read();
      if (!read.ok()) return writer->Write(sink, "");  // skipped, as zeusd's poller skips a failed read
      std::map<int, cpu::CpuEnergyReading> now;
      for (const cpu::CpuEnergyReading& r : *read) now[r.index] = r;
      std::string events;
      if (!baseline->empty()) {
        const double period_us = z->cpu_power_window_s * 1e6;  // zeusd divides by the nominal period
        auto mw = [period_us](int64_t from, int64_t to) {
          return static_cast<int64_t>(static_cast<double>(std::max<int64_t>(0, to - from)) * 1000 / period_us);
        };
        for (int id : ids) {
          const cpu::CpuEnergyReading& a = baseline->at(id);
          const cpu::CpuEnergyReading& b = now.at(id);
          Sent sample{mw(a.package_energy_uj, b.package_energy_uj), std::nullopt};
          if (a.dram_energy_uj && b.dram_energy_uj) sample.dram_mw = mw(*a.dram_energy_uj, *b.dram_energy_uj);
          auto seen = last->find(id);
          if (seen != last->end() && seen->second.cpu_mw == sample.cpu_mw && seen->second.dram_mw == sample.dram_mw) {
            continue;
          }
          (*last)[id] = sample;
          events += Event(ojson{{"timestamp_ms", UnixNowMs()},
                                {"cpu_id", id},
                                {"cpu_mw", sample.cpu_mw},
                                {"dram_mw", sample.dram_mw ? ojson(*sample.dram_mw) : ojson(nullptr)}});
        }
      }
      *baseline = std::move(now);
      return writer->Write(sink, events);
    });
  });

  // Any other path of zeusd's prefixes, and a known path asked with another method: refused as
  // zeusd refuses (group, token, scope), then 404 with an empty body.
  auto not_found = [admit](const httplib::Request& req, httplib::Response& res) {
    if (!admit(req, res).admitted) return;
    AnswerNotFound(res);
  };
  for (const char* prefix : {R"(/gpu/.*)", R"(/cpu/.*)", R"(/auth/.*)"}) {
    server.Get(prefix, not_found);
    server.Post(prefix, not_found);
  }
}

}  // namespace wattcut::agent
