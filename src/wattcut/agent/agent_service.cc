#include "wattcut/agent/agent_service.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "wattcut/agent/agent_metrics.h"
#include "wattcut/agent/agent_routes.h"
#include "wattcut/agent/agent_tokens.h"
#include "wattcut/agent/zeusd_routes.h"
#include "wattcut/base/mutex.h"
#include "wattcut/cpu/cpu_energy_meter.h"
#include "wattcut/http/loopback.h"

namespace wattcut::agent {

struct AgentService::Impl {
  std::optional<AgentTokens> tokens;
  std::optional<ZeusdSigningKey> zeusd_key;
  std::unique_ptr<cpu::CpuEnergyMeter> cpu;
  ZeusdApiContext zeusd;
  // Reads the CPU counters every kCpuSampleS, so that no wrap passes unseen between requests.
  std::thread cpu_sampler;
  // Guards no data (`stopping` is atomic): Stop notifies under it, so that the sampler cannot miss
  // the wake between testing `stopping` and waiting.
  Mutex cpu_sampler_mu;
  CondVar cpu_sampler_wake;
  AgentCounters counters;
  std::unique_ptr<ServerPowerMeter> power;
  AgentRouteContext context;
  std::atomic<bool> stopping{false};

  struct Listener {
    std::unique_ptr<http::BoundedHttpServer> server;
    std::thread thread;
  };
  Listener unix_socket;
  Listener tcp;

