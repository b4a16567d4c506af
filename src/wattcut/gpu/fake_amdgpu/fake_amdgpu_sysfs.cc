#include "wattcut/gpu/fake_amdgpu/fake_amdgpu_sysfs.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>

namespace wattcut::fake_amdgpu {

namespace fs = std::filesystem;

std::string DpmLevels(const std::vector<int>& levels_mhz, int current) {
  std::string out;
  for (size_t i = 0; i < levels_mhz.size(); ++i) {
    out += std::to_string(i) + ": " + std::to_string(levels_mhz[i]) + "Mhz" +
           (static_cast<int>(i) == current ? " *" : "") + "\n";
  }
  return out;
}

namespace {

Status WriteFile(const fs::path& path, const std::string& text) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return Error::IOError("cannot write " + path.string());
  return Status::Ok();
}

Status Symlink(const std::string& target, const fs::path& link) {
  std::error_code ec;
  fs::create_directories(link.parent_path(), ec);
  fs::create_symlink(target, link, ec);
  if (ec) return Error::IOError("cannot link " + link.string() + " -> " + target + ": " + ec.message());
  return Status::Ok();
}

// gpu_metrics v1.1 (the amdgpu driver's struct gpu_metrics_v1_1): a 4-byte header (size, format
// 1, content 1), then 16-bit temperatures and activities, the 16-bit average socket power (W),
// the 64-bit energy accumulator at byte 24 and the 64-bit timestamp (ns) at byte 32; 96 bytes.
std::string GpuMetrics(uint64_t energy_counts, int64_t power_w, uint64_t timestamp_ns) {
  std::string table(96, '\0');
  auto put = [&table](size_t at, uint64_t value, size_t bytes) {
    for (size_t i = 0; i < bytes; ++i) table[at + i] = static_cast<char>((value >> (8 * i)) & 0xff);
  };
  put(0, 96, 2);
  put(2, 1, 1);
  put(3, 1, 1);
  put(22, static_cast<uint64_t>(power_w), 2);
  put(24, energy_counts, 8);
  put(32, timestamp_ns, 8);
  return table;
}

// pp_od_clk_voltage as an MI300X's driver prints it: the SCLK soft range now, and the range allowed.
std::string OdClkVoltage(const FakeGpu& g) {
  const int low = g.sclk_levels_mhz.front(), high = g.sclk_levels_mhz.back();
  return "OD_SCLK:\n0: " + std::to_string(low) + "Mhz\n1: " + std::to_string(high) +
         "Mhz\nOD_RANGE:\nSCLK:     " + std::to_string(low) + "Mhz       " + std::to_string(high) + "Mhz\n";
}

struct Pci {
  unsigned domain = 0, bus = 0, device = 0, function = 0;
};

Pci ParsePci(const std::string& address) {
  Pci p;
  std::sscanf(address.c_str(), "%x:%x:%x.%x", &p.domain, &p.bus, &p.device, &p.function);
  return p;
}

Status WriteGpu(const fs::path& root, int index, const FakeGpu& g) {
  const std::string card = "card" + std::to_string(index);
  const std::string render = "renderD" + std::to_string(128 + index);
  const std::string pci_rel = "pci0000:00/" + g.pci_address;
  const fs::path dev = root / "devices" / pci_rel;
  const fs::path hwmon = dev / "hwmon" / ("hwmon" + std::to_string(index));
  char hex[32];
  std::snprintf(hex, sizeof hex, "0x%04x\n", g.device_id);
  const std::string unique = [&] {
    char text[32];
    std::snprintf(text, sizeof text, "%llx\n", static_cast<unsigned long long>(g.unique_id));
    return std::string(text);
  }();
  const std::vector<std::pair<fs::path, std::string>> files = {
      {dev / "vendor", "0x1002\n"},
      {dev / "device", hex},
      {dev / "vbios_version", "113-M3000100-102\n"},
      {dev / "unique_id", unique},
      {dev / "pp_dpm_sclk", DpmLevels(g.sclk_levels_mhz, g.sclk_current)},
      {dev / "pp_dpm_mclk", DpmLevels(g.mclk_levels_mhz, g.mclk_current)},
      {dev / "power_dpm_force_performance_level", "auto\n"},
      {dev / "gpu_metrics", GpuMetrics(g.energy_counts, g.power_average_uw / 1'000'000, 1'000'000'000)},
      {hwmon / "name", "amdgpu\n"},
      {hwmon / "power1_average", std::to_string(g.power_average_uw) + "\n"},
      {hwmon / "power1_cap", std::to_string(g.power_cap_uw) + "\n"},
      {hwmon / "power1_cap_max", std::to_string(g.power_cap_max_uw) + "\n"},
      {hwmon / "power1_cap_min", std::to_string(g.power_cap_min_uw) + "\n"},
      {hwmon / "power1_cap_default", std::to_string(g.power_cap_default_uw) + "\n"},
      {hwmon / "temp1_label", "edge\n"},
      {hwmon / "temp2_label", "junction\n"},
      {hwmon / "temp3_label", "mem\n"},
      {hwmon / "in0_label", "vddgfx\n"},
  };
  for (const auto& [path, text] : files) {
    if (Status s = WriteFile(path, text); !s.ok()) return s;
  }
  std::error_code ec;
  fs::create_directories(dev / "drm" / card, ec);
  fs::create_directories(dev / "drm" / render, ec);
  if (Status s = WriteFile(dev / "pp_od_clk_voltage", OdClkVoltage(g)); !s.ok()) return s;
  for (const auto& [target, link] :
       {std::pair<std::string, fs::path>{"../../devices/" + pci_rel + "/drm/" + card, root / "class" / "drm" / card},
        {"../../devices/" + pci_rel + "/drm/" + render, root / "class" / "drm" / render},
        {"../..", dev / "drm" / card / "device"},
        {"../..", dev / "drm" / render / "device"}}) {
    if (Status s = Symlink(target, link); !s.ok()) return s;
  }
  // KFD's topology: node index + 1 (node 0 is the CPU), linked to the CPU.
  const Pci pci = ParsePci(g.pci_address);
  const fs::path node = root / "class/kfd/kfd/topology/nodes" / std::to_string(index + 1);
  std::ostringstream properties;
  properties << "cpu_cores_count 0\nsimd_count 1216\nlocation_id "
             << ((pci.bus << 8) | (pci.device << 3) | pci.function) << "\ndomain " << pci.domain
             << "\ndrm_render_minor " << 128 + index << "\nvendor_id 4098\ndevice_id " << g.device_id << "\nunique_id "
             << g.unique_id << "\nhive_id 0\narray_count 32\nsimd_arrays_per_engine 1\ncu_per_simd_array 10\n";
  for (const auto& [path, text] : {std::pair<fs::path, std::string>{node / "properties", properties.str()},
                                   {node / "gpu_id", std::to_string(1000 + index) + "\n"},
                                   {node / "name", "gfx942\n"},
                                   {node / "io_links/0/properties",
                                    "type 2\nnode_from " + std::to_string(index + 1) + "\nnode_to 0\nweight 20\n"}}) {
    if (Status s = WriteFile(path, text); !s.ok()) return s;
  }
  fs::create_directories(node / "p2p_links", ec);
  return Status::Ok();
}

Status WriteCpuNode(const fs::path& root) {
  const fs::path node = root / "class/kfd/kfd/topology/nodes/0";
  for (const auto& [path, text] :
       {std::pair<fs::path, std::string>{node / "properties", "cpu_cores_count 64\nsimd_count 0\n"},
        {node / "gpu_id", "0\n"},
        {node / "name", "\n"}}) {
    if (Status s = WriteFile(path, text); !s.ok()) return s;
  }
  std::error_code ec;
  fs::create_directories(node / "io_links", ec);
  fs::create_directories(node / "p2p_links", ec);
  return Status::Ok();
}

}  // namespace

// The one node whose pp_od_clk_voltage writes are recorded (a process mounts one fake /sys).
std::atomic<FakeAmdgpuSysfs*> g_recording{nullptr};

FakeAmdgpuSysfs::FakeAmdgpuSysfs(fs::path root) : root_(std::move(root)) {}

FakeAmdgpuSysfs::~FakeAmdgpuSysfs() {
  FakeAmdgpuSysfs* self = this;
  g_recording.compare_exchange_strong(self, nullptr);
}

fs::path FakeAmdgpuSysfs::DeviceDir(int gpu) const {
  return root_ / "devices/pci0000:00" / gpus_.at(static_cast<size_t>(gpu)).pci_address;
}

Status FakeAmdgpuSysfs::Build(const std::vector<FakeGpu>& gpus) {
  g_recording = nullptr;
  std::error_code ec;
  for (const char* part : {"class", "devices"}) {
    fs::create_directories(root_ / part, ec);
    for (const auto& entry : fs::directory_iterator(root_ / part, ec)) fs::remove_all(entry.path(), ec);
  }
  gpus_ = gpus;
  {
    MutexLock lock(mu_);
    od_commands_.assign(gpus.size(), {});
  }
  if (Status s = WriteCpuNode(root_); !s.ok()) return s;
  for (size_t i = 0; i < gpus.size(); ++i) {
    if (Status s = WriteGpu(root_, static_cast<int>(i), gpus[i]); !s.ok()) return s;
  }
  g_recording = this;
  return Status::Ok();
}

std::string FakeAmdgpuSysfs::Read(int gpu, const std::string& file) const {
  std::ifstream in(DeviceDir(gpu) / file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Status FakeAmdgpuSysfs::Write(int gpu, const std::string& file, const std::string& text) const {
  return WriteFile(DeviceDir(gpu) / file, text);
}

Status FakeAmdgpuSysfs::SetEnergyCounts(int gpu, uint64_t counts) const {
  const FakeGpu& g = gpus_.at(static_cast<size_t>(gpu));
  return WriteFile(DeviceDir(gpu) / "gpu_metrics", GpuMetrics(counts, g.power_average_uw / 1'000'000, 2'000'000'000));
}

void FakeAmdgpuSysfs::RecordWrite(const std::string& path, std::string_view text) {
  static constexpr std::string_view kFile = "/pp_od_clk_voltage";
  if (path.size() < kFile.size() || path.compare(path.size() - kFile.size(), kFile.size(), kFile) != 0) return;
  for (size_t i = 0; i < gpus_.size(); ++i) {
    if (path.find("/" + gpus_[i].pci_address + "/") == std::string::npos) continue;
    MutexLock lock(mu_);
    od_commands_[i].emplace_back(text);
  }
}

std::vector<std::string> FakeAmdgpuSysfs::OdCommands(int gpu) {
  MutexLock lock(mu_);
  return od_commands_.at(static_cast<size_t>(gpu));
}

Result<fs::path> EnterPrivateSysfs() {
  if (geteuid() != 0) return Error::PermissionDenied("mounting a fake /sys needs root");
  if (unshare(CLONE_NEWNS) != 0) {
    return Error::Unavailable(std::string("unshare(CLONE_NEWNS): ") + std::strerror(errno) +
                              " (a thread already started, or a kernel or container without mount namespaces)");
  }
  // Nothing mounted here may reach the other namespaces: the mounts under which it happens are made
  // private first. "/" is no mount point in a chroot (EINVAL); there /sys and /dev, the two that
  // are mounted over, are made private instead.
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    const int root_errno = errno;
    for (const char* point : {"/sys", "/dev"}) {
      if (mount(nullptr, point, nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
        return Error::Unavailable(std::string("making / private: ") + std::strerror(root_errno) + "; and " + point +
                                  ": " + std::strerror(errno));
      }
    }
  }
  if (mount("tmpfs", "/dev/shm", "tmpfs", 0, nullptr) != 0) {
    return Error::Unavailable(std::string("a tmpfs over /dev/shm: ") + std::strerror(errno));
  }
  const fs::path root = "/dev/shm/wattcut-fake-amdgpu";
  std::error_code ec;
  fs::create_directories(root / "class", ec);
  fs::create_directories(root / "devices", ec);
  for (const auto& [from, to] :
       {std::pair<fs::path, const char*>{root / "class", "/sys/class"}, {root / "devices", "/sys/devices"}}) {
    if (mount(from.c_str(), to, nullptr, MS_BIND, nullptr) != 0) {
      return Error::Unavailable("bind-mounting " + from.string() + " over " + to + ": " + std::strerror(errno));
    }
  }
  return root;
}

}  // namespace wattcut::fake_amdgpu

namespace {

// A write of `text` to `fd`, offered to the recording node (its path from /proc/self/fd).
void OfferToRecorder(int fd, std::string_view text) {
  wattcut::fake_amdgpu::FakeAmdgpuSysfs* node = wattcut::fake_amdgpu::g_recording.load();
  if (node == nullptr || fd <= 2) return;
  char link[64];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  char target[4096];
  const ssize_t n = readlink(link, target, sizeof target - 1);
  if (n > 0) node->RecordWrite(std::string(target, static_cast<size_t>(n)), text);
}

}  // namespace

// Every write(2) and writev(2) of the test process passes here first: one to a pp_od_clk_voltage
// file of the recording node is recorded, then each is written as it would be. The library writes
// each command with its own open, write and close, so a regular file would keep only the last; and
// it refuses a FIFO there. (The test executable exports both, CMakeLists.txt.)
extern "C" ssize_t write(int fd, const void* buffer, size_t count) {
  using Write = ssize_t (*)(int, const void*, size_t);
  static const Write real = reinterpret_cast<Write>(dlsym(RTLD_NEXT, "write"));
  OfferToRecorder(fd, std::string_view(static_cast<const char*>(buffer), count));
  return real(fd, buffer, count);
}

extern "C" ssize_t writev(int fd, const struct iovec* parts, int count) {
  using Writev = ssize_t (*)(int, const struct iovec*, int);
  static const Writev real = reinterpret_cast<Writev>(dlsym(RTLD_NEXT, "writev"));
  std::string text;
  for (int i = 0; i < count; ++i) text.append(static_cast<const char*>(parts[i].iov_base), parts[i].iov_len);
  OfferToRecorder(fd, text);
  return real(fd, parts, count);
}
