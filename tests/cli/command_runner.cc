#include "tests/cli/command_runner.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "wattcut/base/file_text_testing.h"

namespace wattcut::testing {

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "wattcut-test-XXXXXX").string();
  path_ = mkdtemp(pattern.data()) ? pattern : "";
}

TempDir::~TempDir() {
  std::error_code ec;
  if (!path_.empty()) std::filesystem::remove_all(path_, ec);
}

std::string ReadFile(const std::string& path) { return ReadFileText(path); }

CommandResult RunWattcut(const std::string& arguments) {
  TempDir dir;
  std::string out_path = dir.path() + "/out", err_path = dir.path() + "/err";
  std::string command =
      std::string(WATTCUT_BINARY) + " " + arguments + " >" + out_path + " 2>" + err_path + " </dev/null";
  int status = std::system(command.c_str());
  CommandResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out = ReadFile(out_path);
  result.err = ReadFile(err_path);
  return result;
}

}  // namespace wattcut::testing
