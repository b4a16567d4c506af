// One server per data folder. Two servers on one --data-dir would each keep their own jobs
// in memory and both write the store: split state. The first takes an exclusive flock(2) on
// DIR/wattcut.lock for its whole life and writes its pid there; a second one is refused with
// a message naming that pid. The kernel drops the lock when the holder exits in any way
// (SIGKILL included), so a stale lock file never blocks a restart.
#pragma once

#include <memory>
#include <string>

#include "wattcut/base/result.h"

namespace wattcut::server {

class DataDirLock {
 public:
  // Takes the lock on `data_dir` (which must exist) or says who holds it.
  static Result<std::unique_ptr<DataDirLock>> Acquire(const std::string& data_dir);
  ~DataDirLock();  // releases it
  DataDirLock(const DataDirLock&) = delete;
  DataDirLock& operator=(const DataDirLock&) = delete;

  const std::string& path() const { return path_; }

 private:
  DataDirLock(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_;
  std::string path_;
};

}  // namespace wattcut::server
