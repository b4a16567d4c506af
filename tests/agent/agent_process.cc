#include "tests/agent/agent_process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "wattcut/base/child_process_testing.h"

namespace wattcut::testing {

AgentProcess::AgentProcess(const std::string& dir, std::vector<std::string> extra_args) : socket_(dir + "/agent.sock") {
  std::filesystem::create_directories(dir + "/state");
  std::vector<std::string> args = {WATTCUT_BINARY, "agent",       "--socket",    socket_,
                                   "--listen",     "127.0.0.1:0", "--state-dir", dir + "/state"};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  const char* library_path = std::getenv("LD_LIBRARY_PATH");
  ChildProcess child = StartChild(args, "wattcut agent: serving",
                                  {std::string("LD_LIBRARY_PATH=") + WATTCUT_FAKE_NVML_DIR +
                                   (library_path ? std::string(":") + library_path : "")});
  output_ = child.output;
  exit_status_ = child.exit_status;
  pid_ = child.pid;
  const size_t at = child.ready_line.rfind(':');
  if (pid_ > 0 && child.ready_line.find("http://") != std::string::npos && at != std::string::npos) {
    tcp_port_ = std::atoi(child.ready_line.c_str() + at + 1);
  }
}

AgentProcess::~AgentProcess() { Kill(); }

void AgentProcess::Kill() {
  if (pid_ > 0) StopChild(pid_, SIGKILL);
  pid_ = -1;
}

int AgentProcess::Stop() {
  const int status = pid_ > 0 ? StopChild(pid_, SIGTERM) : -1;
  pid_ = -1;
  return status;
}

std::unique_ptr<http::HttpClient> AgentProcess::UnixClient() const {
  http::HttpEndpoint endpoint;
  endpoint.unix_socket = socket_;
  auto client = http::HttpClient::Create(endpoint);
  return client.ok() ? std::move(*client) : nullptr;
}

std::unique_ptr<http::HttpClient> AgentProcess::TcpClient(const std::string& token) const {
  http::HttpEndpoint endpoint;
  endpoint.base_url = "http://127.0.0.1:" + std::to_string(tcp_port_);
  endpoint.bearer_token = token;
  auto client = http::HttpClient::Create(endpoint);
  return client.ok() ? std::move(*client) : nullptr;
}

AgentReply Call(http::HttpClient& client, const std::string& method, const std::string& path,
                const nlohmann::json& body) {
  AgentReply reply;
  auto response = client.Request(method, path, body.is_null() ? std::string() : body.dump());
  if (!response.ok()) {
    reply.text = response.error().message;
    return reply;
  }
  reply.status = response->status;
  reply.text = response->body;
  reply.body = nlohmann::json::parse(response->body, nullptr, /*allow_exceptions=*/false);
  return reply;
}

std::string LockedClocks(const fake_nvml::ScopedFakeNvml& fake, int gpu) {
  auto state = fake.Read();
  const std::string p = "gpu" + std::to_string(gpu) + ".";
  const std::string min = state.count(p + "locked_min") ? state[p + "locked_min"] : "0";
  const std::string max = state.count(p + "locked_max") ? state[p + "locked_max"] : "0";
  return min + "-" + max;
}

int ExpectEveryCallFrom(const std::string& log, pid_t pid) {
  std::istringstream lines(log);
  int calls = 0;
  for (std::string line; std::getline(lines, line); ++calls) {
    EXPECT_EQ(line.rfind(std::to_string(pid) + " ", 0), 0u) << line;
  }
  return calls;
}

bool WaitUntil(const std::function<bool()>& done, double max_s) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(max_s);
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

std::vector<std::string> CurlHolder(const std::string& socket, const std::vector<std::string>& requests,
                                    const std::vector<std::string>& headers) {
  std::vector<std::string> args = {"/usr/bin/curl"};
  for (const std::string& request : requests) {
    const size_t space = request.find(' ');
    const size_t second = request.find(' ', space + 1);
    const std::string method = request.substr(0, space);
    const std::string path =
        request.substr(space + 1, second == std::string::npos ? std::string::npos : second - space - 1);
    args.insert(args.end(), {"-sS", "--unix-socket", socket, "-X", method, "http://agent" + path});
    for (const std::string& header : headers) args.insert(args.end(), {"-H", header});
    if (second != std::string::npos) args.insert(args.end(), {"-d", request.substr(second + 1)});
    args.push_back("-w");
    args.push_back("\\n");
    args.push_back("--next");
  }
  args.insert(args.end(), {"-sSN", "--unix-socket", socket, "http://agent/v1/readings/stream?interval_s=0.5"});
  return args;
}

AgentTokenFile WriteTokenFile(const std::string& dir) {
  AgentTokenFile file;
  file.path = dir + "/agent.tokens";
  file.read = "read-token-0123456789abcdef";
  file.train = "train-token-0123456789abcdef";
  file.row = "row-token-0123456789abcdef";
  std::ofstream(file.path) << "# scope token\nread " << file.read << "\ntrain " << file.train << "\nrow " << file.row
                           << "\n";
  ::chmod(file.path.c_str(), 0600);
  return file;
}

}  // namespace wattcut::testing
