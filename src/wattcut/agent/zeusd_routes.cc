#include "wattcut/agent/zeusd_routes.h"

#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <thread>

#include <nlohmann/json.hpp>

#include "wattcut/agent/agent_answer.h"
#include "wattcut/agent/agent_routes.h"
#include "wattcut/agent/zeusd_admission.h"
#include "wattcut/agent/zeusd_query.h"
#include "wattcut/agent/zeusd_streams.h"
#include "wattcut/base/unix_time.h"
#include "wattcut/gpu/clock_kind.h"

namespace wattcut::agent {
namespace {

// zeusd writes device maps in numeric order; nlohmann's plain json would sort "10" before "2".
using ojson = nlohmann::ordered_json;

// One request to a zeusd route, admitted (zeusd_admission.h).
struct ZeusdRequest {
  const AgentRouteContext& context;
  const ZeusdApiContext& zeusd;
  AgentTransport transport;
  const Admission& admission;
  const OpenStreams& open_streams;
  const httplib::Request& req;
  httplib::Response& res;
  NodeAgent& node() const { return *context.node; }
};

enum class ZeusdMethod { kGet, kPost };
struct ZeusdRoute {
  ZeusdMethod method;
  std::string path;
  std::function<void(const ZeusdRequest&)> handler;
};

// zeusd's word for its GPU library's errors: "NVML error: ..." on NVIDIA, "AMDSMI error: ..." on AMD
// (zeusd's AMD backend is AMD SMI; wattcut's, ROCm SMI, speaks for it in its terms).
std::string LibraryError(const NodeAgent& node, const std::string& message) {
  return (node.amd_gpus() ? "AMDSMI error: " : "NVML error: ") + message;
}

std::string FieldError(const NodeAgent& node, const GpuReading& r, const std::string& field) {
  for (const auto& [f, message] : r.errors) {
    if (f == field) return LibraryError(node, message);
  }
  return LibraryError(node, "the value could not be read");
}

// zeusd's refusal on AMD GPUs, which have no persistence mode.
constexpr const char* kNoPersistenceOnAmd = "Invalid request: persistence mode is not supported on AMD GPUs";

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

// --- Discovery, time, the token's identity.

void GetDiscover(const ZeusdRequest& r) {  // zeusd reads no query here: parameters are ignored
  const ZeusdApiContext& z = r.zeusd;
  ojson gpus = ojson::array();
  if (Enabled(z, ZeusdGroup::kGpuRead) || Enabled(z, ZeusdGroup::kGpuControl)) {
    for (const GpuDescription& d : r.node().gpus()) {
      // null where the backend does not know it (the simulated GPUs): Zeus's NVIDIA classes do
      // not use it, its AMD class matches GPUs by it.
      gpus.push_back(ojson{{"id", d.index},
                           {"name", d.name},
                           {"pci_address", d.pci_address.empty() ? ojson(nullptr) : ojson(d.pci_address)},
                           {"cumulative_energy_available", d.energy_counter}});
    }
  }
  ojson cpus = ojson::array();
  if (Enabled(z, ZeusdGroup::kCpuRead) && z.cpu != nullptr) {
    for (const cpu::RaplPackage& p : z.cpu->packages()) {
      cpus.push_back(ojson{{"id", p.index}, {"dram_available", p.dram.has_value()}});
    }
  }
  // Over TCP without a signing key the setters are refused (Admit): not offered either.
  const bool setters = r.transport == AgentTransport::kUnixSocket || z.signing_key != nullptr;
  ojson groups = ojson::array();
  for (ZeusdGroup g : z.enabled_groups) {
    if (g != ZeusdGroup::kGpuControl || setters) groups.push_back(std::string(ZeusdGroupName(g)));
  }
  AnswerZeusd(
      r.res, 200,
      ojson{
          {"gpus", gpus}, {"cpus", cpus}, {"enabled_api_groups", groups}, {"auth_required", z.signing_key != nullptr}});
}

void GetTime(const ZeusdRequest& r) { AnswerZeusd(r.res, 200, ojson{{"timestamp_ms", UnixNowMs()}}); }

void GetWhoami(const ZeusdRequest& r) {
  const ZeusdClaims& claims = *r.admission.claims;  // the path needs a key, so a token was checked
  ojson scopes = ojson::array();
  for (ZeusdGroup g : claims.scopes) scopes.push_back(std::string(ZeusdGroupName(g)));
  ojson doc{{"sub", claims.sub}, {"scopes", scopes}};
  if (claims.exp_unix_s) doc["exp"] = *claims.exp_unix_s;
  AnswerZeusd(r.res, 200, doc);
}

// --- The GPU reads: one reading of every GPU, the asked ones answered.

// A read's GPUs (its only parameter, gpu_ids), or the refusal answered.
std::optional<std::vector<int>> AskedGpus(const ZeusdRequest& r) {
  if (!CheckQuery(r.req, r.res, {"gpu_ids"}, {})) return std::nullopt;
  return DeviceIds(r.req, r.res, "gpu_ids", "GPU", GpuIds(r.node()));
}

using GpuField = std::optional<ojson> (*)(NodeAgent&, const GpuDescription&, const GpuReading&, DeviceErrors&);

void AnswerGpuField(const ZeusdRequest& r, GpuField field) {
  std::optional<std::vector<int>> ids = AskedGpus(r);
  if (!ids) return;
  const std::vector<GpuReading> readings = r.node().Read();
  DeviceErrors errors;
  ojson doc = ojson::object();
  for (int id : *ids) {
    const size_t k = static_cast<size_t>(id);
    std::optional<ojson> value = field(r.node(), r.node().gpus()[k], readings[k], errors);
    if (value) doc[std::to_string(id)] = *value;
  }
  if (errors.Answered(r.res)) return;
  AnswerZeusd(r.res, 200, doc);
}

std::optional<ojson> CumulativeEnergy(NodeAgent& node, const GpuDescription& d, const GpuReading& r,
                                      DeviceErrors& errors) {
  if (r.energy_mj) return ojson{{"energy_mj", *r.energy_mj}};
  if (!d.energy_counter) {
    errors.Add(d.index, 400, LibraryError(node, "the requested operation is not available on the target device"));
  } else {
    errors.Add(d.index, 500, FieldError(node, r, "energy_mj"));
  }
  return std::nullopt;
}

std::optional<ojson> PowerLimit(NodeAgent& node, const GpuDescription& d, const GpuReading& r, DeviceErrors& errors) {
  if (r.power_limit_w) return ojson{{"power_limit_mw", std::llround(*r.power_limit_w * 1000)}};
  errors.Add(d.index, 500, FieldError(node, r, "power_limit_w"));
  return std::nullopt;
}

std::optional<ojson> PowerLimitConstraints(NodeAgent& node, const GpuDescription& d, const GpuReading&,
                                           DeviceErrors& errors) {
  if (d.power_limits) {
    return ojson{{"min_power_limit_mw", d.power_limits->min_mw}, {"max_power_limit_mw", d.power_limits->max_mw}};
  }
  errors.Add(d.index, 400, LibraryError(node, "the requested operation is not available on the target device"));
  return std::nullopt;
}

std::optional<ojson> PersistenceMode(NodeAgent& node, const GpuDescription& d, const GpuReading&,
                                     DeviceErrors& errors) {
  if (node.amd_gpus()) {
    errors.Add(d.index, 400, kNoPersistenceOnAmd);
    return std::nullopt;
  }
  Result<bool> mode = node.PersistenceMode(d.index);
  if (mode.ok()) return ojson{{"enabled", *mode}};
  errors.Add(d.index, ZeusdStatusFor(mode.error().code), LibraryError(node, mode.error().message));
  return std::nullopt;
}

void GetGpuPower(const ZeusdRequest& r) {
  std::optional<std::vector<int>> ids = AskedGpus(r);
  if (!ids) return;
  const std::vector<GpuReading> readings = r.node().ReadPower();
  DeviceErrors errors;
  ojson power = ojson::object();
  for (int id : *ids) {
    const GpuReading& reading = readings[static_cast<size_t>(id)];
    // zeusd reads NVML's instant field; where the driver lacks it, the power usage.
    if (const std::optional<double> w = reading.power_instant_w ? reading.power_instant_w : reading.power_w) {
      power[std::to_string(id)] = std::llround(*w * 1000);
    } else {
      errors.Add(id, 500, FieldError(r.node(), reading, "power_w"));
    }
  }
  if (errors.Answered(r.res)) return;
  AnswerZeusd(r.res, 200, ojson{{"timestamp_ms", UnixNowMs()}, {"power_mw", power}});
}

// --- The CPU reads.

void GetCpuEnergy(const ZeusdRequest& r) {
  if (!CheckQuery(r.req, r.res, {"cpu_ids", "cpu", "dram"}, {"cpu", "dram"})) return;
  std::optional<bool> want_cpu = BoolParam(r.req, r.res, "cpu");
  if (!want_cpu) return;
  std::optional<bool> want_dram = BoolParam(r.req, r.res, "dram");
  if (!want_dram) return;
  std::optional<std::vector<int>> ids = DeviceIds(r.req, r.res, "cpu_ids", "CPU", CpuIds(r.zeusd));
  if (!ids) return;
  ojson doc = ojson::object();
  if (!ids->empty()) {
    auto readings = CpuReadings(r.zeusd, *ids, r.res);
    if (!readings) return;
    for (int id : *ids) {
      const cpu::CpuEnergyReading& reading = readings->at(id);
      doc[std::to_string(id)] = ojson{
          {"cpu_energy_uj", *want_cpu ? ojson(reading.package_energy_uj) : ojson(nullptr)},
          {"dram_energy_uj", *want_dram && reading.dram_energy_uj ? ojson(*reading.dram_energy_uj) : ojson(nullptr)}};
    }
  }
  AnswerZeusd(r.res, 200, doc);
}

void GetCpuPower(const ZeusdRequest& r) {
  if (!CheckQuery(r.req, r.res, {"cpu_ids"}, {})) return;
  std::optional<std::vector<int>> ids = DeviceIds(r.req, r.res, "cpu_ids", "CPU", CpuIds(r.zeusd));
  if (!ids) return;
  ojson power = ojson::object();
  if (!ids->empty()) {
    auto before = CpuReadings(r.zeusd, *ids, r.res);
    if (!before) return;
    const auto started = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(std::chrono::duration<double>(r.zeusd.cpu_power_window_s));
    auto after = CpuReadings(r.zeusd, *ids, r.res);
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
  AnswerZeusd(r.res, 200, ojson{{"timestamp_ms", UnixNowMs()}, {"power_mw", power}});
}

// --- The setters. Each GPU is acted on under the caller's lease, taken implicitly when it holds
// none (NodeAgent::ImplicitLeaseHolder): what it sets is undone when it exits or, over TCP, when
// its connection closes, and a row ceiling still caps its clocks (the agent's composition).

using GpuSetter = std::function<Status(NodeAgent&, const LeaseHolder&, int gpu, const httplib::Request&)>;

// The query's parameters, each as zeusd reads it: gpu_ids and block, then the setter's `extra`.
bool CheckSetterQuery(const ZeusdRequest& r, const std::vector<std::string>& extra) {
  std::vector<std::string> params = {"gpu_ids", "block"};
  params.insert(params.end(), extra.begin(), extra.end());
  if (!CheckQuery(r.req, r.res, params, params)) return false;
  if (!BoolParam(r.req, r.res, "block")) return false;
  for (const std::string& name : extra) {
    if (name != "enabled" && !U32Param(r.req, r.res, name)) return false;
    if (name == "enabled" && !BoolParam(r.req, r.res, name)) return false;
  }
  return true;
}

void SetOnGpus(const ZeusdRequest& r, const std::vector<std::string>& extra, const GpuSetter& set) {
  if (!CheckSetterQuery(r, extra)) return;
  const bool block = r.req.get_param_value("block") == "true";
  std::optional<std::vector<int>> ids = DeviceIds(r.req, r.res, "gpu_ids", "GPU", GpuIds(r.node()), /*write=*/true);
  if (!ids) return;
  const http::ConnectionInfo* connection = http::BoundedHttpServer::CurrentConnection();
  if (connection == nullptr) {
    AnswerZeusdError(r.res, 500, "no connection information");
    return;
  }
  // Over TCP a setter always carries a token (Admit): the lease is its user's at its address,
  // alive while it keeps a connection (which the agent then never closes for being idle).
  const LeaseHolder caller =
      r.transport == AgentTransport::kUnixSocket
          ? LeaseHolder::Process(connection->pid, connection->uid)
          : LeaseHolder::ZeusdClient(r.admission.claims ? r.admission.claims->sub : "", connection->peer_address);
  if (r.transport == AgentTransport::kTcp) http::BoundedHttpServer::KeepOpenWhileIdle();
  DeviceErrors errors;
  for (int id : *ids) {
    Result<LeaseHolder> holder = r.node().ImplicitLeaseHolder(caller, id, connection->id);
    Status done = holder.ok() ? set(r.node(), *holder, id, r.req) : Status(holder.error());
    if (!done.ok()) errors.Add(id, ZeusdStatusFor(done.error().code), done.error().message);
  }
  // block=false: zeusd answers before the command runs and only logs its failure; here it has
  // run (the agent's setters take milliseconds), and a failure is in the agent's command counters.
  if (block && errors.Answered(r.res)) return;
  r.res.status = 200;
}

// A clock parameter U32Param accepted (0 to 2^32 - 1); past any int, which no GPU supports, the
// agent's own check refuses it as an unsupported clock.
int ClockParam(const httplib::Request& req, const char* name) {
  return static_cast<int>(std::min<int64_t>(std::stoll(req.get_param_value(name)), INT32_MAX));
}

Status StatusOf(const Result<GpuControl>& r) { return r.ok() ? Status::Ok() : Status(r.error()); }

void SetPowerLimit(const ZeusdRequest& r) {
  SetOnGpus(r, {"power_limit_mw"}, [](NodeAgent& n, const LeaseHolder& h, int gpu, const httplib::Request& req) {
    const double watts = static_cast<double>(std::stoll(req.get_param_value("power_limit_mw"))) / 1000.0;
    return StatusOf(n.SetPowerLimit(h, gpu, watts));
  });
}

void SetPersistenceMode(const ZeusdRequest& r) {
  SetOnGpus(r, {"enabled"}, [](NodeAgent& n, const LeaseHolder&, int, const httplib::Request& req) -> Status {
    if (n.amd_gpus()) return Error{kNoPersistenceOnAmd};
    // The agent holds NVML open for as long as it runs, which keeps the driver loaded as
    // persistence mode does: on is already so; it never turns it off.
    if (req.get_param_value("enabled") == "true") return Status::Ok();
    return Error{"Invalid request: the wattcut agent keeps GPUs initialised; it does not turn persistence mode off"};
  });
}

template <ClockKind kKind>
void SetLockedClocks(const ZeusdRequest& r) {
  SetOnGpus(r, {"min_clock_mhz", "max_clock_mhz"},
            [](NodeAgent& n, const LeaseHolder& h, int gpu, const httplib::Request& req) {
              return StatusOf(
                  n.LockClocks(h, gpu, kKind, {ClockParam(req, "min_clock_mhz"), ClockParam(req, "max_clock_mhz")}));
            });
}

template <ClockKind kKind>
void ResetLockedClocks(const ZeusdRequest& r) {
  SetOnGpus(r, {}, [](NodeAgent& n, const LeaseHolder& h, int gpu, const httplib::Request&) {
    return StatusOf(n.UnlockClocks(h, gpu, kKind));
  });
}

void ResetAllLockedClocks(const ZeusdRequest& r) {
  SetOnGpus(r, {}, [](NodeAgent& n, const LeaseHolder& h, int gpu, const httplib::Request&) {
    Status sm = StatusOf(n.UnlockSmClocks(h, gpu));  // both tried; the first failure answered
    Status memory = StatusOf(n.UnlockMemoryClocks(h, gpu));
    return sm.ok() ? memory : sm;
  });
}

// --- The power streams (zeusd_streams.h), and any other path of zeusd's prefixes or a known
// path asked with another method: refused as zeusd refuses (group, token, scope), then 404 with
// an empty body.

void GetGpuPowerStream(const ZeusdRequest& r) { ServeGpuPowerStream(r.req, r.res, r.context, r.zeusd, r.open_streams); }

void GetCpuPowerStream(const ZeusdRequest& r) { ServeCpuPowerStream(r.req, r.res, r.context, r.zeusd, r.open_streams); }

void NotFound(const ZeusdRequest& r) {
  r.res.status = 404;
  r.res.set_content("", "text/plain");
}

// Every zeusd route (zeusd's names: gpu_locked_clocks are the SM clocks, mem_locked_clocks the memory's).
const std::vector<ZeusdRoute>& ZeusdRoutes() {
  static const std::vector<ZeusdRoute> kRoutes = {
      {ZeusdMethod::kGet, "/discover", GetDiscover},
      {ZeusdMethod::kGet, "/time", GetTime},
      {ZeusdMethod::kGet, "/auth/whoami", GetWhoami},
      {ZeusdMethod::kGet, "/gpu/get_cumulative_energy",
       [](const ZeusdRequest& r) { AnswerGpuField(r, CumulativeEnergy); }},
      {ZeusdMethod::kGet, "/gpu/get_power_limit", [](const ZeusdRequest& r) { AnswerGpuField(r, PowerLimit); }},
      {ZeusdMethod::kGet, "/gpu/get_power_limit_constraints",
       [](const ZeusdRequest& r) { AnswerGpuField(r, PowerLimitConstraints); }},
      {ZeusdMethod::kGet, "/gpu/get_persistence_mode",
       [](const ZeusdRequest& r) { AnswerGpuField(r, PersistenceMode); }},
      {ZeusdMethod::kGet, "/gpu/get_power", GetGpuPower},
      {ZeusdMethod::kGet, "/cpu/get_cumulative_energy", GetCpuEnergy},
      {ZeusdMethod::kGet, "/cpu/get_power", GetCpuPower},
      {ZeusdMethod::kPost, "/gpu/set_power_limit", SetPowerLimit},
      {ZeusdMethod::kPost, "/gpu/set_persistence_mode", SetPersistenceMode},
      {ZeusdMethod::kPost, "/gpu/set_gpu_locked_clocks", SetLockedClocks<ClockKind::kSm>},
      {ZeusdMethod::kPost, "/gpu/reset_gpu_locked_clocks", ResetLockedClocks<ClockKind::kSm>},
      {ZeusdMethod::kPost, "/gpu/set_mem_locked_clocks", SetLockedClocks<ClockKind::kMemory>},
      {ZeusdMethod::kPost, "/gpu/reset_mem_locked_clocks", ResetLockedClocks<ClockKind::kMemory>},
      {ZeusdMethod::kPost, "/gpu/reset_locked_clocks", ResetAllLockedClocks},
      {ZeusdMethod::kGet, "/gpu/stream_power", GetGpuPowerStream},
      {ZeusdMethod::kGet, "/cpu/stream_power", GetCpuPowerStream},
  };
  return kRoutes;
}

// Steps 1 and 2 (zeusd_admission.h). Over TCP, any request of a zeusd client that holds a lease
// keeps its connection, and so its lease, alive (a recycled connection whose first request is a
// read carries the lease on too).
Admission AdmitAndKeepLeases(const ZeusdApiContext& zeusd, AgentTransport transport, NodeAgent& node,
                             const httplib::Request& req, httplib::Response& res) {
  Admission admission = Admit(zeusd, transport, req, res);
  const http::ConnectionInfo* connection = http::BoundedHttpServer::CurrentConnection();
  if (admission.admitted && admission.claims && transport == AgentTransport::kTcp && connection != nullptr &&
      node.ZeusdClientSeen(LeaseHolder::ZeusdClient(admission.claims->sub, connection->peer_address), connection->id)) {
    http::BoundedHttpServer::KeepOpenWhileIdle();
  }
  return admission;
}

}  // namespace

void AddZeusdRoutes(http::BoundedHttpServer& server, AgentTransport transport, const AgentRouteContext& context,
                    const ZeusdApiContext& zeusd, std::shared_ptr<std::atomic<int>> open_streams) {
  auto serve = [ctx = &context, z = &zeusd, transport, open_streams](std::function<void(const ZeusdRequest&)> handler) {
    return [ctx, z, transport, open_streams, handler](const httplib::Request& req, httplib::Response& res) {
      const Admission admission = AdmitAndKeepLeases(*z, transport, *ctx->node, req, res);
      if (!admission.admitted) return;
      handler(ZeusdRequest{*ctx, *z, transport, admission, open_streams, req, res});
    };
  };
  for (const ZeusdRoute& route : ZeusdRoutes()) {
    if (route.method == ZeusdMethod::kGet) {
      server.Get(route.path, serve(route.handler));
    } else {
      server.Post(route.path, serve(route.handler));
    }
  }
  for (const char* prefix : {R"(/gpu/.*)", R"(/cpu/.*)", R"(/auth/.*)"}) {
    server.Get(prefix, serve(NotFound));
    server.Post(prefix, serve(NotFound));
  }
}

}  // namespace wattcut::agent
