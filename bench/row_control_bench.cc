// One period of the live POLCA row controller (issue 13) for a 1,000-server row: every server's
// power read (GET /v1/readings) and, in the worst case, a ceiling sent to every server (PUT
// /v1/ceilings), through RowAgents with the timeouts of a 1 s telemetry period. The controller's
// CPU time per period (getrusage of this process: user + system) is reported as a percentage of one
// core at that period; the goal is under 5 %.
//
// The agents are fakes that answer as an 8-GPU agent does, in a child process (so that their CPU
// time is not the controller's): one epoll thread listening on a few ports of 127.0.0.1, answering
// every server over its own keep-alive connection, as a row of real agents would (one each).
// Every loop is bounded.
//
//   build/bench/wattcut_row_control_bench [--servers 1000] [--periods 10] [--period-s 1] [--ports 8] [--threads N]
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
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

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

// What an 8-GPU agent answers to GET /v1/readings (its fields, its size: about 1.5 KB).
std::string ReadingsBody(uint64_t n) {
  json gpus = json::array();
  double gpu_w = 0;
  for (int i = 0; i < 8; ++i) {
    double power_w = 250 + static_cast<double>((n * 7 + i * 13) % 150);
    gpu_w += power_w;
    gpus.push_back({{"index", i},
                    {"power_w", power_w},
                    {"energy_mj", 123456789 + n * 1000 + i},
                    {"sm_clock_mhz", 1410},
                    {"power_limit_w", 400.0},
                    {"errors", json::object()}});
  }
  json server = {{"power_w", gpu_w + 1700},
                 {"gpu_power_w", gpu_w},
                 {"non_gpu_power_w", 1700.0},
                 {"source", "model"},
                 {"redfish_age_s", nullptr}};
  return json{{"time_s", 1.7e9 + static_cast<double>(n)}, {"gpus", gpus}, {"server", server}}.dump();
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
  const bool readings = pending.rfind("GET /v1/readings", 0) == 0;
  const bool ceilings = pending.rfind("PUT /v1/ceilings", 0) == 0;
  pending.erase(0, header_end + 4 + content_length);
  int status = 200;
  std::string content;
  if (readings) {
    content = ReadingsBody(answered++);
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

// The child: fake agents on `ports` ports of 127.0.0.1, one epoll thread, until the parent goes.
// (Not httplib: its server wakes each idle keep-alive connection's thread every millisecond, which
// would load the machine the controller is measured on.) Writes the ports to `ready_fd`.
[[noreturn]] void ServeFakeAgents(int ports, int ready_fd) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  const int epoll = ::epoll_create1(0);
  std::vector<int> listeners;
  std::string ports_text;
  for (int p = 0; p < ports; ++p) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
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
  int ports = 8;
  int threads = 0;  // RowAgents' default
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--servers")
      servers = std::atoi(argv[i + 1]);
    else if (flag == "--periods")
      periods = std::atoi(argv[i + 1]);
    else if (flag == "--period-s")
      period_s = std::atof(argv[i + 1]);
    else if (flag == "--ports")
      ports = std::atoi(argv[i + 1]);
    else if (flag == "--threads")
      threads = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "unknown flag %s\n", argv[i]);
      return 2;
    }
  }
  if (servers < 1 || servers > 100000 || periods < 1 || periods > 1000 || period_s <= 0 || period_s > 60 || ports < 1 ||
      ports > 64) {
    std::fprintf(stderr, "expected --servers 1..100000 --periods 1..1000 --period-s (0,60] --ports 1..64\n");
    return 2;
  }

  // The fake agents first, before this process has any thread.
  int ready[2];
  if (::pipe(ready) != 0) return 1;
  pid_t child = ::fork();
  if (child < 0) return 1;
  if (child == 0) {
    ::close(ready[0]);
    ServeFakeAgents(ports, ready[1]);
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
  if (static_cast<int>(agent_ports.size()) != ports) {
    std::fprintf(stderr, "the fake agents did not start\n");
    ::kill(child, SIGKILL);
    return 1;
  }

  std::vector<RowServer> row;
  for (int s = 0; s < servers; ++s) {
    row.push_back(RowServer{"server-" + std::to_string(s),
                            "http://127.0.0.1:" + std::to_string(agent_ports[static_cast<size_t>(s % ports)]),
                            s % 2 == 0 ? wattcut::polca::Priority::kLow : wattcut::polca::Priority::kHigh, s + 1});
  }
  const AgentTimeouts timeouts = AgentTimeouts::ForPeriod(period_s);
  auto made = RowAgents::Create(row, "bench-row-token-0123456789", timeouts, static_cast<size_t>(std::max(threads, 0)));
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
  auto run = [&](bool send) {
    PeriodFigures figures;
    const double cpu_start = CpuSeconds();
    const Clock::time_point start = Clock::now();
    double busy_wall_s = 0;
    for (int p = 0; p < periods; ++p) {
      const Clock::time_point period_start =
          start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(p * period_s));
      std::this_thread::sleep_until(period_start);
      const Clock::time_point busy_start = Clock::now();
      for (const auto& sample : agents.ReadAll(deadline())) figures.failures += sample.ok() ? 0 : 1;
      if (send) {
        for (const auto& status : agents.SendAll(every_server, deadline())) figures.failures += status.ok() ? 0 : 1;
      }
      busy_wall_s += std::chrono::duration<double>(Clock::now() - busy_start).count();
    }
    figures.cpu_s_per_period = (CpuSeconds() - cpu_start) / periods;
    figures.wall_s_per_period = busy_wall_s / periods;
    return figures;
  };
  const PeriodFigures reads = run(false);
  const PeriodFigures reads_and_sends = run(true);

  std::printf(
      "row of %d servers (fake 8-GPU agents on %d loopback ports, another process), %zu threads, "
      "timeouts %.0f ms connect / %.0f ms request, %d periods of %.1f s each, %zu warm-up failures\n",
      servers, ports, agents.threads(), timeouts.connect_timeout_s * 1000, timeouts.request_timeout_s * 1000, periods,
      period_s, warm_failures);
  auto print = [&](const char* what, const PeriodFigures& f) {
    std::printf(
        "  %-38s CPU %7.2f ms per period = %5.2f %% of one core at a %.1f s period; wall %6.2f ms; "
        "%zu failures\n",
        what, f.cpu_s_per_period * 1000, 100 * f.cpu_s_per_period / period_s, period_s, f.wall_s_per_period * 1000,
        f.failures);
  };
  print("reads (GET /v1/readings x servers)", reads);
  print("reads + a ceiling to every server", reads_and_sends);
  const bool ok = reads.failures == 0 && reads_and_sends.failures == 0;
  const bool goal = 100 * reads_and_sends.cpu_s_per_period / period_s < 5.0;
  std::printf("goal (< 5 %% of one core, reads + sends): %s\n", goal ? "met" : "NOT met");
  made->reset();  // connections closed before the agents go
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  return ok ? 0 : 1;
}
