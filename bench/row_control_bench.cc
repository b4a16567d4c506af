// One period of the live POLCA row controller (issue 13) for a 1,000-server row: every server's
// power read (GET /v1/readings/server) and, in the worst case, a ceiling sent to every server (PUT
// /v1/ceilings), through RowAgents with the timeouts of a 1 s telemetry period. The controller's
// CPU time per period (getrusage of this process: user + system) is reported as a percentage of one
// core at that period; the goal is under 5 %. The same reads through libcurl (http::HttpClient on a
// pool of threads) are measured beside them, the reason the controller has its own transport.
//
// The agents are fakes that answer as an 8-GPU agent does, in a child process (so that their CPU
// time is not the controller's): one epoll thread listening on an address of its own for every
// server (127.1.X.Y, so that the controller's connections are one per host, as in a real row),
// answering every server over its own keep-alive connection.
// Every loop is bounded.
//
//   build/bench/wattcut_row_control_bench [--servers 1000] [--periods 10] [--period-s 1]
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "wattcut/http/http_client.h"
#include "wattcut/http/http_thread_pool.h"
#include "wattcut/row_control/row_agent_client.h"

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;
using wattcut::row_control::AgentCommand;
using wattcut::row_control::AgentTimeouts;
using wattcut::row_control::RowAgents;
using wattcut::row_control::RowServer;

double CpuSeconds() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// What an 8-GPU agent answers to GET /v1/readings/server (its fields, its size).
std::string ServerReadingBody(uint64_t n) {
  double gpu_w = 0;
  for (int i = 0; i < 8; ++i) gpu_w += 250 + static_cast<double>((n * 7 + i * 13) % 150);
  json server = {{"power_w", gpu_w * 1.15 + 1700},
                 {"gpu_power_w", gpu_w},
                 {"non_gpu_power_w", gpu_w * 0.15 + 1700},
                 {"source", "model"},
                 {"redfish_age_s", nullptr}};
  return json{{"time_s", 1.7e9 + static_cast<double>(n)}, {"gpu_count", 8}, {"server", server}}.dump();
}

// One HTTP/1.1 connection of a fake agent: bytes received and not yet answered.
struct FakeConnection {
  std::string pending;
};

// The answer to one complete request at the front of `pending`, or "" while it is incomplete.
// Consumes the request.
std::string AnswerNext(std::string& pending, uint64_t& answered) {
  const size_t header_end = pending.find("\r\n\r\n");
  if (header_end == std::string::npos) return "";
  size_t content_length = 0;
  const std::string headers = pending.substr(0, header_end);
  for (size_t at = 0; (at = headers.find('\n', at)) != std::string::npos; ++at) {
    if (strncasecmp(headers.c_str() + at + 1, "content-length:", 15) == 0) {
      content_length = std::strtoul(headers.c_str() + at + 16, nullptr, 10);
    }
  }
  if (pending.size() < header_end + 4 + content_length) return "";
  const std::string body = pending.substr(header_end + 4, content_length);
  const bool readings = pending.rfind("GET /v1/readings/server ", 0) == 0;
  const bool ceilings = pending.rfind("PUT /v1/ceilings", 0) == 0;
  pending.erase(0, header_end + 4 + content_length);
  int status = 200;
  std::string content;
  if (readings) {
    content = ServerReadingBody(answered++);
  } else if (ceilings) {
    json request = json::parse(body, nullptr, false);
    if (!request.is_object() || !request.contains("mhz")) {
      status = 400;
      content = R"({"error":"bad body","code":"malformed"})";
    } else {
      json gpus = json::array();
      for (int i = 0; i < 8; ++i) {
        gpus.push_back({{"gpu", i},
                        {"ceiling", {{"mhz", request["mhz"]}, {"reason", request["reason"]}, {"expires_in_s", 30.0}}}});
      }
      content = json{{"gpus", gpus}}.dump();
    }
  } else {
    status = 404;
    content = R"({"error":"not found","code":"not_found"})";
  }
  return "HTTP/1.1 " + std::to_string(status) + (status == 200 ? " OK" : " Error") +
         "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(content.size()) + "\r\n\r\n" +
         content;
}

