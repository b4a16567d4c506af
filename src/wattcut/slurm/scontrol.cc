#include "wattcut/slurm/scontrol.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "wattcut/base/printable_text.h"
#include "wattcut/base/steady_time.h"
#include "wattcut/slurm/admin_comment.h"

namespace wattcut::slurm {

namespace {

constexpr size_t kMaxOutputBytes = 1 << 20;

}  // namespace

Result<std::string> RunSlurmCommand(const std::string& command, const std::vector<std::string>& args,
                                    double timeout_s) {
  const std::string name = command.substr(command.rfind('/') + 1);
  const std::string what = name + " " + (args.empty() ? std::string() : args.front());
  // Standard output and standard error on pipes of their own: what a command warns about on
  // stderr while it succeeds (sacct about its database, scontrol about a configuration) must not
  // become part of the answer that is parsed, or of an AdminComment written back.
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return Error::Unavailable(what + ": cannot make a pipe: " + std::strerror(errno));
  if (::pipe2(err, O_CLOEXEC) != 0) {
    const int saved = errno;
    ::close(out[0]);
    ::close(out[1]);
    return Error::Unavailable(what + ": cannot make a pipe: " + std::strerror(saved));
  }
  std::vector<std::string> argv_text = {command};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int saved = errno;
    for (int fd : {out[0], out[1], err[0], err[1]}) ::close(fd);
    return Error::Unavailable(what + ": cannot fork: " + std::strerror(saved));
  }
  if (pid == 0) {
    ::dup2(out[1], STDOUT_FILENO);
    ::dup2(err[1], STDERR_FILENO);
    const int null = ::open("/dev/null", O_RDONLY);
    if (null >= 0) ::dup2(null, STDIN_FILENO);
    ::execv(command.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(out[1]);
  ::close(err[1]);
  std::string output, errors;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  std::string* texts[2] = {&output, &errors};
  bool timed_out = false;
  const double until_s = SteadyNowS() + timeout_s;
  while (fds[0].fd >= 0 || fds[1].fd >= 0) {
    const double left_s = until_s - SteadyNowS();
    if (left_s <= 0) {
      timed_out = true;
      break;
    }
    const int ready = ::poll(fds, 2, static_cast<int>(left_s * 1000) + 1);
    if (ready <= 0) continue;  // EINTR, or the time is re-checked above
    for (int k = 0; k < 2; ++k) {
      if (fds[k].fd < 0 || fds[k].revents == 0) continue;
      char buffer[4096];
      const ssize_t n = ::read(fds[k].fd, buffer, sizeof(buffer));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ::close(fds[k].fd);
        fds[k].fd = -1;  // poll skips it
        continue;
      }
      if (texts[k]->size() < kMaxOutputBytes) texts[k]->append(buffer, static_cast<size_t>(n));
    }
  }
  for (const pollfd& p : fds) {
    if (p.fd >= 0) ::close(p.fd);
  }
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) return Error::Unavailable(what + ": no answer within " + std::to_string(timeout_s) + " s (killed)");
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && ::access(command.c_str(), X_OK) != 0) {
    return Error::Unavailable(what + ": cannot run " + command + ": " + std::strerror(errno));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    // What it said about the failure: its stderr, or its output when it wrote nothing there.
    std::string said = errors.empty() ? output : errors;
    while (!said.empty() && (said.back() == '\n' || said.back() == ' ')) said.pop_back();
    return Error{what + " failed (status " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : 128) +
                 "): " + PrintableText(said, 300)};
  }
  return output;
}

Status RecordAdminComment(const std::string& scontrol, const std::string& job_id, const std::string& node,
                          const std::string& entry) {
  auto shown = RunSlurmCommand(scontrol, {"show", "job", "-o", job_id});
  if (!shown.ok()) return shown.error();
  const std::string comment = MergeAdminComment(AdminCommentOf(*shown), node, entry);
  auto updated = RunSlurmCommand(scontrol, {"update", "JobId=" + job_id, "AdminComment=" + comment});
  if (updated.ok()) return Status::Ok();
  if (updated.error().message.find("already finished") == std::string::npos) return updated.error();
  // A finished job: its record in accounting.
  const std::string folder = scontrol.substr(0, scontrol.rfind('/') + 1);
  auto stored = RunSlurmCommand(folder + "sacct", {"-n", "-P", "-X", "-j", job_id, "-o", "AdminComment"});
  if (!stored.ok()) {
    return Error{"the job has finished, and its accounting record cannot be read (" + stored.error().message + ")",
                 stored.error().code};
  }
  std::string existing = *stored;
  while (!existing.empty() && (existing.back() == '\n' || existing.back() == ' ')) existing.pop_back();
  auto written = RunSlurmCommand(folder + "sacctmgr", {"-i", "update", "job", "where", "jobid=" + job_id, "set",
                                                       "AdminComment=" + MergeAdminComment(existing, node, entry)});
  if (!written.ok()) {
    return Error{
        "the job has finished, and sacctmgr cannot write its accounting record (" + written.error().message + ")",
        written.error().code};
  }
  return Status::Ok();
}

}  // namespace wattcut::slurm