  // Start's phases, in order.
  // The tokens, the zeusd signing key, the CPU meter (without one, zeusd's cpu-read group is off:
  // a note says so) and the server's power meter.
  Status OpenMeters(const AgentServiceOptions& options, std::vector<std::string>& notes);
  // The routes' context, once the node agent is open.
  void FillContext(const AgentServiceOptions& options, NodeAgent* node);
  // The Unix socket and the TCP listener, bound (not yet serving); the TCP port bound.
  Status BindListeners(const AgentServiceOptions& options, NodeAgent* node, int& tcp_port);
  // Each listener's thread, returning once both serve; the CPU sampler.
  Status StartThreads();
};

namespace {

std::string HostName() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

// A listener's server, with the agent's keep-alive rules: a TCP lease lives on its connection,
// so idle connections stay open for a minute and are never closed for having served many requests.
Result<std::unique_ptr<http::BoundedHttpServer>> NewServer(const AgentServiceOptions& options,
                                                           http::BoundedHttpServer::Observer observer) {
  auto server = std::make_unique<http::BoundedHttpServer>(options.connections, std::move(observer));
  if (Status s = server->StartWorkers(static_cast<size_t>(options.http_threads)); !s.ok()) return s.error();
  server->set_keep_alive_max_count(1u << 30);
  server->set_keep_alive_timeout(60);
  server->set_read_timeout(5);
  server->set_write_timeout(5);
  return server;
}

}  // namespace

Status AgentService::Impl::OpenMeters(const AgentServiceOptions& options, std::vector<std::string>& notes) {
  if (!options.token_file.empty()) {
    auto read = AgentTokens::ReadFile(options.token_file);
    if (!read.ok()) return read.error();
    tokens = std::move(*read);
  }
  if (!options.zeusd_signing_key_file.empty()) {
    auto key = ZeusdSigningKey::ReadFile(options.zeusd_signing_key_file);
    if (!key.ok()) return key.error();
    zeusd_key = std::move(*key);
  }
  // CPU and DRAM energy for the agent's readings and /metrics, and zeusd's cpu-read group.
  zeusd.enabled_groups = options.zeusd_groups;
  if (auto meter = cpu::CpuEnergyMeter::Open(options.powercap_root); meter.ok()) {
    cpu = std::move(*meter);
  } else {
    auto& groups = zeusd.enabled_groups;
    const bool cpu_read = std::find(groups.begin(), groups.end(), ZeusdGroup::kCpuRead) != groups.end();
    notes.push_back("no CPU energy" + std::string(cpu_read ? " (zeusd's cpu-read group is off)" : "") + ": " +
                    meter.error().message);
    groups.erase(std::remove(groups.begin(), groups.end(), ZeusdGroup::kCpuRead), groups.end());
  }
  zeusd.signing_key = zeusd_key ? &*zeusd_key : nullptr;
  zeusd.cpu = cpu.get();
  zeusd.cpu_power_window_s = options.cpu_power_window_s;

  std::unique_ptr<RedfishPowerReader> redfish;
  if (options.redfish) {
    auto reader = RedfishPowerReader::Start(*options.redfish);
    if (!reader.ok()) return reader.error();
    redfish = std::move(*reader);
  }
  power = std::make_unique<ServerPowerMeter>(options.non_gpu_power, std::move(redfish));
  return Status::Ok();
}

void AgentService::Impl::FillContext(const AgentServiceOptions& options, NodeAgent* node) {
  context.node = node;
  context.tokens = tokens ? &*tokens : nullptr;
  context.power = power.get();
  context.cpu = cpu.get();
  context.counters = &counters;
  context.hostname = options.hostname.empty() ? HostName() : options.hostname;
  context.version = WATTCUT_VERSION;
  context.stopping = &stopping;
}

Status AgentService::Impl::BindListeners(const AgentServiceOptions& options, NodeAgent* node, int& tcp_port) {
  if (!options.socket_path.empty()) {
    auto server = NewServer(options, {});
    if (!server.ok()) return server.error();
    unix_socket.server = std::move(*server);
    auto streams = std::make_shared<std::atomic<int>>(0);
    AddAgentRoutes(*unix_socket.server, AgentTransport::kUnixSocket, context, streams);
    AddZeusdRoutes(*unix_socket.server, AgentTransport::kUnixSocket, context, zeusd, streams);
    std::string error;
    if (!unix_socket.server->BindUnixSocket(options.socket_path, options.socket_mode, options.socket_group, error)) {
      return Error{error};
    }
  }
  if (options.tcp_host.empty()) return Status::Ok();
  http::BoundedHttpServer::Observer observer;
  observer.on_connection_closed = [node](const http::ConnectionInfo& info) { node->ConnectionClosed(info.id); };
  auto server = NewServer(options, std::move(observer));
  if (!server.ok()) return server.error();
  tcp.server = std::move(*server);
  auto streams = std::make_shared<std::atomic<int>>(0);
  AddAgentRoutes(*tcp.server, AgentTransport::kTcp, context, streams);
  AddZeusdRoutes(*tcp.server, AgentTransport::kTcp, context, zeusd, streams);
  tcp_port = options.tcp_port;
  if (tcp_port == 0) {
    tcp_port = tcp.server->bind_to_any_port(options.tcp_host);
    if (tcp_port < 0) return Error{"cannot listen on " + options.tcp_host + " (any port)"};
  } else if (!tcp.server->bind_to_port(options.tcp_host, tcp_port)) {
    return Error{"cannot listen on " + options.tcp_host + ":" + std::to_string(tcp_port) +
                 " (in use, or not an address of this machine)"};
  }
  return Status::Ok();
}

Status AgentService::Impl::StartThreads() {
  for (Listener* listener : {&unix_socket, &tcp}) {
    if (listener->server) {
      http::BoundedHttpServer* server = listener->server.get();
      listener->thread = std::thread([server] { server->listen_after_bind(); });
    }
  }
  // Start returns once both listen: httplib's stop() does nothing before its listener runs, so a
  // Stop right after Start would otherwise wait for ever.
  for (Listener* listener : {&unix_socket, &tcp}) {
    if (!listener->server) continue;
    for (int waited_ms = 0; !listener->server->is_running(); ++waited_ms) {
      if (waited_ms >= 10000) return Error{"the agent's listener did not start within 10 s"};
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  if (cpu) {
    cpu_sampler = std::thread([this] {
      constexpr auto kCpuSample = std::chrono::seconds(10);  // a package range fills in minutes at most
      MutexLock lock(cpu_sampler_mu);
      while (!stopping) {
        const auto deadline = std::chrono::steady_clock::now() + kCpuSample;
        while (!stopping && cpu_sampler_wake.WaitUntil(cpu_sampler_mu, deadline)) {
        }
        if (!stopping) (void)cpu->Read();  // a failed read is answered to the next request
      }
    });
  }
  return Status::Ok();
}

Result<std::unique_ptr<AgentService>> AgentService::Start(AgentServiceOptions options,
                                                          std::unique_ptr<GpuBackend> backend) {
  if (options.socket_path.empty() && options.tcp_host.empty()) {
    return Error{"the agent needs a --socket or a --listen address to serve on"};
  }
  std::unique_ptr<AgentService> service(new AgentService());
  service->impl_ = std::make_unique<Impl>();
  Impl& impl = *service->impl_;
  if (Status s = impl.OpenMeters(options, service->notes_); !s.ok()) return s.error();

  AgentCounters* counters = &impl.counters;
  NodeAgentObserver& node_events = options.node.observer;
  node_events.on_command = [counters](const std::string& command, bool ok) { counters->RecordCommand(command, ok); };
  node_events.on_lease_end = [counters](const EndedLease& ended) { counters->RecordLeaseEnd(ended.reason); };
  node_events.on_device_error = [counters](const std::string& name) { counters->RecordNvmlError(name); };
  auto node = NodeAgent::Open(std::move(backend), options.node);
  if (!node.ok()) return node.error();
  service->node_ = std::move(*node);

  impl.FillContext(options, service->node_.get());
  if (Status s = impl.BindListeners(options, service->node_.get(), service->tcp_port_); !s.ok()) return s.error();
  if (Status s = impl.StartThreads(); !s.ok()) return s.error();
  service->options_ = std::move(options);
  return service;
}

void AgentService::Stop() {
  if (!impl_ || impl_->stopping.exchange(true)) return;
  {
    MutexLock lock(impl_->cpu_sampler_mu);
    impl_->cpu_sampler_wake.NotifyAll();
  }
  if (impl_->cpu_sampler.joinable()) impl_->cpu_sampler.join();
  for (Impl::Listener* listener : {&impl_->unix_socket, &impl_->tcp}) {
    if (listener->server) listener->server->stop();
  }
  for (Impl::Listener* listener : {&impl_->unix_socket, &impl_->tcp}) {
    if (listener->thread.joinable()) listener->thread.join();
    listener->server.reset();  // removes the socket file
  }
  node_.reset();  // ends every lease, undoing what its holder set
}

AgentService::~AgentService() { Stop(); }

}  // namespace wattcut::agent
