// A real `wattcut serve` process for integration tests: started on a free loopback
// port (--listen 127.0.0.1:0; the port is read from its first line of output), with
// its own data folder, killed or stopped on demand.
#pragma once

#include <httplib.h>
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "wattcut/runtime/plan_server_client.h"

namespace wattcut::testing {

// How the process is started, beyond its arguments.
struct LaunchOptions {
  std::string listen = "127.0.0.1:0";  // a loopback address; the port is read back
  // RLIMIT_FSIZE of the server process: its writes beyond this many bytes of a file fail
  // (as on a full disk; root is not exempt).
  std::optional<uint64_t> file_size_limit_bytes;
};

class ServerProcess {
 public:
  // `data_dir` empty: a fresh temporary folder, removed by the destructor. The binary is
  // WATTCUT_BINARY, or the one the environment variable WATTCUT_TEST_BINARY names (to run
  // these tests against another build).
  explicit ServerProcess(std::vector<std::string> extra_args = {}, std::string data_dir = "",
                         LaunchOptions launch = {});
  ~ServerProcess();
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  int port() const { return port_; }
  const std::string& data_dir() const { return data_dir_; }
  // Everything the process printed before the port line (its error, if it failed).
  const std::string& startup_output() const { return startup_output_; }
  // The exit status of a process that ended before listening (as Stop() reports it); -1 while
  // it runs or after it listened.
  int startup_exit_status() const { return startup_exit_status_; }

  // SIGKILL, then reap.
  void Kill();
  // SIGTERM, then reap; returns the exit status.
  int Stop();

  // A client for this server; long polls may take a while, so the read timeout is long.
  std::unique_ptr<httplib::Client> Client() const;

 private:
  std::vector<std::string> args_;
  std::string data_dir_;
  bool own_dir_ = false;
  pid_t pid_ = -1;
  int port_ = 0;
  std::string startup_output_;
  int startup_exit_status_ = -1;
};

// The resident memory of process `pid` in bytes (VmRSS of /proc/PID/status); 0 if unknown.
uint64_t ResidentBytes(pid_t pid);
// The threads of process `pid` (Threads: of /proc/PID/status); 0 if unknown.
int ThreadCount(pid_t pid);

// A fresh empty folder under the system temp folder.
std::string MakeTempDir(const std::string& tag);

// A MakeTempDir folder removed (with its contents) when this goes out of scope.
class ScopedTempDir {
 public:
  explicit ScopedTempDir(const std::string& tag) : path_(MakeTempDir(tag)) {}
  ~ScopedTempDir();
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Response helpers: status and parsed body (null when the body is not JSON).
struct HttpReply {
  int status = 0;  // 0: no response (connection failed)
  nlohmann::json body;
  std::string text;
};
HttpReply Get(httplib::Client& client, const std::string& path);
HttpReply Post(httplib::Client& client, const std::string& path, const nlohmann::json& body);
HttpReply Put(httplib::Client& client, const std::string& path, const nlohmann::json& body);
HttpReply Delete(httplib::Client& client, const std::string& path);
HttpReply PostRaw(httplib::Client& client, const std::string& path, const std::string& body);

// Polls GET /v1/jobs/{job_path}/frontier every 20 ms until its state is ready or
// failed, at most `max_polls` times; returns the last status body. `job_path` is the
// EncodeJobIdForPath'd job id (wattcut/runtime/plan_server_client.h).
nlohmann::json WaitForFrontier(httplib::Client& client, const std::string& job_path, int max_polls = 6000);

}  // namespace wattcut::testing
