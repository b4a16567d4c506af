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

Result<std::unique_ptr<AgentService>> AgentService::Start(AgentServiceOptions options,
                                                          std::unique_ptr<GpuBackend> backend) {
  if (options.socket_path.empty() && options.tcp_host.empty()) {
    return Error{"the agent needs a --socket or a --listen address to serve on"};
  }
  std::unique_ptr<AgentService> service(new AgentService());
  service->impl_ = std::make_unique<Impl>();
  Impl& impl = *service->impl_;
  if (!options.token_file.empty()) {
    auto tokens = AgentTokens::ReadFile(options.token_file);
    if (!tokens.ok()) return tokens.error();
    impl.tokens = std::move(*tokens);
  }
  if (!options.zeusd_signing_key_file.empty()) {
    auto key = ZeusdSigningKey::ReadFile(options.zeusd_signing_key_file);
    if (!key.ok()) return key.error();
    impl.zeusd_key = std::move(*key);
  }
  // CPU and DRAM energy for the agent's readings and /metrics, and zeusd's cpu-read group.
  impl.zeusd.enabled_groups = options.zeusd_groups;
  if (auto meter = cpu::CpuEnergyMeter::Open(options.powercap_root); meter.ok()) {
    impl.cpu = std::move(*meter);
  } else {
    const auto& groups = impl.zeusd.enabled_groups;
    const bool cpu_read = std::find(groups.begin(), groups.end(), ZeusdGroup::kCpuRead) != groups.end();
    service->notes_.push_back("no CPU energy" + std::string(cpu_read ? " (zeusd's cpu-read group is off)" : "") + ": " +
                              meter.error().message);
    impl.zeusd.enabled_groups.erase(
        std::remove(impl.zeusd.enabled_groups.begin(), impl.zeusd.enabled_groups.end(), ZeusdGroup::kCpuRead),
        impl.zeusd.enabled_groups.end());
  }
  impl.zeusd.signing_key = impl.zeusd_key ? &*impl.zeusd_key : nullptr;
  impl.zeusd.cpu = impl.cpu.get();
  impl.zeusd.cpu_power_window_s = options.cpu_power_window_s;

  std::unique_ptr<RedfishPowerReader> redfish;
  if (options.redfish) {
    auto reader = RedfishPowerReader::Start(*options.redfish);
    if (!reader.ok()) return reader.error();
    redfish = std::move(*reader);
  }
  impl.power = std::make_unique<ServerPowerMeter>(options.non_gpu_power, std::move(redfish));

  AgentCounters* counters = &impl.counters;
  NodeAgentObserver& node_events = options.node.observer;
  node_events.on_command = [counters](const std::string& command, bool ok) { counters->RecordCommand(command, ok); };
  node_events.on_lease_end = [counters](const EndedLease& ended) { counters->RecordLeaseEnd(ended.reason); };
  node_events.on_device_error = [counters](const std::string& name) { counters->RecordNvmlError(name); };
  auto node = NodeAgent::Open(std::move(backend), options.node);
  if (!node.ok()) return node.error();
  service->node_ = std::move(*node);

  impl.context.node = service->node_.get();
  impl.context.tokens = impl.tokens ? &*impl.tokens : nullptr;
  impl.context.power = impl.power.get();
  impl.context.cpu = impl.cpu.get();
  impl.context.counters = &impl.counters;
  impl.context.hostname = options.hostname.empty() ? HostName() : options.hostname;
  impl.context.version = WATTCUT_VERSION;
  impl.context.stopping = &impl.stopping;

  NodeAgent* node_agent = service->node_.get();
  if (!options.socket_path.empty()) {
    auto server = NewServer(options, {});
    if (!server.ok()) return server.error();
    impl.unix_socket.server = std::move(*server);
    auto streams = std::make_shared<std::atomic<int>>(0);
    AddAgentRoutes(*impl.unix_socket.server, AgentTransport::kUnixSocket, impl.context, streams);
    AddZeusdRoutes(*impl.unix_socket.server, AgentTransport::kUnixSocket, impl.context, impl.zeusd, streams);
    std::string error;
    if (!impl.unix_socket.server->BindUnixSocket(options.socket_path, options.socket_mode, options.socket_group,
                                                 error)) {
      return Error{error};
    }
  }
  if (!options.tcp_host.empty()) {
    http::BoundedHttpServer::Observer observer;
    observer.on_connection_closed = [node_agent](const http::ConnectionInfo& info) {
      node_agent->ConnectionClosed(info.id);
    };
    auto server = NewServer(options, std::move(observer));
    if (!server.ok()) return server.error();
    impl.tcp.server = std::move(*server);
    auto streams = std::make_shared<std::atomic<int>>(0);
    AddAgentRoutes(*impl.tcp.server, AgentTransport::kTcp, impl.context, streams);
    AddZeusdRoutes(*impl.tcp.server, AgentTransport::kTcp, impl.context, impl.zeusd, streams);
    int port = options.tcp_port;
    if (port == 0) {
      port = impl.tcp.server->bind_to_any_port(options.tcp_host);
      if (port < 0) return Error{"cannot listen on " + options.tcp_host + " (any port)"};
    } else if (!impl.tcp.server->bind_to_port(options.tcp_host, port)) {
      return Error{"cannot listen on " + options.tcp_host + ":" + std::to_string(port) +
                   " (in use, or not an address of this machine)"};
    }
    service->tcp_port_ = port;
  }
  for (Impl::Listener* listener : {&impl.unix_socket, &impl.tcp}) {
    if (listener->server) {
      http::BoundedHttpServer* server = listener->server.get();
      listener->thread = std::thread([server] { server->listen_after_bind(); });
    }
  }
  // Start returns once both listen: httplib's stop() does nothing before its listener runs, so a
  // Stop right after Start would otherwise wait for ever.
  for (Impl::Listener* listener : {&impl.unix_socket, &impl.tcp}) {
    if (!listener->server) continue;
    for (int waited_ms = 0; !listener->server->is_running(); ++waited_ms) {
      if (waited_ms >= 10000) return Error{"the agent's listener did not start within 10 s"};
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  if (impl.cpu) {
    impl.cpu_sampler = std::thread([&impl] {
      constexpr auto kCpuSample = std::chrono::seconds(10);  // a package range fills in minutes at most
      MutexLock lock(impl.cpu_sampler_mu);
      while (!impl.stopping) {
        const auto deadline = std::chrono::steady_clock::now() + kCpuSample;
        while (!impl.stopping && impl.cpu_sampler_wake.WaitUntil(impl.cpu_sampler_mu, deadline)) {
        }
        if (!impl.stopping) (void)impl.cpu->Read();  // a failed read is answered to the next request
      }
    });
  }
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
