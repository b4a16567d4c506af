#include "wattcut/agent/process_ancestry.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace wattcut::agent {
namespace {

TEST(ProcessAncestry, AChildAndAGrandchildDescendFromThisProcess) {
  EXPECT_EQ(ParentPid(::getpid()), ::getppid());
  int to_parent[2];
  ASSERT_EQ(::pipe(to_parent), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const pid_t grandchild = ::fork();
    if (grandchild == 0) {
      const int me = ::getpid();
      (void)!::write(to_parent[1], &me, sizeof me);
      ::sleep(5);
      ::_exit(0);
    }
    ::waitpid(grandchild, nullptr, 0);
    ::_exit(0);
  }
  int grandchild = 0;
  ASSERT_EQ(::read(to_parent[0], &grandchild, sizeof grandchild), static_cast<ssize_t>(sizeof grandchild));
  EXPECT_TRUE(DescendsFrom(child, ::getpid()));
  EXPECT_TRUE(DescendsFrom(grandchild, ::getpid()));
  EXPECT_TRUE(DescendsFrom(grandchild, child));
  EXPECT_FALSE(DescendsFrom(::getpid(), child));  // not the other way round
  EXPECT_FALSE(DescendsFrom(child, child));
  EXPECT_FALSE(DescendsFrom(child, 1));
  ::kill(grandchild, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ::close(to_parent[0]);
  ::close(to_parent[1]);
}

TEST(ProcessAncestry, ReadsTheParentPastACommandWithParentheses) {
  const std::string root =
      (std::filesystem::temp_directory_path() / ("wattcut_proc_" + std::to_string(::getpid()))).string();
  std::filesystem::create_directories(root + "/42");
  std::ofstream(root + "/42/stat") << "42 (a) b (c)) S 17 42 42 0 -1\n";
  EXPECT_EQ(ParentPid(42, root), 17);
  std::filesystem::create_directories(root + "/43");
  std::ofstream(root + "/43/stat") << "43 (broken";
  EXPECT_FALSE(ParentPid(43, root).has_value());
  EXPECT_FALSE(ParentPid(44, root).has_value());  // gone
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace wattcut::agent
