#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "wattcut/gpu/open_backend.h"
#include "wattcut/runtime/frequency_setter.h"
#include "wattcut/runtime/watchdog_protocol.h"

namespace wattcut {
namespace watchdog {
namespace {

void CopyMessage(char* out, const std::string& message) {
  const size_t n = std::min(message.size(), static_cast<size_t>(kErrorSize - 1));
  std::memcpy(out, message.data(), n);
  out[n] = '\0';
}

void SetLastError(Shared& shared, const std::string& message) {
  shared.error_seq.fetch_add(1);
  CopyMessage(shared.last_error, message);
  shared.error_seq.fetch_add(1);
}

void WriteAll(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

// A pollable fd that becomes readable when the parent exits (pidfd), or -1 on kernels without it.
int ParentPidFd(pid_t parent) {
#ifdef SYS_pidfd_open
  const long fd = ::syscall(SYS_pidfd_open, parent, 0);
  return fd < 0 ? -1 : static_cast<int>(fd);
#else
  (void)parent;
  return -1;
#endif
}

}  // namespace

int RunWatchdog(int argc, char** argv) {
  int gpu = 0;
  long poll_interval_us = 0;
  bool dry_run = false, require_memory_lock = false;
  std::string library = nvml::kDefaultLibraryName;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--gpu" && i + 1 < argc) {
      gpu = std::atoi(argv[++i]);
    } else if (arg == "--nvml-library" && i + 1 < argc) {
      library = argv[++i];
    } else if (arg == "--poll-interval-us" && i + 1 < argc) {
      poll_interval_us = std::atol(argv[++i]);
    } else if (arg == "--dry-run") {
      dry_run = true;
    } else if (arg == "--require-memory-lock") {
      require_memory_lock = true;
    } else {
      std::cerr << "wattcut-freq-setter: unknown argument '" << arg
                << "' (this program is started by wattcut's frequency setter)\n";
      return 2;
    }
  }
  const pid_t parent = ::getppid();
  // SCHED_BATCH: a fair share of the CPU like any process, but a wake-up does not preempt the
  // training thread that woke it (it runs on an idle core, or at the next tick).
  sched_param batch{};
  ::sched_setscheduler(0, SCHED_BATCH, &batch);
  // SIGINT is the training job's to handle (its exit closes our pipe); SIGTERM/SIGHUP mean reset and go.
  ::signal(SIGINT, SIG_IGN);
  ::signal(SIGPIPE, SIG_IGN);
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGHUP);
  ::sigprocmask(SIG_BLOCK, &mask, nullptr);
  const int signal_fd = ::signalfd(-1, &mask, SFD_CLOEXEC);

