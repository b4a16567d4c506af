// CPU package and DRAM energy of this machine, from RAPL (rapl_zones.h), each counter widened past
// its wraparound (wrapping_counter.h) from the moment the meter opened. The node agent owns one
// (it runs as root, who alone may read the counters) and serves its readings. Thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/cpu/rapl_zones.h"
#include "wattcut/cpu/wrapping_counter.h"

namespace wattcut::cpu {

struct CpuEnergyReading {
  int index = 0;                          // the package's N
  int64_t package_energy_uj = 0;          // widened: never goes down
  std::optional<int64_t> dram_energy_uj;  // absent: the package has no DRAM zone
};

class CpuEnergyMeter {
 public:
  // The packages under `powercap_root`, each counter read once (so that a machine whose counters
  // the agent cannot read says so at start, not at the first request).
  static Result<std::unique_ptr<CpuEnergyMeter>> Open(const std::string& powercap_root);

  const std::vector<RaplPackage>& packages() const { return packages_; }

  // Every package's counters now. A wrap between two reads is counted when they are closer than a
  // counter's range takes to fill (minutes): the agent also reads on its own every second. An
  // unreadable counter fails the whole read, naming its file; the widened counts stay as they were.
  Result<std::vector<CpuEnergyReading>> Read();

 private:
  struct Counters {
    WrappingCounter package;
    std::optional<WrappingCounter> dram;
  };
  explicit CpuEnergyMeter(std::vector<RaplPackage> packages);

  const std::vector<RaplPackage> packages_;
  std::mutex mu_;
  std::vector<Counters> counters_;  // by position in packages_; guarded by mu_
};

}  // namespace wattcut::cpu
