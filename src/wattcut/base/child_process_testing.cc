#include "wattcut/base/child_process_testing.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <thread>

namespace wattcut::testing {

namespace {

int ExitStatus(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }

}  // namespace

ChildProcess StartChild(const std::vector<std::string>& args, const std::string& marker,
                        const std::vector<std::string>& environment, const std::function<void()>& in_child) {
  ChildProcess child;
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return child;
  // Built before the fork: the child must not allocate.
  std::vector<std::string> argv_text = args;
  std::vector<char*> argv;
  for (auto& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_text = environment;
  std::vector<char*> env_values;
  for (auto& e : env_text) env_values.push_back(e.data());
  const pid_t pid = fork();
  if (pid == 0) {
    if (in_child) in_child();
    dup2(out[1], STDOUT_FILENO);
    dup2(out[1], STDERR_FILENO);
    close(out[0]);
    close(out[1]);
    for (char* e : env_values) putenv(e);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(out[1]);
  if (pid < 0) {
    close(out[0]);
    return child;
  }
  std::string line;
  char c = 0;
  bool ready = false;
  while (read(out[0], &c, 1) == 1) {
    if (c != '\n') {
      line += c;
      continue;
    }
    if (line.find(marker) != std::string::npos) {
      child.ready_line = line;
      ready = true;
      break;
    }
    child.output += line + "\n";
    line.clear();
  }
  if (!ready) {
    child.output += line;
    int status = 0;
    waitpid(pid, &status, 0);
    child.exit_status = ExitStatus(status);
    close(out[0]);
    return child;
  }
  child.pid = pid;
  const int fd = out[0];
  std::thread([fd] {
    char buffer[4096];
    while (read(fd, buffer, sizeof(buffer)) > 0) {
    }
    close(fd);
  }).detach();
  return child;
}

int StopChild(pid_t pid, int signal) {
  if (pid <= 0) return -1;
  kill(pid, signal);
  int status = 0;
  waitpid(pid, &status, 0);
  return ExitStatus(status);
}

}  // namespace wattcut::testing
