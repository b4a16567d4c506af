#include "wattcut/cpu/cpu_energy_meter.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "wattcut/cpu/rapl_tree_testing.h"

namespace wattcut::cpu {
namespace {

using testing::RaplTestTree;

TEST(CpuEnergyMeter, WidensPackageAndDramAcrossTheirWraps) {
  RaplTestTree tree("meter");
  const std::string pkg = tree.AddPackage(0, 1'000'000, 900'000);
  const std::string dram = tree.AddSubzone(0, 2, "dram", 500'000, 100);
  const std::string pkg1 = tree.AddPackage(1, 1'000'000, 5);  // no DRAM zone
  auto meter = CpuEnergyMeter::Open(tree.root());
  ASSERT_TRUE(meter.ok()) << meter.error().message;
  RaplTestTree::SetEnergy(pkg, 200'000);  // wrapped: +300,000
  RaplTestTree::SetEnergy(dram, 400'100);
  RaplTestTree::SetEnergy(pkg1, 25);
  auto r = (*meter)->Read();
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].package_energy_uj, 1'200'000);
  ASSERT_TRUE((*r)[0].dram_energy_uj.has_value());
  EXPECT_EQ(*(*r)[0].dram_energy_uj, 400'100);
  EXPECT_EQ((*r)[1].package_energy_uj, 25);
  EXPECT_FALSE((*r)[1].dram_energy_uj.has_value());
  RaplTestTree::SetEnergy(dram, 50);  // wrapped: +99,950
  r = (*meter)->Read();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*(*r)[0].dram_energy_uj, 500'050);
}

TEST(CpuEnergyMeter, AFailedReadChangesNothing) {
  RaplTestTree tree("fail");
  const std::string pkg = tree.AddPackage(0, 1'000, 100);
  const std::string pkg1 = tree.AddPackage(1, 1'000, 100);
  auto meter = CpuEnergyMeter::Open(tree.root());
  ASSERT_TRUE(meter.ok());
  RaplTestTree::SetEnergy(pkg, 10);  // would be a wrap, but package 1 fails
  RaplTestTree::Write(pkg1 + "/energy_uj", "garbage");
  auto failed = (*meter)->Read();
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.error().message.find(pkg1 + "/energy_uj"), std::string::npos) << failed.error().message;
  RaplTestTree::SetEnergy(pkg, 150);
  RaplTestTree::SetEnergy(pkg1, 100);
  auto r = (*meter)->Read();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].package_energy_uj, 150);  // no wrap was counted by the failed read
}

TEST(CpuEnergyMeter, OpenFailsWithoutRaplOrWithUnreadableCounters) {
  auto none = CpuEnergyMeter::Open("/nonexistent/powercap");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, ErrorCode::kNotFound);
  RaplTestTree tree("open");
  const std::string pkg = tree.AddPackage(0, 1'000, 100);
  std::filesystem::remove(pkg + "/energy_uj");
  EXPECT_FALSE(CpuEnergyMeter::Open(tree.root()).ok());
}

TEST(CpuEnergyMeter, ConcurrentReadersNeverSeeAFalseWrap) {
  RaplTestTree tree("threads");
  const std::string pkg = tree.AddPackage(0, 1'000'000'000, 0);
  auto meter = CpuEnergyMeter::Open(tree.root());
  ASSERT_TRUE(meter.ok());
  std::thread writer([&] {
    for (int v = 1; v <= 300; ++v) RaplTestTree::SetEnergy(pkg, v * 1000);
  });
  std::vector<std::thread> readers;
  std::atomic<bool> bad{false};
  for (int k = 0; k < 4; ++k) {
    readers.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        auto r = (*meter)->Read();
        ASSERT_TRUE(r.ok()) << r.error().message;
        if ((*r)[0].package_energy_uj > 300'000) bad = true;  // a reading widened out of order: a false wrap
      }
    });
  }
  writer.join();
  for (auto& t : readers) t.join();
  EXPECT_FALSE(bad.load());
}

}  // namespace
}  // namespace wattcut::cpu
