#include "tests/agent/agent_test_service.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <thread>
#include <vector>

#include "wattcut/http/http_client.h"

namespace wattcut::testing {

namespace {

// Short (a socket path has at most 107 bytes).
std::string NewFolder() {
  std::string pattern = (std::filesystem::temp_directory_path() / "wcagent-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    ADD_FAILURE() << "mkdtemp failed";
    return "";
  }
  return pattern;
}

}  // namespace

AgentTestService::AgentTestService(int gpus)
    : folder_(NewFolder()), socket_path_(folder_ + "/agent.sock"), gpus_(gpus) {
  Start();
}

AgentTestService::~AgentTestService() {
  Stop();
  std::error_code ignored;
  if (!folder_.empty()) std::filesystem::remove_all(folder_, ignored);
}

void AgentTestService::Start(std::unique_ptr<GpuBackend> backend, agent::AgentServiceOptions options) {
  Stop();
  simulated_ = nullptr;
  if (!backend) {
    auto simulated = SimulatedBackend::Create("a100-sxm", gpus_);
    ASSERT_TRUE(simulated.ok()) << simulated.error().message;
    simulated_ = simulated->get();
    backend = std::move(*simulated);
  }
  options.socket_path = socket_path_;
  options.socket_mode = 0600;
  options.hostname = "test-node";
  options.node.log = [](const std::string&) {};
  const bool tcp = !options.tcp_host.empty();
  auto started = agent::AgentService::Start(std::move(options), std::move(backend));
  ASSERT_TRUE(started.ok()) << started.error().message;
  service_ = std::move(*started);
  // Serving once each listener answered: a Stop() before httplib's listener thread runs would
  // not reach it (its stop() needs the thread to have started listening).
  std::vector<http::HttpEndpoint> endpoints(1);
  endpoints[0].unix_socket = socket_path_;
  if (tcp) {
    endpoints.emplace_back();
    endpoints[1].base_url = "http://127.0.0.1:" + std::to_string(service_->tcp_port());
  }
  for (const http::HttpEndpoint& endpoint : endpoints) {
    auto client = http::HttpClient::Create(endpoint);
    ASSERT_TRUE(client.ok()) << client.error().message;
    bool answered = false;
    for (int i = 0; i < 500 && !answered; ++i) {  // at most 10 s
      auto health = (*client)->Get("/healthz");
      answered = health.ok() && health->status == 200;
      if (!answered) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ASSERT_TRUE(answered) << (*client)->description() << " does not answer /healthz";
  }
}

void AgentTestService::Stop() {
  service_.reset();
  simulated_ = nullptr;
}

agent::GpuControl AgentTestService::Control(int gpu) {
  if (!service_) return {};
  for (const agent::GpuControl& control : service_->node().Controls()) {
    if (control.index == gpu) return control;
  }
  ADD_FAILURE() << "the agent has no GPU " << gpu;
  return {};
}

}  // namespace wattcut::testing
