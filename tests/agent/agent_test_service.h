// For the agent's client tests: a real AgentService in the test process, on a Unix socket in a
// fresh folder (and optionally 127.0.0.1 TCP), over simulated GPUs or any backend; quiet. The
// socket's mode is 0600: only this user (the tests' children too) connects.
#pragma once

#include <memory>
#include <string>

#include "wattcut/agent/agent_service.h"
#include "wattcut/gpu/simulated_backend.h"

namespace wattcut::testing {

class AgentTestService {
 public:
  // `gpus` simulated a100-sxm GPUs.
  explicit AgentTestService(int gpus = 2);
  ~AgentTestService();

  // (Re)starts the agent on `backend` (null: fresh simulated GPUs), on the same socket as before.
  // Fails the test (and leaves service() null) when it cannot start.
  void Start(std::unique_ptr<GpuBackend> backend = nullptr, agent::AgentServiceOptions options = {});
  // Stops the agent (its leases end, as when the process is killed and a new one starts).
  void Stop();

  const std::string& socket_path() const { return socket_path_; }
  const std::string& folder() const { return folder_; }
  agent::AgentService* service() { return service_.get(); }
  // The agent's view of GPU `gpu` (its lease, lock, applied clocks).
  agent::GpuControl Control(int gpu);
  // The simulated GPUs the agent runs on now (null when it runs on another backend).
  SimulatedBackend* simulated() { return simulated_; }

 private:
  std::string folder_;  // a fresh one under the temporary directory, removed by the destructor
  std::string socket_path_;
  int gpus_;
  std::unique_ptr<agent::AgentService> service_;
  SimulatedBackend* simulated_ = nullptr;
};

}  // namespace wattcut::testing
