#include "wattcut/server/data_dir_lock.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace wattcut::server {
namespace {

TEST(DataDirLock, SecondHolderIsRefusedWithThePidUntilTheFirstLetsGo) {
  auto dir = std::filesystem::temp_directory_path() / ("wattcut_lock_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  {
    auto first = DataDirLock::Acquire(dir.string());
    ASSERT_TRUE(first.ok()) << first.error().message;
    std::ifstream pid_file((*first)->path());
    std::string pid;
    std::getline(pid_file, pid);
    EXPECT_EQ(pid, std::to_string(::getpid()));
    // flock is per open file: a second open in the same process conflicts too.
    auto second = DataDirLock::Acquire(dir.string());
    ASSERT_FALSE(second.ok());
    EXPECT_NE(second.error().message.find("in use by another wattcut serve (pid " + pid + ","), std::string::npos)
        << second.error().message;
  }
  // Released with its holder; the lock file left behind does not block.
  EXPECT_TRUE(std::filesystem::exists(dir / "wattcut.lock"));
  EXPECT_TRUE(DataDirLock::Acquire(dir.string()).ok());
  EXPECT_FALSE(DataDirLock::Acquire((dir / "missing").string()).ok());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace wattcut::server
