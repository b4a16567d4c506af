#include "wattcut/cli/output_directory.h"

#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace wattcut::cli {
namespace fs = std::filesystem;
namespace {

constexpr const char* kPartialInfix = ".partial-";

// Staging directories to remove if SIGINT, SIGTERM or SIGHUP ends the process. The first
// Add() blocks those signals in the calling thread (threads it starts later inherit the
// mask) and starts a thread that waits for them with sigwait(): the removal then runs in
// an ordinary thread, not in a signal handler, and the signal is re-raised with its default
// action so the process ends exactly as it would have. A signal the process ignores
// (nohup, `cmd &` in a script) stays ignored.
class InterruptCleanup {
 public:
  static InterruptCleanup& Get() {
    static InterruptCleanup* instance = new InterruptCleanup();  // never destroyed: the watcher may outlive main
    return *instance;
  }

  void Add(const fs::path& path) {
    std::lock_guard lock(mutex_);
    paths_.push_back(path);
  }
  void Remove(const fs::path& path) {
    std::lock_guard lock(mutex_);
    paths_.erase(std::remove(paths_.begin(), paths_.end(), path), paths_.end());
  }
  // Held while a directory is being moved into place, so that a signal never removes or
  // interrupts half a Commit().
  std::recursive_mutex& mutex() { return mutex_; }

 private:
  InterruptCleanup() {
    sigset_t signals;
    sigemptyset(&signals);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction current {};
      if (sigaction(sig, nullptr, &current) == 0 && current.sa_handler != SIG_IGN) sigaddset(&signals, sig);
    }
    if (pthread_sigmask(SIG_BLOCK, &signals, nullptr) != 0) return;
    std::thread([this, signals] {
      int sig = 0;
      if (sigwait(&signals, &sig) != 0) return;
      {
        std::lock_guard lock(mutex_);
        for (const fs::path& path : paths_) {
          std::error_code ec;
          // The main thread may still be writing into it: retry a few times.
          for (int attempt = 0; attempt < 3 && fs::exists(path, ec); ++attempt) fs::remove_all(path, ec);
        }
        paths_.clear();
      }
      signal(sig, SIG_DFL);
      sigset_t just_this;
      sigemptyset(&just_this);
      sigaddset(&just_this, sig);
      pthread_sigmask(SIG_UNBLOCK, &just_this, nullptr);
      raise(sig);
    }).detach();
  }

  std::recursive_mutex mutex_;
  std::vector<fs::path> paths_;
};

bool ProcessIsAlive(pid_t pid) {
  if (pid <= 0) return true;                   // not a process id we would have written: leave it alone
  return kill(pid, 0) == 0 || errno != ESRCH;  // EPERM: it exists, under another user
}

// Removes DIR_PARENT/.NAME.partial-PID folders whose process has ended (killed or crashed
// before it could clean up). Best effort: a folder that cannot be removed stays.
void RemoveStalePartials(const fs::path& final_dir) {
  const std::string prefix = "." + final_dir.filename().string() + kPartialInfix;
  std::error_code ec;
  for (fs::directory_iterator it(final_dir.parent_path(), ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.starts_with(prefix) || name.size() == prefix.size() || name.size() > prefix.size() + 9) continue;
    const std::string digits = name.substr(prefix.size());
    if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) continue;
    const auto pid = static_cast<pid_t>(std::stol(digits));
    std::error_code type_ec;
    if (pid == getpid() || ProcessIsAlive(pid) || !it->is_directory(type_ec) || it->is_symlink(type_ec)) continue;
    std::error_code remove_ec;
    fs::remove_all(it->path(), remove_ec);
  }
}

}  // namespace

Result<fs::path> ResolveOutputPath(const std::string& given) {
  if (given.empty()) return Error{"--out: expected a directory, got an empty path"};
  std::error_code ec;
  fs::path absolute = fs::absolute(given, ec);
  if (ec) return Error{given + ": cannot resolve the output directory: " + ec.message()};
  // Symbolic links, `.` and `..` as the kernel would follow them (for the part that exists).
  fs::path resolved = fs::weakly_canonical(absolute, ec);
  if (ec) return Error{given + ": cannot resolve the output directory: " + ec.message()};
  resolved = resolved.lexically_normal();
  while (!resolved.has_filename() && resolved.has_relative_path()) resolved = resolved.parent_path();  // "DIR/"
  if (!resolved.has_filename()) return Error{given + ": the output directory cannot be the root directory"};
  return resolved;
}

