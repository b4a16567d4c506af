// A real `wattcut agent` process for integration tests, on the fake NVML (its state file says what
// reached "the driver", its call log which process made each call): a Unix socket in a fresh
// folder, TCP on a free loopback port, a state folder; killed or stopped on demand, restartable
// on the same folder.
#pragma once

#include <sys/types.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "wattcut/gpu/fake_nvml/fake_nvml_test_support.h"
#include "wattcut/http/http_client.h"

namespace wattcut::testing {

// An HTTP answer with its JSON body (null when the body is not JSON).
struct AgentReply {
  int status = 0;  // 0: no answer
  std::string text;
  nlohmann::json body;
};

class AgentProcess {
 public:
  // `dir` holds the socket (dir/agent.sock) and the state (dir/state).
  AgentProcess(const std::string& dir, std::vector<std::string> extra_args = {});
  ~AgentProcess();
  AgentProcess(const AgentProcess&) = delete;
  AgentProcess& operator=(const AgentProcess&) = delete;

  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  int tcp_port() const { return tcp_port_; }
  const std::string& socket() const { return socket_; }
  const std::string& startup_output() const { return output_; }
  int startup_exit_status() const { return exit_status_; }

  void Kill();  // SIGKILL: nothing undone
  int Stop();   // SIGTERM: leases end, ceilings kept

  std::unique_ptr<http::HttpClient> UnixClient() const;
  std::unique_ptr<http::HttpClient> TcpClient(const std::string& token = "") const;

 private:
  std::string socket_;
  pid_t pid_ = -1;
  int tcp_port_ = -1;
  std::string output_;
  int exit_status_ = -1;
};

AgentReply Call(http::HttpClient& client, const std::string& method, const std::string& path,
                const nlohmann::json& body = nullptr);

// The fake NVML's SM clock lock of `gpu`: "MIN-MAX", "0-0" when not locked.
std::string LockedClocks(const fake_nvml::ScopedFakeNvml& fake, int gpu);

// A fake driver library's call log ("PID CALL -> RC" a line): fails the test for each call that did
// not come from `pid`; returns how many calls there were.
int ExpectEveryCallFrom(const std::string& log, pid_t pid);

// Waits (bounded: at most `max_s` seconds, polling every 20 ms) until `done()`; whether it came.
bool WaitUntil(const std::function<bool()>& done, double max_s = 30);

// The `curl` command line that runs `requests` (each "METHOD PATH [JSON]") in ONE curl process
// against the agent's socket, then holds that process alive by reading the readings stream: a
// process that holds a lease until it is killed. Each request carries `headers` ("Name: value").
std::vector<std::string> CurlHolder(const std::string& socket, const std::vector<std::string>& requests,
                                    const std::vector<std::string>& headers = {});

// A token file with one token per scope (read, train, row), mode 0600, in `dir`.
struct AgentTokenFile {
  std::string path;
  std::string read, train, row;
};
AgentTokenFile WriteTokenFile(const std::string& dir);

}  // namespace wattcut::testing