// The loopback address of server `s`: 127.1.0.1, 127.1.0.2, ... (all of 127.0.0.0/8 is loopback).
in_addr_t ServerAddress(int s) { return htonl((127u << 24) | (1u << 16) | static_cast<uint32_t>(s + 1)); }

std::string AddressText(in_addr_t address) {
  char text[INET_ADDRSTRLEN] = {};
  in_addr a{};
  a.s_addr = address;
  ::inet_ntop(AF_INET, &a, text, sizeof(text));
  return text;
}

// The child: a fake agent for each of `servers` servers, one epoll thread, until the parent goes.
// (Not httplib: its server wakes each idle keep-alive connection's thread every millisecond, which
// would load the machine the controller is measured on.) Writes the ports to `ready_fd`.
[[noreturn]] void ServeFakeAgents(int servers, int ready_fd) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  const int epoll = ::epoll_create1(0);
  std::vector<int> listeners;
  std::string ports_text;
  for (int p = 0; p < servers; ++p) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = ServerAddress(p);
    socklen_t length = sizeof(address);
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 || ::listen(fd, 4096) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      _exit(2);
    }
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.fd = fd;
    ::epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event);
    listeners.push_back(fd);
    ports_text += std::to_string(ntohs(address.sin_port)) + " ";
  }
  ports_text += "\n";
  if (::write(ready_fd, ports_text.data(), ports_text.size()) < 0) _exit(3);
  ::close(ready_fd);
  std::map<int, FakeConnection> connections;
  uint64_t answered = 0;
  std::vector<epoll_event> events(256);
  char buffer[65536];
  for (;;) {
    const int ready = ::epoll_wait(epoll, events.data(), static_cast<int>(events.size()), -1);
    for (int e = 0; e < ready; ++e) {
      const int fd = events[static_cast<size_t>(e)].data.fd;
      if (std::find(listeners.begin(), listeners.end(), fd) != listeners.end()) {
        for (int client; (client = ::accept4(fd, nullptr, nullptr, SOCK_NONBLOCK)) >= 0;) {
          int one = 1;
          ::setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
          epoll_event event{};
          event.events = EPOLLIN;
          event.data.fd = client;
          ::epoll_ctl(epoll, EPOLL_CTL_ADD, client, &event);
          connections[client];
        }
        continue;
      }
      FakeConnection& connection = connections[fd];
      const ssize_t n = ::read(fd, buffer, sizeof(buffer));
      if (n <= 0) {
        if (n < 0 && errno == EAGAIN) continue;
        ::close(fd);
        connections.erase(fd);
        continue;
      }
      connection.pending.append(buffer, static_cast<size_t>(n));
      std::string answers;
      for (std::string one; !(one = AnswerNext(connection.pending, answered)).empty();) answers += one;
      // Small answers to a client that reads them at once: a blocking write loop is enough here.
      for (size_t sent = 0; sent < answers.size();) {
        const ssize_t w = ::write(fd, answers.data() + sent, answers.size() - sent);
        if (w < 0 && errno == EAGAIN) continue;
        if (w <= 0) break;
        sent += static_cast<size_t>(w);
      }
    }
  }
}

