#include "wattcut/agent/zeusd_streams.h"

#include <chrono>
#include <cmath>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "wattcut/agent/agent_answer.h"
#include "wattcut/agent/reading_streams.h"
#include "wattcut/agent/zeusd_query.h"
#include "wattcut/base/unix_time.h"

namespace wattcut::agent {

namespace {

using ojson = nlohmann::ordered_json;

// One server-sent event: exactly "data: <compact JSON>\n\n", as Zeus's PowerStreamingClient splits them.
std::string Event(const ojson& doc) { return "data: " + JsonText(doc) + "\n\n"; }

// What a stream writes next: its events, or after kHeartbeatS without one an SSE comment (":",
// which clients skip), so that a proxy between does not take the stream for dead while the power
// does not change (zeusd sends nothing then). A client gone is noticed by the reactor at once.
class StreamWriter {
 public:
  static constexpr double kHeartbeatS = 10;
  std::string Next(std::string events) {
    const auto now = std::chrono::steady_clock::now();
    if (events.empty() && std::chrono::duration<double>(now - last_).count() >= kHeartbeatS) events = ":\n\n";
    if (!events.empty()) last_ = now;
    return events;
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

// A stopping agent ends its streams (their last chunk), as its listener's stop would.
bool Stopping(const AgentRouteContext& context) { return context.stopping != nullptr && *context.stopping; }

// The stream's devices and a slot for it, or the refusal answered.
std::optional<std::pair<std::vector<int>, std::shared_ptr<void>>> OpenStream(const httplib::Request& req,
                                                                             httplib::Response& res, const char* param,
                                                                             const std::string& kind,
                                                                             const std::vector<int>& known,
                                                                             const OpenStreams& open_streams) {
  if (!CheckQuery(req, res, {param}, {})) return std::nullopt;
  std::optional<std::vector<int>> ids = StreamIds(req, res, param, kind, known);
  if (!ids) return std::nullopt;
  std::shared_ptr<void> slot = TakeStreamSlot(open_streams);
  if (!slot) {
    AnswerZeusdError(res, 503,
                     std::to_string(kMaxReadingStreams) + " streams are open on this listener: close one, or poll");
    return std::nullopt;
  }
  return std::make_pair(std::move(*ids), std::move(slot));
}

// A GPU power stream's state, kept by its producer.
struct GpuStream {
  std::vector<int> ids;
  std::map<int, int64_t> last_mw;
  StreamWriter writer;

  http::StreamPiece Produce(NodeAgent& node, const AgentRouteContext& context) {
    if (Stopping(context)) return {"", true};
    if (ids.empty()) return {writer.Next("")};  // zeusd: a stream of no GPU is silent
    const std::vector<GpuReading> readings = node.ReadPower();
    std::string events;
    for (int id : ids) {
      const GpuReading& r = readings[static_cast<size_t>(id)];
      const std::optional<double> w = r.power_instant_w ? r.power_instant_w : r.power_w;
      if (!w) continue;  // a failed reading is skipped, as zeusd's poller does
      const int64_t mw = std::llround(*w * 1000);
      auto seen = last_mw.find(id);
      if (seen != last_mw.end() && seen->second == mw) continue;
      last_mw[id] = mw;
      events += Event(ojson{{"timestamp_ms", UnixNowMs()}, {"gpu_id", id}, {"power_mw", mw}});
    }
    return {writer.Next(std::move(events))};
  }
};

// A CPU power stream's state: the power of a period from two readings a period apart.
struct CpuStream {
  struct Sent {
    int64_t cpu_mw = -1;
    std::optional<int64_t> dram_mw;
    bool operator==(const Sent&) const = default;
  };
  std::vector<int> ids;
  std::map<int, cpu::CpuEnergyReading> baseline;
  std::map<int, Sent> last;
  StreamWriter writer;

  http::StreamPiece Produce(const ZeusdApiContext& z, const AgentRouteContext& context) {
    if (Stopping(context)) return {"", true};
    if (ids.empty()) return {writer.Next("")};
    Result<std::vector<cpu::CpuEnergyReading>> read = z.cpu->Read();
    if (!read.ok()) return {writer.Next("")};  // skipped, as zeusd's poller skips a failed read
    std::map<int, cpu::CpuEnergyReading> now;
    for (const cpu::CpuEnergyReading& r : *read) now[r.index] = r;
    std::string events = baseline.empty() ? std::string() : Events(now, z.cpu_power_window_s * 1e6);
    baseline = std::move(now);
    return {writer.Next(std::move(events))};
  }

  std::string Events(const std::map<int, cpu::CpuEnergyReading>& now, double period_us) {
    // zeusd divides by the nominal period.
    auto mw = [period_us](int64_t from, int64_t to) {
      return static_cast<int64_t>(static_cast<double>(std::max<int64_t>(0, to - from)) * 1000 / period_us);
    };
    std::string events;
    for (int id : ids) {
      const cpu::CpuEnergyReading& a = baseline.at(id);
      const cpu::CpuEnergyReading& b = now.at(id);
      Sent sample{mw(a.package_energy_uj, b.package_energy_uj), std::nullopt};
      if (a.dram_energy_uj && b.dram_energy_uj) sample.dram_mw = mw(*a.dram_energy_uj, *b.dram_energy_uj);
      auto seen = last.find(id);
      if (seen != last.end() && seen->second == sample) continue;
      last[id] = sample;
      events += Event(ojson{{"timestamp_ms", UnixNowMs()},
                            {"cpu_id", id},
                            {"cpu_mw", sample.cpu_mw},
                            {"dram_mw", sample.dram_mw ? ojson(*sample.dram_mw) : ojson(nullptr)}});
    }
    return events;
  }
};

}  // namespace

std::vector<int> GpuIds(const NodeAgent& node) {
  std::vector<int> ids;
  for (const GpuDescription& d : node.gpus()) ids.push_back(d.index);
  return ids;
}

std::vector<int> CpuIds(const ZeusdApiContext& zeusd) {
  std::vector<int> ids;
  if (zeusd.cpu != nullptr) {
    for (const cpu::RaplPackage& p : zeusd.cpu->packages()) ids.push_back(p.index);
  }
  return ids;
}

void ServeGpuPowerStream(const httplib::Request& req, httplib::Response& res, const AgentRouteContext& context,
                         const ZeusdApiContext& zeusd, const OpenStreams& open_streams) {
  NodeAgent* node = context.node;
  auto opened = OpenStream(req, res, "gpu_ids", "GPU", GpuIds(*node), open_streams);
  if (!opened) return;
  auto stream = std::make_shared<GpuStream>();
  stream->ids = std::move(opened->first);
  const AgentRouteContext* ctx = &context;
  http::BoundedHttpServer::StreamEvery(
      req, 200, "text/event-stream", {{"Cache-Control", "no-cache"}}, StreamPeriod(zeusd.gpu_stream_period_s),
      [node, ctx, stream, slot = opened->second] { return stream->Produce(*node, *ctx); });
}

void ServeCpuPowerStream(const httplib::Request& req, httplib::Response& res, const AgentRouteContext& context,
                         const ZeusdApiContext& zeusd, const OpenStreams& open_streams) {
  auto opened = OpenStream(req, res, "cpu_ids", "CPU", CpuIds(zeusd), open_streams);
  if (!opened) return;
  auto stream = std::make_shared<CpuStream>();
  stream->ids = std::move(opened->first);
  const ZeusdApiContext* z = &zeusd;
  const AgentRouteContext* ctx = &context;
  http::BoundedHttpServer::StreamEvery(req, 200, "text/event-stream", {{"Cache-Control", "no-cache"}},
                                       StreamPeriod(z->cpu_power_window_s),
                                       [z, ctx, stream, slot = opened->second] { return stream->Produce(*z, *ctx); });
}

}  // namespace wattcut::agent
