// Runs a command line in a shell and captures its exit status, stdout and stderr.
#pragma once

#include <string>

namespace wattcut::testing {

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// `arguments` is appended to the wattcut binary's path; it is passed to /bin/sh.
CommandResult RunWattcut(const std::string& arguments);

// A fresh, empty temporary directory, removed by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string ReadFile(const std::string& path);

}  // namespace wattcut::testing