// The baseline the controller's transport is measured against: the same readings through libcurl
// (http::HttpClient, one per server, on a pool of 32 threads: what RowAgents did before).
class CurlReads {
 public:
  CurlReads(const std::vector<RowServer>& row, const AgentTimeouts& timeouts, const std::string& token) {
    for (const RowServer& server : row) {
      wattcut::http::HttpEndpoint endpoint;
      endpoint.base_url = server.agent_url;
      endpoint.bearer_token = token;
      endpoint.connect_timeout_s = timeouts.connect_timeout_s;
      endpoint.timeout_s = timeouts.request_timeout_s;
      auto client = wattcut::http::HttpClient::Create(endpoint);
      if (client.ok()) clients_.push_back(std::move(*client));
    }
    (void)pool_.Start(32);
  }
  // Every server's reading once; the failures.
  size_t ReadAll() {
    std::atomic<size_t> next{0}, failures{0}, done{0};
    std::mutex mu;
    std::condition_variable finished;
    const size_t jobs = std::min<size_t>(32, clients_.size());
    for (size_t j = 0; j < jobs; ++j) {
      pool_.enqueue([&] {
        for (size_t i = next++; i < clients_.size(); i = next++) {
          auto answer = clients_[i]->Get("/v1/readings/server");
          if (!answer.ok() || answer->status != 200 || json::parse(answer->body, nullptr, false).is_discarded()) {
            ++failures;
          }
        }
        std::lock_guard<std::mutex> lock(mu);
        if (++done == jobs) finished.notify_all();
      });
    }
    std::unique_lock<std::mutex> lock(mu);
    finished.wait_for(lock, std::chrono::seconds(30), [&] { return done == jobs; });
    return failures + (clients_.empty() ? 1 : 0);
  }

 private:
  std::vector<std::unique_ptr<wattcut::http::HttpClient>> clients_;
  wattcut::http::HttpThreadPool pool_;  // last: joined before the clients go
};

struct PeriodFigures {
  double cpu_s_per_period = 0;
  double wall_s_per_period = 0;
  size_t failures = 0;
};

}  // namespace

