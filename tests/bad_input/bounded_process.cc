#include "tests/bad_input/bounded_process.h"

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "wattcut/base/file_text_testing.h"

namespace wattcut::testing {
namespace {

// In the child, between fork and exec: only async-signal-safe calls.
[[noreturn]] void ExecBounded(const std::vector<std::string>& argv, const ResourceBounds& bounds, int out_fd,
                              int err_fd) {
  const rlimit as{bounds.address_space_bytes, bounds.address_space_bytes};
  const rlimit cpu{bounds.cpu_seconds, bounds.cpu_seconds};
  const rlimit core{0, 0};
  setrlimit(RLIMIT_AS, &as);
  setrlimit(RLIMIT_CPU, &cpu);
  setrlimit(RLIMIT_CORE, &core);
  // A child never outlives the test that started it, even when the test crashes.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  const int in_fd = open("/dev/null", O_RDONLY);
  dup2(in_fd, STDIN_FILENO);
  dup2(out_fd, STDOUT_FILENO);
  dup2(err_fd, STDERR_FILENO);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  execv(args[0], args.data());
  _exit(127);
}

}  // namespace

std::string BoundedResult::Describe() const {
  if (signal != 0) return "signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  return "exit " + std::to_string(exit_code);
}

BoundedResult RunBounded(const std::vector<std::string>& argv, const ResourceBounds& bounds) {
  char pattern[] = "/tmp/wattcut-bounded-XXXXXX";
  const std::string dir = mkdtemp(pattern) ? pattern : "/tmp";
  const std::string out_path = dir + "/out", err_path = dir + "/err";
  BoundedResult result;
  const int out_fd = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  const int err_fd = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  const pid_t pid = fork();
  if (pid == 0) ExecBounded(argv, bounds, out_fd, err_fd);
  close(out_fd);
  close(err_fd);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  } else if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  }
  result.out = ReadFileText(out_path);
  result.err = ReadFileText(err_path);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return result;
}

BoundedChild::BoundedChild(const std::vector<std::string>& argv, const ResourceBounds& bounds,
                           const std::string& output_path) {
  const int fd = open(output_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  pid_ = fork();
  if (pid_ == 0) ExecBounded(argv, bounds, fd, fd);
  close(fd);
}

BoundedChild::~BoundedChild() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
}

void BoundedChild::Reap(int status) {
  if (WIFSIGNALED(status)) end_signal_ = WTERMSIG(status);
  if (WIFEXITED(status)) exit_code_ = WEXITSTATUS(status);
  pid_ = -1;
}

bool BoundedChild::Alive() {
  if (pid_ <= 0) return false;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == pid_) {
    Reap(status);
    return false;
  }
  return true;
}

std::string BoundedChild::Stop() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    Reap(status);
  }
  BoundedResult r;
  r.signal = end_signal_;
  r.exit_code = exit_code_;
  return r.Describe();
}

}  // namespace wattcut::testing
