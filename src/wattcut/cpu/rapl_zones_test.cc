#include "wattcut/cpu/rapl_zones.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "wattcut/cpu/rapl_tree_testing.h"

namespace wattcut::cpu {
namespace {

using testing::RaplTestTree;

TEST(RaplZones, FindsPackagesInOrderWithTheirDramZones) {
  RaplTestTree tree("find");
  tree.AddPackage(1, 5000, 10);  // listed before package 0 on purpose
  tree.AddSubzone(1, 0, "core", 5000, 1);
  tree.AddPackage(0, 262143328850, 4242);
  tree.AddSubzone(0, 0, "core", 262143328850, 1);
  tree.AddSubzone(0, 1, "dram", 65712999613, 77);
  std::filesystem::create_directories(tree.root() + "/intel-rapl");  // the control type's folder
  std::filesystem::create_directories(tree.root() + "/intel-rapl-mmio:0");
  auto packages = FindRaplPackages(tree.root());
  ASSERT_TRUE(packages.ok()) << packages.error().message;
  ASSERT_EQ(packages->size(), 2u);
  EXPECT_EQ((*packages)[0].index, 0);
  EXPECT_EQ((*packages)[0].package.name, "package-0");
  EXPECT_EQ((*packages)[0].package.max_energy_range_uj, 262143328850);
  ASSERT_TRUE((*packages)[0].dram.has_value());
  EXPECT_EQ((*packages)[0].dram->name, "dram");
  EXPECT_EQ((*packages)[0].dram->max_energy_range_uj, 65712999613);
  EXPECT_EQ((*packages)[1].index, 1);
  EXPECT_FALSE((*packages)[1].dram.has_value());
  auto energy = ReadEnergyUj((*packages)[0].package);
  ASSERT_TRUE(energy.ok()) << energy.error().message;
  EXPECT_EQ(*energy, 4242);
}

TEST(RaplZones, NoTreeIsNotFound) {
  auto missing = FindRaplPackages("/nonexistent/powercap");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  EXPECT_NE(missing.error().message.find("no powercap tree"), std::string::npos);
  RaplTestTree empty("empty");
  auto none = FindRaplPackages(empty.root());
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, ErrorCode::kNotFound);
  EXPECT_NE(none.error().message.find("no intel-rapl:N zone"), std::string::npos) << none.error().message;
}

TEST(RaplZones, BadFilesAreNamedWithWhatWasExpected) {
  RaplTestTree tree("bad");
  const std::string zone = tree.AddPackage(0, 1000, 10);
  RaplTestTree::Write(zone + "/max_energy_range_uj", "lots");
  auto bad_range = FindRaplPackages(tree.root());
  ASSERT_FALSE(bad_range.ok());
  EXPECT_NE(bad_range.error().message.find(zone + "/max_energy_range_uj: expected a non-negative integer"),
            std::string::npos)
      << bad_range.error().message;
  RaplTestTree::Write(zone + "/max_energy_range_uj", "1000");
  auto packages = FindRaplPackages(tree.root());
  ASSERT_TRUE(packages.ok());
  RaplTestTree::SetEnergy(zone, 1001);
  auto past = ReadEnergyUj((*packages)[0].package);
  ASSERT_FALSE(past.ok());
  EXPECT_NE(past.error().message.find("past the zone's range of 1000 uJ"), std::string::npos) << past.error().message;
  RaplTestTree::Write(zone + "/energy_uj", "-5");
  EXPECT_FALSE(ReadEnergyUj((*packages)[0].package).ok());
  std::filesystem::remove(zone + "/energy_uj");
  auto gone = ReadEnergyUj((*packages)[0].package);
  ASSERT_FALSE(gone.ok());
  EXPECT_NE(gone.error().message.find(zone + "/energy_uj: cannot read"), std::string::npos);
}

TEST(RaplZones, AnUnreadableCounterSaysRootOnly) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads a file whatever its mode";
  RaplTestTree tree("mode");
  const std::string zone = tree.AddPackage(0, 1000, 10);
  std::filesystem::permissions(zone + "/energy_uj", std::filesystem::perms::owner_write);
  auto packages = FindRaplPackages(tree.root());
  ASSERT_TRUE(packages.ok());
  auto denied = ReadEnergyUj((*packages)[0].package);
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.error().code, ErrorCode::kPermissionDenied);
  EXPECT_NE(denied.error().message.find("readable by root only"), std::string::npos);
}

}  // namespace
}  // namespace wattcut::cpu