int main(int argc, char** argv) {
  int servers = 1000;
  int periods = 10;
  double period_s = 1.0;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--servers")
      servers = std::atoi(argv[i + 1]);
    else if (flag == "--periods")
      periods = std::atoi(argv[i + 1]);
    else if (flag == "--period-s")
      period_s = std::atof(argv[i + 1]);
    else {
      std::fprintf(stderr, "unknown flag %s\n", argv[i]);
      return 2;
    }
  }
  if (servers < 1 || servers > 60000 || periods < 1 || periods > 1000 || period_s <= 0 || period_s > 60) {
    std::fprintf(stderr, "expected --servers 1..60000 --periods 1..1000 --period-s (0,60]\n");
    return 2;
  }

  // The fake agents first, before this process has any thread.
  int ready[2];
  if (::pipe(ready) != 0) return 1;
  pid_t child = ::fork();
  if (child < 0) return 1;
  if (child == 0) {
    ::close(ready[0]);
    ServeFakeAgents(servers, ready[1]);
  }
  ::close(ready[1]);
  std::string ports_text;
  char buffer[1024];
  for (ssize_t n; (n = ::read(ready[0], buffer, sizeof(buffer))) > 0;)
    ports_text.append(buffer, static_cast<size_t>(n));
  ::close(ready[0]);
  std::vector<int> agent_ports;
  for (const char* p = ports_text.c_str(); *p != '\0';) {
    char* end = nullptr;
    long port = std::strtol(p, &end, 10);
    if (end == p) break;
    agent_ports.push_back(static_cast<int>(port));
    p = end;
  }
  if (static_cast<int>(agent_ports.size()) != servers) {
    std::fprintf(stderr, "the fake agents did not start\n");
    ::kill(child, SIGKILL);
    return 1;
  }

  std::vector<RowServer> row;
  for (int s = 0; s < servers; ++s) {
    row.push_back(
        RowServer{"server-" + std::to_string(s),
                  "http://" + AddressText(ServerAddress(s)) + ":" + std::to_string(agent_ports[static_cast<size_t>(s)]),
                  s % 2 == 0 ? wattcut::polca::Priority::kLow : wattcut::polca::Priority::kHigh, s + 1, ""});
  }
  const AgentTimeouts timeouts = AgentTimeouts::ForPeriod(period_s);
  auto made = RowAgents::Create(row, "bench-row-token-0123456789", timeouts);
  if (!made.ok()) {
    std::fprintf(stderr, "%s\n", made.error().message.c_str());
    ::kill(child, SIGKILL);
    return 1;
  }
  RowAgents& agents = **made;

  auto deadline = [&] {
    return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(period_s * 0.8));
  };
  // Connections are opened once, at the first period (not measured): a controller runs for hours.
  size_t warm_failures = 0;
  for (int w = 0; w < 2; ++w) {
    for (const auto& sample : agents.ReadAll(deadline())) {
      if (!sample.ok() && warm_failures++ == 0)
        std::fprintf(stderr, "first failure: %s\n", sample.error().message.c_str());
    }
  }

  std::vector<AgentCommand> every_server;
  for (int s = 0; s < servers; ++s) {
    every_server.push_back(AgentCommand{static_cast<size_t>(s), AgentCommand::Kind::kSetCeilings, 1005, 30, "brake"});
  }
  // One measured run of `periods` periods of `work` (which returns its failures).
  auto measure = [&](const std::function<size_t()>& work) {
    PeriodFigures figures;
    const double cpu_start = CpuSeconds();
    const Clock::time_point start = Clock::now();
    double busy_wall_s = 0;
    for (int p = 0; p < periods; ++p) {
      std::this_thread::sleep_until(
          start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(p * period_s)));
      const Clock::time_point busy_start = Clock::now();
      figures.failures += work();
      busy_wall_s += std::chrono::duration<double>(Clock::now() - busy_start).count();
    }
    figures.cpu_s_per_period = (CpuSeconds() - cpu_start) / periods;
    figures.wall_s_per_period = busy_wall_s / periods;
    return figures;
  };
  auto run = [&](bool send) {
    return measure([&] {
      size_t failures = 0;
      for (const auto& sample : agents.ReadAll(deadline())) failures += sample.ok() ? 0 : 1;
      if (send) {
        for (const auto& status : agents.SendAll(every_server, deadline())) failures += status.ok() ? 0 : 1;
      }
      return failures;
    });
  };
  const PeriodFigures reads = run(false);
  const PeriodFigures reads_and_sends = run(true);
  PeriodFigures curl_reads;
  {
    CurlReads curl(row, timeouts, "bench-row-token-0123456789");
    (void)curl.ReadAll();  // its connections opened, not measured
    curl_reads = measure([&] { return curl.ReadAll(); });
  }

  std::printf(
      "row of %d servers (fake 8-GPU agents on loopback addresses of their own, another process), "
      "timeouts %.0f ms connect / %.0f ms request, %d periods of %.1f s each, %zu warm-up failures\n",
      servers, timeouts.connect_timeout_s * 1000, timeouts.request_timeout_s * 1000, periods, period_s, warm_failures);
  auto print = [&](const char* what, const PeriodFigures& f) {
    std::printf(
        "  %-38s CPU %7.2f ms per period = %5.2f %% of one core at a %.1f s period; wall %6.2f ms; "
        "%zu failures\n",
        what, f.cpu_s_per_period * 1000, 100 * f.cpu_s_per_period / period_s, period_s, f.wall_s_per_period * 1000,
        f.failures);
  };
  print("reads (GET /v1/readings/server)", reads);
  print("reads + a ceiling to every server", reads_and_sends);
  print("reads through libcurl (32 threads)", curl_reads);
  std::printf("libcurl / this transport, reads: %.1fx the CPU\n", curl_reads.cpu_s_per_period / reads.cpu_s_per_period);
  const bool ok = reads.failures == 0 && reads_and_sends.failures == 0;
  const bool goal = 100 * reads_and_sends.cpu_s_per_period / period_s < 5.0;
  std::printf("goal (< 5 %% of one core, reads + sends): %s\n", goal ? "met" : "NOT met");
  made->reset();  // connections closed before the agents go
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  return ok ? 0 : 1;
}
