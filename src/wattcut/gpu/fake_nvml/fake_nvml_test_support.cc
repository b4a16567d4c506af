#include "wattcut/gpu/fake_nvml/fake_nvml_test_support.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace wattcut::fake_nvml {

void EnsureLibraryPath(const std::string& library_dir) {
  const char* current = std::getenv("LD_LIBRARY_PATH");
  const std::string path = current ? current : "";
  if (path.rfind(library_dir + ":", 0) == 0 || path == library_dir) return;
  const std::string updated = path.empty() ? library_dir : library_dir + ":" + path;
  setenv("LD_LIBRARY_PATH", updated.c_str(), 1);
  std::ifstream cmdline("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> args;
  std::string arg;
  while (std::getline(cmdline, arg, '\0')) args.push_back(arg);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  execv("/proc/self/exe", argv.data());
  std::abort();  // exec failed
}

ScopedFakeNvml::ScopedFakeNvml(const State& initial, const char* variable) : variable_(variable) {
  std::string pattern = (std::filesystem::temp_directory_path() / "wattcut-fake-nvml-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) std::abort();
  dir_ = pattern;
  path_ = dir_ + "/state";
  UpdateStateFile(path_, [&](State& s) { s = initial; });
  setenv(variable_.c_str(), path_.c_str(), 1);
}

ScopedFakeNvml::~ScopedFakeNvml() {
  unsetenv(variable_.c_str());
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

void ScopedFakeNvml::Set(const std::string& key, const std::string& value) {
  UpdateStateFile(path_, [&](State& s) { s[key] = value; });
}

void ScopedFakeNvml::Erase(const std::string& key) {
  UpdateStateFile(path_, [&](State& s) { s.erase(key); });
}

std::string ScopedFakeNvml::Log() const {
  std::ifstream in(path_ + ".log");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace wattcut::fake_nvml
