#include "bench/long_poll_round.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

namespace wattcut::bench {

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

std::string StatusField(pid_t pid, const std::string& name) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(name + ":", 0) == 0) return line.substr(name.size() + 1);
  }
  return "";
}

bool SendAll(int fd, const std::string& text) {
  size_t sent = 0;
  for (int tries = 0; sent < text.size() && tries < 1000; ++tries) {
    const ssize_t n = ::send(fd, text.data() + sent, text.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
    } else if (n < 0 && errno != EINTR && errno != EAGAIN) {
      return false;
    } else if (n < 0 && errno == EAGAIN) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  return sent == text.size();
}

// A whole response in `got` (headers and a Content-Length body): its length, else 0.
size_t ResponseLength(const std::string& got) {
  const size_t end = got.find("\r\n\r\n");
  if (end == std::string::npos) return 0;
  const size_t at = got.find("Content-Length: ");
  const size_t length = at == std::string::npos || at > end ? 0 : std::strtoul(got.c_str() + at + 16, nullptr, 10);
  return got.size() >= end + 4 + length ? end + 4 + length : 0;
}

}  // namespace

double CpuSeconds(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  if (text.rfind(')') == std::string::npos) return 0;
  std::istringstream fields(text.substr(text.rfind(')') + 2));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i == 14) utime = std::strtoull(field.c_str(), nullptr, 10);
    if (i == 15) stime = std::strtoull(field.c_str(), nullptr, 10);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

double PeakMb(pid_t pid) { return std::strtod(StatusField(pid, "VmHWM").c_str(), nullptr) / 1024; }

double ResidentMb(pid_t pid) { return std::strtod(StatusField(pid, "VmRSS").c_str(), nullptr) / 1024; }

int Threads(pid_t pid) { return std::atoi(StatusField(pid, "Threads").c_str()); }

LongPollRounds::LongPollRounds(int port, std::string job_path, int ranks, pid_t server_pid,
                               std::function<int()> waiting_now)
    : port_(port),
      job_path_(std::move(job_path)),
      ranks_(ranks),
      server_pid_(server_pid),
      waiting_now_(std::move(waiting_now)) {}

LongPollRounds::~LongPollRounds() {
  for (int fd : fds_) ::close(fd);
}

bool LongPollRounds::ConnectUpTo(size_t count, std::string& error) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port_));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  while (fds_.size() < count) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      error = std::string("socket: ") + std::strerror(errno) + " (raise ulimit -n)";
      return false;
    }
    if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
      error = std::string("connect: ") + std::strerror(errno);
      ::close(fd);
      return false;
    }
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    fds_.push_back(fd);
  }
  return true;
}

LongPollRound LongPollRounds::Run() {
  LongPollRound round;
  auto fail = [&round](const std::string& why) {
    ++round.failed;
    if (round.first_failure.empty()) round.first_failure = why;
  };
  const double cpu_before = CpuSeconds(server_pid_);
  round.server_rss_before_mb = ResidentMb(server_pid_);
  const Clock::time_point began = Clock::now();
  auto request = [this](int rank) {
    return "GET /schedule/" + job_path_ + "?rank=" + std::to_string(rank) + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  };
  // Each rank connects (the first round) and asks at once, so that no connection idles past the
  // server's keep-alive timeout while the others connect; the last rank waits.
  std::string error;
  for (int rank = 0; rank + 1 < ranks_; ++rank) {
    if (!ConnectUpTo(static_cast<size_t>(rank) + 1, error)) {
      round.failed = ranks_;
      round.first_failure = error;
      return round;
    }
    if (!SendAll(fds_[static_cast<size_t>(rank)], request(rank))) fail("rank " + std::to_string(rank) + ": send");
  }
  if (!ConnectUpTo(static_cast<size_t>(ranks_), error)) {
    round.failed = ranks_;
    round.first_failure = error;
    return round;
  }
  // Until the server counts every other rank waiting (bounded: 12,000 naps of 10 ms).
  for (int nap = 0; nap < 12000; ++nap) {
    round.waiting_seen = waiting_now_();
    if (round.waiting_seen >= ranks_ - 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  round.server_threads = Threads(server_pid_);
  round.server_rss_waiting_mb = ResidentMb(server_pid_);
  const Clock::time_point last_asked = Clock::now();
  if (!SendAll(fds_.back(), request(ranks_ - 1))) fail("the last rank: send");

  const int epoll_fd = ::epoll_create1(EPOLL_CLOEXEC);
  std::vector<std::string> got(static_cast<size_t>(ranks_));
  std::vector<bool> done(static_cast<size_t>(ranks_), false);
  for (int rank = 0; rank < ranks_; ++rank) {
    ::fcntl(fds_[static_cast<size_t>(rank)], F_SETFL, O_NONBLOCK);
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.u32 = static_cast<uint32_t>(rank);
    ::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fds_[static_cast<size_t>(rank)], &event);
  }
  int remaining = ranks_;
  Clock::time_point last_answer = Clock::now();
  const Clock::time_point give_up = Clock::now() + std::chrono::minutes(2);
  std::vector<epoll_event> events(1024);
  while (remaining > 0 && Clock::now() < give_up) {
    const int ready = ::epoll_wait(epoll_fd, events.data(), static_cast<int>(events.size()), 1000);
    for (int i = 0; i < ready; ++i) {
      const auto rank = static_cast<size_t>(events[static_cast<size_t>(i)].data.u32);
      char chunk[16384];
      for (;;) {
        const ssize_t n = ::recv(fds_[rank], chunk, sizeof(chunk), 0);
        if (n > 0) {
          got[rank].append(chunk, static_cast<size_t>(n));
          continue;
        }
        if (n == 0 && !done[rank]) {
          done[rank] = true;
          --remaining;
          fail("rank " + std::to_string(rank) + ": the server closed the connection: " + got[rank].substr(0, 200));
          ::epoll_ctl(epoll_fd, EPOLL_CTL_DEL, fds_[rank], nullptr);
        }
        break;
      }
      if (done[rank]) continue;
      const size_t length = ResponseLength(got[rank]);
      if (length == 0) continue;
      done[rank] = true;
      --remaining;
      last_answer = Clock::now();
      const std::string response = got[rank].substr(0, length);
      const std::string own = "\"rank\":" + std::to_string(rank);
      if (response.rfind("HTTP/1.1 200", 0) == 0 && response.find(own) != std::string::npos) {
        ++round.answered;
      } else {
        fail("rank " + std::to_string(rank) + ": " + response.substr(0, 300));
      }
    }
  }
  ::close(epoll_fd);
  for (int fd : fds_) ::fcntl(fd, F_SETFL, 0);
  if (remaining > 0) fail(std::to_string(remaining) + " ranks had no answer within two minutes");
  round.failed += remaining > 0 ? remaining - 1 : 0;
  round.all_answered_s = Seconds(began, last_answer);
  round.after_last_ask_s = Seconds(last_asked, last_answer);
  round.server_cpu_s = CpuSeconds(server_pid_) - cpu_before;
  return round;
}

}  // namespace wattcut::bench
