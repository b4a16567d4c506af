// A fake amdgpu node for tests that drive the real ROCm SMI library (Debian's librocm_smi64):
// the sysfs files the library reads, written into a folder, and that folder mounted over
// /sys/class and /sys/devices in a private mount namespace of the test process, where the library
// looks. Nothing outside the test process sees the mounts; the process needs root (CI runs as
// root) and must still have one thread when it enters the namespace.
//
// What the tree holds, per GPU (the files ROCm SMI 5.2.3 opens, found with strace):
//   /sys/class/drm/cardN -> ../../devices/<pci>/drm/cardN, and device -> the PCI device folder;
//   <pci>/vendor (0x1002), device, vbios_version, unique_id, pp_dpm_sclk, pp_dpm_mclk,
//   power_dpm_force_performance_level, gpu_metrics (the v1.1 binary table: the energy
//   accumulator and its timestamp), pp_od_clk_voltage (the clock range commands written to it are
//   recorded, see RecordWrite), hwmon/hwmonN/{name, power1_average, power1_cap, power1_cap_max,
//   power1_cap_min, power1_cap_default, temp*_label, in0_label};
//   /sys/class/kfd/kfd/topology/nodes/{0 (the CPU), N+1 (each GPU)}/{properties, gpu_id, name,
//   io_links/0/properties}.
// A regular file keeps what was last written to it, as the driver's would show it only for some
// files: a test reads it back, then writes the driver's view again where it needs to.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "wattcut/base/mutex.h"
#include "wattcut/base/result.h"

namespace wattcut::fake_amdgpu {

struct FakeGpu {
  std::string pci_address = "0000:01:00.0";  // domain:bus:device.function
  uint16_t device_id = 0x74a1;               // MI300X
  uint64_t unique_id = 0x1234abcd0000;
  std::vector<int> sclk_levels_mhz = {500, 1300, 2100};
  int sclk_current = 2;
  std::vector<int> mclk_levels_mhz = {900, 1300};
  int mclk_current = 1;
  int64_t power_average_uw = 550'000'000;
  int64_t power_cap_uw = 750'000'000;
  int64_t power_cap_default_uw = 750'000'000;
  int64_t power_cap_min_uw = 0;
  int64_t power_cap_max_uw = 750'000'000;
  uint64_t energy_counts = 1'000'000;  // the accumulator, in units of 15.3 uJ
};

// "0: 500Mhz\n1: 1300Mhz *\n2: 2100Mhz\n": a DPM level list as the driver prints it.
std::string DpmLevels(const std::vector<int>& levels_mhz, int current);

// The fake node's folder, its files, and the recorder of pp_od_clk_voltage. Build() writes the
// tree; EnterPrivateSysfs() mounts it.
class FakeAmdgpuSysfs {
 public:
  explicit FakeAmdgpuSysfs(std::filesystem::path root);
  ~FakeAmdgpuSysfs();
  FakeAmdgpuSysfs(const FakeAmdgpuSysfs&) = delete;
  FakeAmdgpuSysfs& operator=(const FakeAmdgpuSysfs&) = delete;

  // Writes (again) a node of these GPUs under the root; a tree written before is removed.
  Status Build(const std::vector<FakeGpu>& gpus);

  // GPU `gpu`'s PCI device folder, and one file in it ("pp_dpm_sclk", "hwmon/hwmon0/power1_cap").
  std::filesystem::path DeviceDir(int gpu) const;
  std::string Read(int gpu, const std::string& file) const;
  Status Write(int gpu, const std::string& file, const std::string& text) const;
  // The gpu_metrics table with this energy accumulator.
  Status SetEnergyCounts(int gpu, uint64_t counts) const;
  // What was written to GPU `gpu`'s pp_od_clk_voltage since Build(), one entry per write, in order.
  std::vector<std::string> OdCommands(int gpu);
  // Called for each write(2) of this process to `path` while this node is the one built last.
  void RecordWrite(const std::string& path, std::string_view text);

 private:
  std::filesystem::path root_;
  std::vector<FakeGpu> gpus_;
  Mutex mu_;
  std::vector<std::vector<std::string>> od_commands_ GUARDED_BY(mu_);
};

// unshare(CLONE_NEWNS) and the mounts made private; then a tmpfs over /dev/shm (ROCm SMI keeps its
// lock files there), and the tree's folder in it, whose class/ and devices/ are mounted over
// /sys/class and /sys/devices. Returns that folder, for FakeAmdgpuSysfs. Once per process; all of it
// goes with the process. Fails with why (not root, a thread already started, a kernel or container
// without mount namespaces).
Result<std::filesystem::path> EnterPrivateSysfs();

}  // namespace wattcut::fake_amdgpu