std::string DisplayPath(const std::string& given) {
  std::string path = given;
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

fs::path StagingPathFor(const fs::path& final_dir, pid_t pid) {
  return final_dir.parent_path() / ("." + final_dir.filename().string() + kPartialInfix + std::to_string(pid));
}

Result<OutputDirectory> OutputDirectory::Create(const std::string& given, bool overwrite) {
  Result<fs::path> resolved = ResolveOutputPath(given);
  if (!resolved.ok()) return resolved.error();
  const fs::path& final_dir = *resolved;
  const fs::path parent = final_dir.parent_path();
  std::error_code ec;
  const fs::file_status status = fs::status(final_dir, ec);
  if (fs::exists(status)) {
    if (!fs::is_directory(status)) return Error{given + ": exists and is not a directory"};
    if (!fs::is_empty(final_dir, ec) && !overwrite) {
      return Error{given + ": directory exists and is not empty (pass --overwrite to replace it)"};
    }
    // Commit() moves an existing DIR aside: impossible for a mount point.
    struct stat dir_stat {
    }, parent_stat{};
    if (stat(final_dir.c_str(), &dir_stat) == 0 && stat(parent.c_str(), &parent_stat) == 0 &&
        dir_stat.st_dev != parent_stat.st_dev) {
      return Error{given + ": is a mount point, which cannot be replaced; write into a folder inside it (--out " +
                   (final_dir / "run").string() + ")"};
    }
  } else if (ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory) {
    return Error{given + ": cannot inspect the output directory: " + ec.message()};
  }
  // The deepest existing ancestor must be a directory for the rest to be created in it.
  for (fs::path ancestor = parent; !ancestor.empty(); ancestor = ancestor.parent_path()) {
    const fs::file_status ancestor_status = fs::status(ancestor, ec);
    if (!fs::exists(ancestor_status)) {
      if (ancestor == ancestor.parent_path()) break;
      continue;
    }
    if (!fs::is_directory(ancestor_status)) {
      return Error{given + ": cannot create the output directory: " + ancestor.string() + " is not a directory"};
    }
    break;
  }
  ec.clear();
  fs::create_directories(parent, ec);
  if (ec) return Error{given + ": cannot create the parent directory " + parent.string() + ": " + ec.message()};
  if (access(parent.c_str(), W_OK | X_OK) != 0) {
    return Error{given + ": cannot write into " + parent.string() + ": " + std::strerror(errno)};
  }
  RemoveStalePartials(final_dir);

  const fs::path staging = StagingPathFor(final_dir, getpid());
  InterruptCleanup::Get().Add(staging);
  fs::remove_all(staging, ec);
  if (!fs::create_directory(staging, ec) || ec) {
    InterruptCleanup::Get().Remove(staging);
    return Error{given + ": cannot create the staging directory " + staging.string() + ": " +
                 (ec ? ec.message() : std::string("it already exists"))};
  }
  return OutputDirectory(final_dir, staging);
}

OutputDirectory::OutputDirectory(OutputDirectory&& other) noexcept
    : final_(std::move(other.final_)), staging_(std::move(other.staging_)), committed_(other.committed_) {
  other.committed_ = true;  // the moved-from object owns nothing
}

OutputDirectory::~OutputDirectory() {
  if (!committed_) {
    std::error_code ec;
    fs::remove_all(staging_, ec);
    InterruptCleanup::Get().Remove(staging_);
  }
}

Status OutputDirectory::Write(const std::string& relative, const std::string& contents) {
  fs::path path = staging_ / relative;
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) return Error{path.parent_path().string() + ": cannot create directory: " + ec.message()};
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << contents;
  out.close();
  if (!out) return Error{path.string() + ": write failed"};
  return Status::Ok();
}

Status OutputDirectory::Commit() {
  InterruptCleanup& cleanup = InterruptCleanup::Get();
  std::lock_guard lock(cleanup.mutex());
  std::error_code ec;
  fs::path old;
  if (fs::exists(final_, ec)) {
    old = final_.parent_path() / ("." + final_.filename().string() + ".old-" + std::to_string(getpid()));
    fs::remove_all(old, ec);
    fs::rename(final_, old, ec);
    if (ec) return Error{final_.string() + ": cannot move the previous output aside: " + ec.message()};
  }
  fs::rename(staging_, final_, ec);
  if (ec) {
    std::error_code restore_ec;
    if (!old.empty()) fs::rename(old, final_, restore_ec);
    return Error{final_.string() + ": cannot move the new output into place: " + ec.message()};
  }
  committed_ = true;
  cleanup.Remove(staging_);
  if (!old.empty()) fs::remove_all(old, ec);
  return Status::Ok();
}

}  // namespace wattcut::cli
