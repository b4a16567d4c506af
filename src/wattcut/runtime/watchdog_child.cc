#include "wattcut/runtime/watchdog_child.h"

#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <iostream>
#include <string>
#include <vector>

#include "wattcut/gpu/open_backend.h"

namespace wattcut::watchdog {
namespace {

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

Status WatchdogChild::Start(bool require_memory_lock) {
  auto count = backend_.DeviceCount();
  if (Status s = count.ok() ? CheckGpuIndex(gpu_, *count) : Status(count.error()); !s.ok()) return s;
  if (Status memory = LockMemoryClockToMax(backend_, gpu_); !memory.ok()) {
    if (require_memory_lock) return memory;
    WriteLastError(shared_, "memory clock not locked: " + memory.error().message);
  }
  return Status::Ok();
}

void WatchdogChild::Serve(const ChildWakeups& wakeups, long poll_interval_us) {
  uint64_t seen_seq = 0;
  std::vector<pollfd> fds = {{wakeups.wake_fd, POLLIN, 0}, {wakeups.stop_fd, POLLIN, 0}};
  if (wakeups.parent_exit_fd >= 0) fds.push_back({wakeups.parent_exit_fd, POLLIN, 0});
  while (true) {
    // Polling: wake every interval and look at the request. Otherwise announce the sleep, then
    // look again for a request that raced with the announcement: the training process sends a
    // wake-up byte only to a sleeping watchdog (see PostRequest). Without a pidfd, look at the
    // parent every 200 ms at least (the socket's EOF is the main signal anyway).
    bool pending = false;
    if (poll_interval_us <= 0) {
      shared_.worker_sleeping.store(1);
      pending = shared_.request_seq.load() != seen_seq;
    }
    timespec timeout{};
    if (poll_interval_us > 0) {
      timeout = {poll_interval_us / 1000000, (poll_interval_us % 1000000) * 1000};
    } else if (wakeups.parent_exit_fd < 0) {
      timeout = {0, 200 * 1000 * 1000};
    }
    const bool forever = !pending && poll_interval_us <= 0 && wakeups.parent_exit_fd >= 0;
    const int rc = ::ppoll(fds.data(), fds.size(), forever ? nullptr : &timeout, nullptr);
    shared_.worker_sleeping.store(0);
    if (rc < 0 && errno != EINTR) break;
    if (::getppid() != wakeups.parent) break;
    if (fds[1].revents & POLLIN) break;                                  // SIGTERM / SIGHUP
    if (fds.size() > 2 && (fds[2].revents & (POLLIN | POLLHUP))) break;  // parent exited
    if (fds[0].revents & (POLLIN | POLLHUP)) {
      char buffer[256];
      // EOF: the training process stopped us or died
      if (::read(wakeups.wake_fd, buffer, sizeof buffer) == 0) break;
    }
    const uint64_t seq = shared_.request_seq.load(std::memory_order_acquire);
    if (seq == seen_seq) continue;
    seen_seq = seq;
    const int want = shared_.requested_mhz.load(std::memory_order_relaxed);
    shared_.requested.fetch_add(1);
    if (want == applied_mhz_ || want <= 0) {
      shared_.skipped.fetch_add(1);
      shared_.last_ok.store(1);
    } else if (Status s = backend_.LockGpuClocks(gpu_, want, want); s.ok()) {
      applied_mhz_ = want;
      shared_.applied_mhz.store(want);
      shared_.applied.fetch_add(1);
      shared_.last_ok.store(1);
    } else {
      shared_.failed.fetch_add(1);
      WriteLastError(shared_, s.error().message);
      shared_.last_ok.store(0);
    }
    shared_.handled_seq.store(seq, std::memory_order_release);
  }
}

Status WatchdogChild::ResetClocks() {
  Status reset = backend_.ResetGpuClocks(gpu_);
  Status memory = backend_.ResetMemoryClocks(gpu_);
  shared_.applied_mhz.store(0);
  if (reset.ok() && memory.ok()) {
    shared_.reset_ok.store(1);
    return Status::Ok();
  }
  Status failed = !reset.ok() ? reset : memory;
  CopyErrorText(shared_.reset_error, failed.error().message);
  shared_.reset_ok.store(-1);
  return failed;
}

int RunWatchdog(int argc, char** argv) {
  auto arguments = ParseHelperCommandLine(argc, argv);
  if (!arguments.ok()) {
    std::cerr << "wattcut-freq-setter: " << arguments.error().message << "\n";
    return 2;
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
    WriteAll(kReadyFd, ReadyReply(Error{"wattcut-freq-setter: cannot map the shared page (not started by wattcut?)"}));
    return 2;
  }
  Shared& shared = *static_cast<Shared*>(page);

  BackendOptions options;
  options.kind = "nvml";
  options.nvml_library = arguments->nvml_library.empty() ? nvml::kDefaultLibraryName : arguments->nvml_library;
  options.dry_run = arguments->dry_run;
  auto opened = OpenBackend(options);
  if (!opened.ok()) {
    WriteAll(kReadyFd, ReadyReply(opened.error()));
    return 1;
  }
  WatchdogChild child(**opened, arguments->gpu, shared);
  if (Status started = child.Start(arguments->require_memory_lock); !started.ok()) {
    WriteAll(kReadyFd, ReadyReply(started));
    return 1;
  }
  WriteAll(kReadyFd, ReadyReply(Status::Ok()));
  ::close(kReadyFd);

  child.Serve({.wake_fd = kWakeFd, .stop_fd = signal_fd, .parent = parent, .parent_exit_fd = ParentPidFd(parent)},
              arguments->poll_interval_us);
  if (Status reset = child.ResetClocks(); !reset.ok()) {
    std::cerr << "wattcut-freq-setter: could not reset GPU " << arguments->gpu << " clocks: " << reset.error().message
              << "\n";
    return 1;
  }
  return 0;
}

}  // namespace wattcut::watchdog
