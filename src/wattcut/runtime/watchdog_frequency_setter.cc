// The training process's side of the frequency watchdog (watchdog_protocol.h): finds the
// wattcut-freq-setter executable, starts it, posts requests and reads its answers. The watchdog's
// own side is watchdog_child.cc.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "wattcut/runtime/frequency_setter.h"
#include "wattcut/runtime/watchdog_protocol.h"

namespace wattcut {
namespace {

std::string FindHelper(const std::string& explicit_path) {
  if (!explicit_path.empty()) return explicit_path;
  if (const char* env = std::getenv("WATTCUT_FREQ_SETTER"); env != nullptr && *env != '\0') return env;
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto beside = self.parent_path() / "wattcut-freq-setter";
    if (::access(beside.c_str(), X_OK) == 0) return beside.string();
  }
#ifdef WATTCUT_FREQ_SETTER_BUILD_PATH
  return WATTCUT_FREQ_SETTER_BUILD_PATH;
#else
  return "wattcut-freq-setter";
#endif
}

class WatchdogFrequencySetter final : public FrequencySetter {
 public:
  WatchdogFrequencySetter(pid_t pid, watchdog::Shared* shared, int wake_fd)
      : pid_(pid), shared_(shared), wake_fd_(wake_fd) {}
  ~WatchdogFrequencySetter() override {
    (void)Stop();
    ::munmap(shared_, sizeof(watchdog::Shared));
  }

  void SetFrequency(int freq_mhz) override {
    if (wake_fd_ < 0) return;
    // The same clock again is nothing to do, unless locking it failed: then it is tried again.
    if (freq_mhz == last_requested_ && shared_->last_ok.load(std::memory_order_relaxed) != 0) return;
    last_requested_ = freq_mhz;
    if (!watchdog::PostRequest(*shared_, freq_mhz)) return;  // a busy watchdog needs no wake-up
    const char byte = 1;
    // Non-blocking: a full socket buffer already holds a wake-up, and the watchdog reads the latest
    // value. MSG_NOSIGNAL: a dead watchdog must not SIGPIPE the training process.
    [[maybe_unused]] const ssize_t n = ::send(wake_fd_, &byte, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
  }

  Status WaitUntilApplied() override {
    const uint64_t target = shared_->request_seq.load(std::memory_order_acquire);
    while (shared_->handled_seq.load(std::memory_order_acquire) < target) {
      if (Exited()) return Error{"the frequency watchdog (pid " + std::to_string(pid_) + ") exited"};
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    if (shared_->last_ok.load() == 0) return Error{watchdog::ReadLastError(*shared_)};
    return Status::Ok();
  }

  Status Stop() override {
    if (stopped_) return stop_status_;
    stopped_ = true;
    if (wake_fd_ >= 0) ::close(wake_fd_);
    wake_fd_ = -1;
    int status = 0;
    if (!exited_) {
      while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
      exited_ = true;
    }
    if (shared_->reset_ok.load() == 1) {
      stop_status_ = Status::Ok();
    } else if (shared_->reset_ok.load() == -1) {
      stop_status_ = Error{std::string("the frequency watchdog could not reset the clocks: ") + shared_->reset_error};
    } else {
      stop_status_ =
          Error{"the frequency watchdog (pid " + std::to_string(pid_) + ") ended without resetting the clocks"};
    }
    return stop_status_;
  }

  FrequencySetterStats stats() const override {
    FrequencySetterStats s;
    s.requested = shared_->requested.load();
    s.applied = shared_->applied.load();
    s.skipped = shared_->skipped.load();
    s.failed = shared_->failed.load();
    s.applied_mhz = shared_->applied_mhz.load();
    s.last_error = watchdog::ReadLastError(*shared_);
    return s;
  }

  pid_t pid() const { return pid_; }

 private:
  bool Exited() {
    if (exited_) return true;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) exited_ = true;
    return exited_;
  }

  pid_t pid_;
  watchdog::Shared* shared_;
  int wake_fd_;
  int last_requested_ = 0;
  bool stopped_ = false;
  bool exited_ = false;
  Status stop_status_;
};

}  // namespace

Result<std::unique_ptr<FrequencySetter>> StartWatchdogFrequencySetter(const WatchdogOptions& options) {
  const std::string helper = FindHelper(options.helper_path);
  if (::access(helper.c_str(), X_OK) != 0) {
    return Error{"cannot run the frequency watchdog '" + helper +
                 "': not found or not executable (set WATTCUT_FREQ_SETTER to its path)"};
  }
  const int shared_fd = ::memfd_create("wattcut-freq-setter", MFD_CLOEXEC);
  if (shared_fd < 0 || ::ftruncate(shared_fd, sizeof(watchdog::Shared)) != 0) {
    return Error{std::string("cannot create the watchdog's shared memory: ") + std::strerror(errno)};
  }
  void* page = ::mmap(nullptr, sizeof(watchdog::Shared), PROT_READ | PROT_WRITE, MAP_SHARED, shared_fd, 0);
  if (page == MAP_FAILED) {
    ::close(shared_fd);
    return Error{std::string("cannot map the watchdog's shared memory: ") + std::strerror(errno)};
  }
  auto* shared = new (page) watchdog::Shared{};
  // wake: a stream socket pair (the watchdog reads wake[0]; EOF when every copy of wake[1] is gone).
  int wake[2], ready[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, wake) != 0 || ::pipe2(ready, O_CLOEXEC) != 0) {
    return Error{std::string("cannot create the watchdog's pipes: ") + std::strerror(errno)};
  }
  ::shutdown(wake[1], SHUT_RD);

