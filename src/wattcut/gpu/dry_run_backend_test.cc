#include "wattcut/gpu/dry_run_backend.h"

#include <gtest/gtest.h>

#include "wattcut/gpu/open_backend.h"
#include "wattcut/gpu/simulated_backend.h"

namespace wattcut {
namespace {

TEST(DryRunBackendTest, SettersLogAndChangeNothing) {
  auto clock = std::make_shared<ManualClock>();
  auto owned = std::move(SimulatedBackend::Create("a100-sxm", 1, clock)).value();
  SimulatedBackend* simulated = owned.get();
  std::vector<std::string> lines;
  DryRunBackend dry(std::move(owned), [&](const std::string& line) { lines.push_back(line); });
  EXPECT_EQ(dry.name(), "dry-run(simulated)");

  ASSERT_TRUE(dry.LockGpuClocks(0, 1200, 1200).ok());
  ASSERT_TRUE(LockMemoryClockToMax(dry, 0).ok());
  ASSERT_TRUE(dry.SetPowerLimitMw(0, 300000).ok());
  ASSERT_TRUE(dry.ResetGpuClocks(0).ok());
  ASSERT_TRUE(dry.ResetMemoryClocks(0).ok());
  EXPECT_EQ(lines, (std::vector<std::string>{
                       "dry run: would lock GPU 0 SM clocks to 1200-1200 MHz",
                       "dry run: would lock GPU 0 memory clocks to 1593-1593 MHz",
                       "dry run: would set GPU 0 power limit to 300000 mW",
                       "dry run: would reset GPU 0 SM clocks",
                       "dry run: would reset GPU 0 memory clocks",
                   }));
  EXPECT_FALSE(simulated->gpu_clocks_locked(0));
  EXPECT_FALSE(simulated->memory_clocks_locked(0));
  EXPECT_EQ(*dry.SmClockMhz(0), 1410);
  // Readings pass through.
  clock->AdvanceS(1);
  EXPECT_EQ(*dry.TotalEnergyMj(0), *simulated->TotalEnergyMj(0));
  EXPECT_EQ(*dry.DeviceCount(), 1);
}

TEST(DryRunBackendTest, StillRejectsWhatTheGpuWouldReject) {
  std::vector<std::string> lines;
  DryRunBackend dry(std::move(SimulatedBackend::Create("a40", 1)).value(),
                    [&](const std::string& line) { lines.push_back(line); });
  Status high = dry.LockGpuClocks(0, 1800, 1800);
  ASSERT_FALSE(high.ok());
  EXPECT_EQ(high.error().message, "cannot lock GPU 0 SM clocks to 1800-1800 MHz: supported 210-1740 MHz");
  EXPECT_FALSE(dry.LockGpuClocks(1, 1200, 1200).ok());
  EXPECT_FALSE(dry.LockMemoryClocks(0, 1234, 1234).ok());
  EXPECT_FALSE(dry.SetPowerLimitMw(0, 1).ok());
  EXPECT_FALSE(dry.ResetGpuClocks(3).ok());
  EXPECT_TRUE(lines.empty());
}

TEST(OpenBackendTest, OpensSimulatedAndRejectsUnknownKinds) {
  BackendOptions options;
  options.kind = "simulated";
  options.simulated_model = "a40";
  options.simulated_gpus = 3;
  auto backend = OpenBackend(options);
  ASSERT_TRUE(backend.ok()) << backend.error().message;
  EXPECT_EQ(*(*backend)->DeviceCount(), 3);
  options.dry_run = true;
  EXPECT_EQ((*OpenBackend(options))->name(), "dry-run(simulated)");
  options.kind = "tpu";
  auto unknown = OpenBackend(options);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message, "unknown GPU backend 'tpu' (known: nvml, rocm-smi, simulated, agent)");
  options.kind = "\x1b[2J";  // quoted printably
  EXPECT_EQ(OpenBackend(options).error().message,
            "unknown GPU backend '\\x1b[2J' (known: nvml, rocm-smi, simulated, agent)");
  options.kind = "simulated";
  options.simulated_model = "v100";
  EXPECT_FALSE(OpenBackend(options).ok());
}

}  // namespace
}  // namespace wattcut
