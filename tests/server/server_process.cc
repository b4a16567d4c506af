#include "tests/server/server_process.h"

#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>

#include "wattcut/base/child_process_testing.h"

namespace wattcut::testing {

std::string MakeTempDir(const std::string& tag) {
  static std::atomic<int> counter{0};
  auto dir = std::filesystem::temp_directory_path() /
             ("wattcut_server_it_" + tag + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

ScopedTempDir::~ScopedTempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

uint64_t ResidentBytes(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::strtoull(line.c_str() + 6, nullptr, 10) * 1024;
  }
  return 0;
}

int ThreadCount(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Threads:", 0) == 0) return std::atoi(line.c_str() + 8);
  }
  return 0;
}

ServerProcess::ServerProcess(std::vector<std::string> extra_args, std::string data_dir, LaunchOptions launch)
    : data_dir_(std::move(data_dir)) {
  if (data_dir_.empty()) {
    data_dir_ = MakeTempDir("data");
    own_dir_ = true;
  }
  const char* binary = std::getenv("WATTCUT_TEST_BINARY");
  args_ = {binary != nullptr && *binary != 0 ? binary : WATTCUT_BINARY,
           "serve",
           "--listen",
           launch.listen,
           "--data-dir",
           data_dir_};
  args_.insert(args_.end(), extra_args.begin(), extra_args.end());

  std::function<void()> limit_file_size;
  if (launch.file_size_limit_bytes) {
    const rlimit limit{*launch.file_size_limit_bytes, *launch.file_size_limit_bytes};
    limit_file_size = [limit] { setrlimit(RLIMIT_FSIZE, &limit); };
  }
  ChildProcess child = StartChild(args_, "listening on http://", {}, limit_file_size);
  startup_output_ = child.output;
  if (child.pid < 0) {
    startup_exit_status_ = child.exit_status;
    return;
  }
  pid_ = child.pid;
  const std::string& line = child.ready_line;
  const size_t at = line.find("listening on http://");
  const size_t colon = line.find(':', at + std::string("listening on http://").size());
  port_ = colon == std::string::npos ? 0 : std::atoi(line.c_str() + colon + 1);
}

ServerProcess::~ServerProcess() {
  if (pid_ > 0) Kill();
  if (own_dir_) {
    std::error_code ec;
    std::filesystem::remove_all(data_dir_, ec);
  }
}

void ServerProcess::Kill() {
  if (pid_ <= 0) return;
  StopChild(pid_, SIGKILL);
  pid_ = -1;
}

int ServerProcess::Stop() {
  if (pid_ <= 0) return -1;
  const int status = StopChild(pid_, SIGTERM);
  pid_ = -1;
  return status;
}

std::unique_ptr<httplib::Client> ServerProcess::Client() const {
  auto client = std::make_unique<httplib::Client>("127.0.0.1", port_);
  client->set_read_timeout(3600, 0);
  client->set_write_timeout(60, 0);
  client->set_connection_timeout(60, 0);
  client->set_keep_alive(true);
  client->set_tcp_nodelay(true);
  return client;
}

namespace {

HttpReply ToReply(const httplib::Result& result) {
  HttpReply reply;
  if (!result) return reply;
  reply.status = result->status;
  reply.text = result->body;
  reply.body = nlohmann::json::parse(result->body, nullptr, /*allow_exceptions=*/false);
  return reply;
}

}  // namespace

HttpReply Get(httplib::Client& client, const std::string& path) { return ToReply(client.Get(path)); }

HttpReply Post(httplib::Client& client, const std::string& path, const nlohmann::json& body) {
  return ToReply(client.Post(path, body.dump(), "application/json"));
}

HttpReply PostRaw(httplib::Client& client, const std::string& path, const std::string& body) {
  return ToReply(client.Post(path, body, "application/json"));
}

HttpReply Put(httplib::Client& client, const std::string& path, const nlohmann::json& body) {
  return ToReply(client.Put(path, body.dump(), "application/json"));
}

HttpReply Delete(httplib::Client& client, const std::string& path) { return ToReply(client.Delete(path)); }

nlohmann::json WaitForFrontier(httplib::Client& client, const std::string& job_path, int max_polls) {
  nlohmann::json status;
  for (int i = 0; i < max_polls; ++i) {
    status = Get(client, "/v1/jobs/" + job_path + "/frontier").body;
    if (status.value("state", "") == "ready" || status.value("state", "") == "failed") break;
    usleep(20000);
  }
  return status;
}

}  // namespace wattcut::testing
