// Test support: a powercap tree written by the test, laid out as the kernel lays it out (package
// zones intel-rapl:N under the root, their subzones intel-rapl:N:M inside them), so that RAPL
// readers run on counters the test moves, wraps and removes.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

namespace wattcut::cpu::testing {

class RaplTestTree {
 public:
  explicit RaplTestTree(const std::string& name)
      : root_((std::filesystem::temp_directory_path() / ("wattcut_rapl_" + name + "_" + std::to_string(::getpid())))
                  .string()) {
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
  }
  ~RaplTestTree() { std::filesystem::remove_all(root_); }
  RaplTestTree(const RaplTestTree&) = delete;
  RaplTestTree& operator=(const RaplTestTree&) = delete;

  const std::string& root() const { return root_; }

  // intel-rapl:N, named package-N.
  std::string AddPackage(int n, int64_t range_uj, int64_t energy_uj) {
    const std::string zone = root_ + "/intel-rapl:" + std::to_string(n);
    WriteZone(zone, "package-" + std::to_string(n), range_uj, energy_uj);
    return zone;
  }
  // intel-rapl:N:M inside its package, named `name` ("dram", "core", ...).
  std::string AddSubzone(int n, int m, const std::string& name, int64_t range_uj, int64_t energy_uj) {
    const std::string zone =
        root_ + "/intel-rapl:" + std::to_string(n) + "/intel-rapl:" + std::to_string(n) + ":" + std::to_string(m);
    WriteZone(zone, name, range_uj, energy_uj);
    return zone;
  }
  // As sysfs gives it, a reader sees the old value or the new one, never half a write.
  static void SetEnergy(const std::string& zone, int64_t energy_uj) {
    Write(zone + "/energy_uj.new", std::to_string(energy_uj));
    std::filesystem::rename(zone + "/energy_uj.new", zone + "/energy_uj");
  }
  static void Write(const std::string& file, const std::string& text) {
    std::ofstream out(file, std::ios::trunc);
    out << text << "\n";
  }

 private:
  static void WriteZone(const std::string& zone, const std::string& name, int64_t range_uj, int64_t energy_uj) {
    std::filesystem::create_directories(zone);
    Write(zone + "/name", name);
    Write(zone + "/max_energy_range_uj", std::to_string(range_uj));
    SetEnergy(zone, energy_uj);
  }

  std::string root_;
};

}  // namespace wattcut::cpu::testing
