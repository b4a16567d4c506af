// The RAPL zones Linux's powercap tree exposes (the kernel's Documentation/power/powercap): a folder
// `intel-rapl:N` per CPU package under the tree's root (/sys/class/powercap; AMD's packages appear
// under the same name), and below it subzones `intel-rapl:N:M`, one of them named "dram" where the
// platform measures its memory. Each zone has `name`, `energy_uj` (a counter in microjoules that
// wraps to 0 past `max_energy_range_uj`) and `max_energy_range_uj`. Since Linux 5.10 `energy_uj` is
// readable by root only; the node agent reads it and serves it.
//
// The root is a parameter, so that tests run on a tree they write.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "wattcut/base/result.h"

namespace wattcut::cpu {

inline constexpr char kDefaultPowercapRoot[] = "/sys/class/powercap";

struct RaplZone {
  std::string path;  // the zone's folder
  std::string name;  // its `name`: "package-0", "dram", ...
  int64_t max_energy_range_uj = 0;
};

struct RaplPackage {
  int index = 0;  // N of intel-rapl:N
  RaplZone package;
  std::optional<RaplZone> dram;  // absent where the platform has no DRAM zone
};

// The packages under `root`, by index. NotFound when the root or its intel-rapl zones are missing
// (a machine without RAPL, or a kernel without the driver); an error naming the file when a zone's
// `name` or `max_energy_range_uj` cannot be read or is not what the kernel writes.
Result<std::vector<RaplPackage>> FindRaplPackages(const std::string& root);

// The zone's counter now, in microjoules: an error naming the file when it cannot be read (not
// root: PermissionDenied) or is not an integer in [0, max_energy_range_uj].
Result<int64_t> ReadEnergyUj(const RaplZone& zone);

}  // namespace wattcut::cpu
