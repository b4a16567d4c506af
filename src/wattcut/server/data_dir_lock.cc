#include "wattcut/server/data_dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace wattcut::server {

namespace {

// The pid the holder wrote, or "unknown" (it may be writing it right now).
std::string HolderPid(int fd) {
  char text[32] = {};
  ssize_t got = ::pread(fd, text, sizeof(text) - 1, 0);
  std::string pid;
  for (ssize_t i = 0; i < got && text[i] >= '0' && text[i] <= '9'; ++i) pid += text[i];
  return pid.empty() ? "unknown" : pid;
}

}  // namespace

Result<std::unique_ptr<DataDirLock>> DataDirLock::Acquire(const std::string& data_dir) {
  std::string path = data_dir + "/wattcut.lock";
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Error{"cannot open lock file " + path + ": " + std::strerror(errno)};
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int error = errno;
    std::string message = error == EWOULDBLOCK
                              ? "data dir " + data_dir + " is in use by another wattcut serve (pid " + HolderPid(fd) +
                                    ", lock file " + path + "): stop that server first, or pass another --data-dir"
                              : "cannot lock " + path + ": " + std::strerror(error);
    ::close(fd);
    return Error{message};
  }
  // The pid only names the holder in a second server's message: best effort (a full disk
  // must not keep the server from starting; /healthz reports the store then).
  std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) == 0) (void)!::pwrite(fd, pid.data(), pid.size(), 0);
  return std::unique_ptr<DataDirLock>(new DataDirLock(fd, std::move(path)));
}

DataDirLock::~DataDirLock() { ::close(fd_); }

}  // namespace wattcut::server