  const std::vector<std::string> helper_args =
      watchdog::HelperCommandLine({.gpu = options.gpu,
                                   .nvml_library = options.nvml_library,
                                   .dry_run = options.dry_run,
                                   .require_memory_lock = options.require_memory_lock,
                                   .poll_interval_us = std::lround(options.poll_interval_s * 1e6)});
  std::vector<std::string> args = {helper};
  args.insert(args.end(), helper_args.begin(), helper_args.end());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  const pid_t pid = ::fork();
  if (pid < 0) return Error{std::string("cannot fork the frequency watchdog: ") + std::strerror(errno)};
  if (pid == 0) {
    // Child: only async-signal-safe calls until exec.
    const int fds[3] = {::fcntl(shared_fd, F_DUPFD, 10), ::fcntl(wake[0], F_DUPFD, 10), ::fcntl(ready[1], F_DUPFD, 10)};
    if (::dup2(fds[0], watchdog::kSharedFd) < 0 || ::dup2(fds[1], watchdog::kWakeFd) < 0 ||
        ::dup2(fds[2], watchdog::kReadyFd) < 0) {
      ::_exit(127);
    }
    for (int fd : fds) ::close(fd);
    ::setpgid(0, 0);  // its own process group: a Ctrl-C or group kill of the job does not reach it
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(shared_fd);
  ::close(wake[0]);
  ::close(ready[1]);
  std::string reply;
  char buffer[512];
  ssize_t n;
  while ((n = ::read(ready[0], buffer, sizeof buffer)) != 0) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    reply.append(buffer, static_cast<size_t>(n));
  }
  ::close(ready[0]);
  if (std::optional<Status> started = watchdog::ParseReadyReply(reply); !started || !started->ok()) {
    ::close(wake[1]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    ::munmap(page, sizeof(watchdog::Shared));
    if (started) return started->error();
    return Error{"the frequency watchdog '" + helper + "' did not start (exit status " +
                 std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")"};
  }
  return std::unique_ptr<FrequencySetter>(new WatchdogFrequencySetter(pid, shared, wake[1]));
}

int WatchdogPid(const FrequencySetter& setter) {
  const auto* watchdog = dynamic_cast<const WatchdogFrequencySetter*>(&setter);
  return watchdog == nullptr ? 0 : watchdog->pid();
}

}  // namespace wattcut
