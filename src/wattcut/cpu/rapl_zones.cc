#include "wattcut/cpu/rapl_zones.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace wattcut::cpu {
namespace {

namespace fs = std::filesystem;

// A sysfs attribute: one line of text. Its reader's error names the file and the cause.
Result<std::string> ReadAttribute(const fs::path& path) {
  std::ifstream in(path);
  if (!in) {
    const int err = errno;
    std::string message = path.string() + ": cannot read: " + std::strerror(err);
    if (err == EACCES || err == EPERM) {
      return Error::PermissionDenied(message + " (RAPL energy counters are readable by root only since Linux 5.10)");
    }
    if (err == ENOENT) return Error::NotFound(message);
    return Error::IOError(message);
  }
  std::string line;
  std::getline(in, line);
  if (in.bad()) return Error::IOError(path.string() + ": cannot read: " + std::strerror(errno));
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

Result<int64_t> ReadMicrojoules(const fs::path& path) {
  Result<std::string> text = ReadAttribute(path);
  if (!text.ok()) return text.error();
  int64_t value = 0;
  const char* first = text->data();
  const char* last = first + text->size();
  auto [end, ec] = std::from_chars(first, last, value);
  if (ec != std::errc() || end != last || text->empty() || value < 0) {
    return Error::Malformed(path.string() + ": expected a non-negative integer of microjoules, got '" +
                            text->substr(0, 40) + "'");
  }
  return value;
}

// N of "intel-rapl:N" (`parts` 1) or N, M of "intel-rapl:N:M" (`parts` 2); nullopt otherwise.
std::optional<std::vector<int>> ZoneNumbers(const std::string& name, size_t parts) {
  constexpr std::string_view kPrefix = "intel-rapl:";
  if (name.rfind(kPrefix, 0) != 0) return std::nullopt;
  std::vector<int> numbers;
  std::string_view rest = std::string_view(name).substr(kPrefix.size());
  while (true) {
    int n = 0;
    auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), n);
    if (ec != std::errc() || end == rest.data() || n < 0) return std::nullopt;
    numbers.push_back(n);
    rest = rest.substr(static_cast<size_t>(end - rest.data()));
    if (rest.empty()) break;
    if (rest.front() != ':') return std::nullopt;
    rest = rest.substr(1);
  }
  if (numbers.size() != parts) return std::nullopt;
  return numbers;
}

Result<RaplZone> ReadZone(const fs::path& folder) {
  RaplZone zone;
  zone.path = folder.string();
  Result<std::string> name = ReadAttribute(folder / "name");
  if (!name.ok()) return name.error();
  zone.name = *name;
  Result<int64_t> range = ReadMicrojoules(folder / "max_energy_range_uj");
  if (!range.ok()) return range.error();
  if (*range <= 0)
    return Error::Malformed((folder / "max_energy_range_uj").string() + ": expected a positive range, got 0");
  zone.max_energy_range_uj = *range;
  return zone;
}

}  // namespace

Result<std::vector<RaplPackage>> FindRaplPackages(const std::string& root) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    return Error::NotFound(root + ": no powercap tree (no RAPL on this machine, or the kernel lacks intel_rapl)");
  }
  std::vector<RaplPackage> packages;
  for (const fs::directory_entry& entry : fs::directory_iterator(root, ec)) {
    const std::string name = entry.path().filename().string();
    std::optional<std::vector<int>> n = ZoneNumbers(name, 1);
    if (!n) continue;
    Result<RaplZone> zone = ReadZone(entry.path());
    if (!zone.ok()) return zone.error();
    RaplPackage package;
    package.index = (*n)[0];
    package.package = *zone;
    // Subzones are folders of their package (sysfs also links them flat under the root).
    for (const fs::path& where : {entry.path(), fs::path(root)}) {
      std::error_code sub_ec;  // a folder that cannot be listed has no subzone to offer
      for (const fs::directory_entry& sub : fs::directory_iterator(where, sub_ec)) {
        std::optional<std::vector<int>> m = ZoneNumbers(sub.path().filename().string(), 2);
        if (!m || (*m)[0] != package.index || package.dram) continue;
        Result<std::string> sub_name = ReadAttribute(sub.path() / "name");
        if (!sub_name.ok()) return sub_name.error();
        if (*sub_name != "dram") continue;
        Result<RaplZone> dram = ReadZone(sub.path());
        if (!dram.ok()) return dram.error();
        package.dram = *dram;
      }
    }
    packages.push_back(std::move(package));
  }
  if (ec) return Error::IOError(root + ": cannot list: " + ec.message());
  if (packages.empty()) {
    return Error::NotFound(root + ": no intel-rapl:N zone (no RAPL on this machine, or the kernel lacks intel_rapl)");
  }
  std::sort(packages.begin(), packages.end(),
            [](const RaplPackage& a, const RaplPackage& b) { return a.index < b.index; });
  return packages;
}

Result<int64_t> ReadEnergyUj(const RaplZone& zone) {
  const fs::path path = fs::path(zone.path) / "energy_uj";
  Result<int64_t> value = ReadMicrojoules(path);
  if (!value.ok()) return value.error();
  if (*value > zone.max_energy_range_uj) {
    return Error::Malformed(path.string() + ": " + std::to_string(*value) + " uJ is past the zone's range of " +
                            std::to_string(zone.max_energy_range_uj) + " uJ (max_energy_range_uj)");
  }
  return value;
}

}  // namespace wattcut::cpu
