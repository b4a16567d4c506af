#include "wattcut/agent/process_watch.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace wattcut::agent {

namespace {

int PidfdOpen(int pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  errno = ENOSYS;
  return -1;
#endif
}

// Field 22 of /proc/PID/stat (the start time in clock ticks since boot); 0 when unreadable. The
// second field (the command) may hold spaces and parentheses: fields are counted after its last ')'.
unsigned long long StartTime(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t close = text.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(text.substr(close + 1));
  std::string field;
  for (int i = 3; i <= 22 && (fields >> field); ++i) {
    if (i == 22) return std::stoull(field);
  }
  return 0;
}

}  // namespace

ProcessWatch::ProcessWatch() {
  if (::pipe2(wake_fds_, O_CLOEXEC | O_NONBLOCK) != 0) wake_fds_[0] = wake_fds_[1] = -1;
}

ProcessWatch::~ProcessWatch() {
  for (auto& [pid, watched] : watched_) {
    if (watched.pidfd >= 0) ::close(watched.pidfd);
  }
  for (int fd : wake_fds_) {
    if (fd >= 0) ::close(fd);
  }
}

Status ProcessWatch::Watch(int pid) {
  if (pid <= 0) return Error::InvalidArgument("no process to watch (pid " + std::to_string(pid) + ")");
  MutexLock lock(mu_);
  if (watched_.count(pid) != 0) return Status::Ok();
  Watched watched;
  watched.pidfd = PidfdOpen(pid);
  if (watched.pidfd < 0) {
    if (errno == ESRCH) return Error::NotFound("process " + std::to_string(pid) + " has exited");
    watched.start_time = StartTime(pid);
    if (watched.start_time == 0) return Error::NotFound("process " + std::to_string(pid) + " has exited");
  } else {
    ::fcntl(watched.pidfd, F_SETFD, FD_CLOEXEC);
  }
  watched_.emplace(pid, watched);
  Wake();
  return Status::Ok();
}

void ProcessWatch::Retain(const std::set<int>& pids) {
  MutexLock lock(mu_);
  for (auto it = watched_.begin(); it != watched_.end();) {
    if (pids.count(it->first) != 0) {
      ++it;
      continue;
    }
    if (it->second.pidfd >= 0) ::close(it->second.pidfd);
    it = watched_.erase(it);
  }
}

size_t ProcessWatch::size() {
  MutexLock lock(mu_);
  return watched_.size();
}

bool ProcessWatch::Alive(int pid) {
  MutexLock lock(mu_);
  auto it = watched_.find(pid);
  if (it == watched_.end()) return true;
  if (it->second.pidfd >= 0) {
    pollfd fd{it->second.pidfd, POLLIN, 0};
    return ::poll(&fd, 1, 0) == 0;
  }
  return StartTime(pid) == it->second.start_time;
}

void ProcessWatch::WaitForExit(int timeout_ms) {
  std::vector<pollfd> fds;
  bool fallback = false;
  {
    MutexLock lock(mu_);
    if (wake_fds_[0] >= 0) fds.push_back({wake_fds_[0], POLLIN, 0});
    for (const auto& [pid, watched] : watched_) {
      if (watched.pidfd >= 0) {
        fds.push_back({watched.pidfd, POLLIN, 0});
      } else {
        fallback = true;
      }
    }
  }
  // The /proc fallback has nothing to wait on: it is checked at every wake-up, at most 100 ms apart.
  const int wait_ms = fallback && timeout_ms > 100 ? 100 : timeout_ms;
  int ready;
  do {
    ready = ::poll(fds.data(), fds.size(), wait_ms);
  } while (ready < 0 && errno == EINTR);
  if (ready > 0 && wake_fds_[0] >= 0 && (fds[0].revents & POLLIN) != 0) {
    char drain[64];
    while (::read(wake_fds_[0], drain, sizeof drain) > 0) {
    }
  }
}

void ProcessWatch::Wake() {
  if (wake_fds_[1] >= 0) {
    const char byte = 1;
    [[maybe_unused]] ssize_t n = ::write(wake_fds_[1], &byte, 1);
  }
}

}  // namespace wattcut::agent