  void* page = ::mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED, kSharedFd, 0);
  if (page == MAP_FAILED) {
    WriteAll(kReadyFd, "error: wattcut-freq-setter: cannot map the shared page (not started by wattcut?)");
    return 2;
  }
  Shared& shared = *static_cast<Shared*>(page);

  BackendOptions options;
  options.kind = "nvml";
  options.nvml_library = library;
  options.dry_run = dry_run;
  auto opened = OpenBackend(options);
  if (!opened.ok()) {
    WriteAll(kReadyFd, "error: " + opened.error().message);
    return 1;
  }
  GpuBackend& backend = **opened;
  auto count = backend.DeviceCount();
  if (Status s = count.ok() ? CheckGpuIndex(gpu, *count) : Status(count.error()); !s.ok()) {
    WriteAll(kReadyFd, "error: " + s.error().message);
    return 1;
  }
  if (Status memory = LockMemoryClockToMax(backend, gpu); !memory.ok()) {
    if (require_memory_lock) {
      WriteAll(kReadyFd, "error: " + memory.error().message);
      return 1;
    }
    SetLastError(shared, "memory clock not locked: " + memory.error().message);
  }
  WriteAll(kReadyFd, "ok");
  ::close(kReadyFd);

  const int parent_fd = ParentPidFd(parent);
  int applied = 0;
  uint64_t seen_seq = 0;
  std::vector<pollfd> fds = {{kWakeFd, POLLIN, 0}, {signal_fd, POLLIN, 0}};
  if (parent_fd >= 0) fds.push_back({parent_fd, POLLIN, 0});
  while (true) {
    // Polling: wake every interval and look at the request. Otherwise announce the sleep, then
    // look again for a request that raced with the announcement: the training process sends a
    // wake-up byte only to a sleeping watchdog (see SetFrequency). Without a pidfd, look at the
    // parent every 200 ms at least (the socket's EOF is the main signal anyway).
    bool pending = false;
    if (poll_interval_us <= 0) {
      shared.worker_sleeping.store(1);
      pending = shared.request_seq.load() != seen_seq;
    }
    timespec timeout{};
    if (poll_interval_us > 0) {
      timeout = {poll_interval_us / 1000000, (poll_interval_us % 1000000) * 1000};
    } else if (parent_fd < 0) {
      timeout = {0, 200 * 1000 * 1000};
    }
    const bool forever = !pending && poll_interval_us <= 0 && parent_fd >= 0;
    const int rc = ::ppoll(fds.data(), fds.size(), forever ? nullptr : &timeout, nullptr);
    shared.worker_sleeping.store(0);
    if (rc < 0 && errno != EINTR) break;
    if (::getppid() != parent) break;
    if (fds[1].revents & POLLIN) break;                                  // SIGTERM / SIGHUP
    if (fds.size() > 2 && (fds[2].revents & (POLLIN | POLLHUP))) break;  // parent exited
    if (fds[0].revents & (POLLIN | POLLHUP)) {
      char buffer[256];
      if (::read(kWakeFd, buffer, sizeof buffer) == 0) break;  // EOF: the training process stopped us or died
    }
    const uint64_t seq = shared.request_seq.load(std::memory_order_acquire);
    if (seq == seen_seq) continue;
    seen_seq = seq;
    const int want = shared.requested_mhz.load(std::memory_order_relaxed);
    shared.requested.fetch_add(1);
    if (want == applied || want <= 0) {
      shared.skipped.fetch_add(1);
      shared.last_ok.store(1);
    } else if (Status s = backend.LockGpuClocks(gpu, want, want); s.ok()) {
      applied = want;
      shared.applied_mhz.store(want);
      shared.applied.fetch_add(1);
      shared.last_ok.store(1);
    } else {
      shared.failed.fetch_add(1);
      SetLastError(shared, s.error().message);
      shared.last_ok.store(0);
    }
    shared.handled_seq.store(seq, std::memory_order_release);
  }
  Status reset = backend.ResetGpuClocks(gpu);
  Status memory = backend.ResetMemoryClocks(gpu);
  shared.applied_mhz.store(0);
  if (reset.ok() && memory.ok()) {
    shared.reset_ok.store(1);
    return 0;
  }
  const std::string message = !reset.ok() ? reset.error().message : memory.error().message;
  CopyMessage(shared.reset_error, message);
  shared.reset_ok.store(-1);
  std::cerr << "wattcut-freq-setter: could not reset GPU " << gpu << " clocks: " << message << "\n";
  return 1;
}

}  // namespace watchdog

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
    if (freq_mhz == last_requested_ || wake_fd_ < 0) return;
    last_requested_ = freq_mhz;
    shared_->requested_mhz.store(freq_mhz, std::memory_order_relaxed);
    shared_->request_seq.fetch_add(1);  // seq_cst: ordered before the look at worker_sleeping
    // A busy watchdog reads the latest request when it next looks; only a sleeping one needs a
    // wake-up byte (and a system call).
    if (shared_->worker_sleeping.exchange(0) == 0) return;
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
    if (shared_->last_ok.load() == 0) return Error{ReadLastError()};
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
      stop_status_ = Error{"the frequency watchdog (pid " + std::to_string(pid_) + ") ended without resetting the clocks"};
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
    s.last_error = ReadLastError();
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

  std::string ReadLastError() const {
    char copy[watchdog::kErrorSize];
    uint32_t before, after;
    do {
      before = shared_->error_seq.load();
      std::memcpy(copy, shared_->last_error, sizeof copy);
      after = shared_->error_seq.load();
    } while (before != after || (before & 1u) != 0);
    copy[watchdog::kErrorSize - 1] = '\0';
    return copy;
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

  std::vector<std::string> args = {helper, "--gpu", std::to_string(options.gpu)};
  if (!options.nvml_library.empty()) args.insert(args.end(), {"--nvml-library", options.nvml_library});
  if (options.dry_run) args.push_back("--dry-run");
  if (options.require_memory_lock) args.push_back("--require-memory-lock");
  args.insert(args.end(), {"--poll-interval-us", std::to_string(std::lround(options.poll_interval_s * 1e6))});
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
  if (reply != "ok") {
    ::close(wake[1]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    ::munmap(page, sizeof(watchdog::Shared));
    if (reply.rfind("error: ", 0) == 0) return Error{reply.substr(7)};
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
