#include "wattcut/cpu/cpu_energy_meter.h"

namespace wattcut::cpu {

CpuEnergyMeter::CpuEnergyMeter(std::vector<RaplPackage> packages) : packages_(std::move(packages)) {
  for (const RaplPackage& p : packages_) {
    Counters c{WrappingCounter(p.package.max_energy_range_uj), std::nullopt};
    if (p.dram) c.dram.emplace(p.dram->max_energy_range_uj);
    counters_.push_back(c);
  }
}

Result<std::unique_ptr<CpuEnergyMeter>> CpuEnergyMeter::Open(const std::string& powercap_root) {
  Result<std::vector<RaplPackage>> packages = FindRaplPackages(powercap_root);
  if (!packages.ok()) return packages.error();
  std::unique_ptr<CpuEnergyMeter> meter(new CpuEnergyMeter(std::move(*packages)));
  Result<std::vector<CpuEnergyReading>> first = meter->Read();
  if (!first.ok()) return first.error();
  return meter;
}

Result<std::vector<CpuEnergyReading>> CpuEnergyMeter::Read() {
  // Read and widened under one lock: a reading taken before another's but widened after it would
  // look like a wrap. Every raw counter first, so that a failure leaves the widened counts as they were.
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::pair<int64_t, std::optional<int64_t>>> raw;
  raw.reserve(packages_.size());
  for (const RaplPackage& p : packages_) {
    Result<int64_t> package = ReadEnergyUj(p.package);
    if (!package.ok()) return package.error();
    std::optional<int64_t> dram;
    if (p.dram) {
      Result<int64_t> d = ReadEnergyUj(*p.dram);
      if (!d.ok()) return d.error();
      dram = *d;
    }
    raw.emplace_back(*package, dram);
  }
  std::vector<CpuEnergyReading> readings;
  readings.reserve(packages_.size());
  for (size_t k = 0; k < packages_.size(); ++k) {
    CpuEnergyReading r;
    r.index = packages_[k].index;
    r.package_energy_uj = counters_[k].package.Widen(raw[k].first);
    if (counters_[k].dram && raw[k].second) r.dram_energy_uj = counters_[k].dram->Widen(*raw[k].second);
    readings.push_back(r);
  }
  return readings;
}

}  // namespace wattcut::cpu
