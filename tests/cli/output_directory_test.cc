// `--out DIR` of frontier, emulate and polca as users write it, and the hidden staging
// folders (`.NAME.partial-PID`) an interrupted or crashed run used to leave behind.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "tests/cli/command_runner.h"

extern char** environ;

namespace wattcut {
namespace {

namespace fs = std::filesystem;
using testing::RunWattcut;
using testing::TempDir;

// A one-hour trace: one request a second.
std::string WriteTrace(const std::string& dir) {
  const std::string path = dir + "/trace.csv";
  std::ofstream out(path);
  out << "TIMESTAMP,ContextTokens,GeneratedTokens\n";
  for (int s = 0; s < 3600; ++s) {
    char line[64];
    std::snprintf(line, sizeof line, "2023-11-16 %02d:%02d:%02d,%d,%d\n", 10 + s / 3600, (s / 60) % 60, s % 60,
                  100 + s % 900, 10 + s % 200);
    out << line;
  }
  return path;
}

// The hidden folders beside `dir`'s entries whose name starts with ".".
std::vector<std::string> HiddenEntries(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with(".")) names.push_back(name);
  }
  return names;
}

// A process id that no process has: a child that has exited and been reaped.
pid_t DeadPid() {
  const pid_t child = fork();
  if (child == 0) _exit(0);
  int status = 0;
  waitpid(child, &status, 0);
  return child;
}

TEST(OutputDirectory, TrailingSlashWorksForFrontierEmulateAndPolca) {
  TempDir dir;
  const std::string trace = WriteTrace(dir.path());
  const std::vector<std::pair<std::string, std::string>> commands = {
      {"frontier --stages 4 --microbatches 4 --plans ends --out ", "frontier.csv"},
      {"emulate --stages 4 --microbatches 4 --out ", "summary.json"},
      {"polca simulate --trace " + trace + " --duration 1h --out ", "summary.json"},
  };
  int n = 0;
  for (const auto& [command, file] : commands) {
    const std::string out = dir.path() + "/run" + std::to_string(n++);
    auto result = RunWattcut(command + out + "/");
    ASSERT_EQ(result.exit_code, 0) << command << "\n" << result.err;
    EXPECT_TRUE(fs::exists(out + "/" + file)) << command;
    // What it says it wrote is one path each, as given but for the slash.
    EXPECT_EQ(result.out.find("//"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("wrote " + out), std::string::npos) << result.out;
    // Nothing inside DIR or beside it but what was asked for.
    EXPECT_TRUE(HiddenEntries(out).empty()) << command;
    EXPECT_TRUE(HiddenEntries(dir.path()).empty()) << command;
  }
}

TEST(OutputDirectory, EveryFormOfThePathNamesTheSameDirectory) {
  TempDir dir;
  fs::create_directories(dir.path() + "/a/b");
  const std::string relative = fs::relative(dir.path(), fs::current_path()).string();
  const std::vector<std::string> forms = {
      dir.path() + "/one//", dir.path() + "/a/b/../two",  dir.path() + "/three/.",
      relative + "/four",    dir.path() + "/a/./b/five/",
  };
  const std::vector<std::string> expected = {"one", "a/two", "three", "four", "a/b/five"};
  for (size_t i = 0; i < forms.size(); ++i) {
    auto result = RunWattcut("frontier --stages 2 --microbatches 2 --plans ends --out " + forms[i]);
    ASSERT_EQ(result.exit_code, 0) << forms[i] << "\n" << result.err;
    EXPECT_TRUE(fs::exists(dir.path() + "/" + expected[i] + "/frontier.csv")) << forms[i];
  }
  // The overwrite rules hold through any form: the same directory is not empty now.
  auto again = RunWattcut("frontier --stages 2 --microbatches 2 --out " + dir.path() + "/a/b/../two/");
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.err.find("directory exists and is not empty (pass --overwrite to replace it)"), std::string::npos)
      << again.err;
  auto replaced = RunWattcut("frontier --stages 2 --microbatches 2 --overwrite --out " + dir.path() + "/a/b/../two/");
  EXPECT_EQ(replaced.exit_code, 0) << replaced.err;
  EXPECT_TRUE(HiddenEntries(dir.path() + "/a").empty());
}

TEST(OutputDirectory, ABadOutIsRefusedBeforeAnythingIsReadOrComputed) {
  TempDir dir;
  const std::string file = dir.path() + "/file";
  std::ofstream(file) << "x";
  // The trace does not exist: the --out problem is found first.
  auto onto_file = RunWattcut("polca simulate --trace " + dir.path() + "/missing.csv --out " + file);
  EXPECT_EQ(onto_file.exit_code, 1);
  EXPECT_EQ(onto_file.err, "wattcut polca simulate: error: " + file + ": exists and is not a directory\n");
  auto under_file = RunWattcut("polca sweep --trace " + dir.path() + "/missing.csv --out " + file + "/run");
  EXPECT_EQ(under_file.exit_code, 1);
  EXPECT_NE(under_file.err.find(file + "/run: cannot create the output directory: " + file + " is not a directory"),
            std::string::npos)
      << under_file.err;
  auto root = RunWattcut("frontier --out /");
  EXPECT_EQ(root.exit_code, 1);
  EXPECT_NE(root.err.find("the output directory cannot be the root directory"), std::string::npos) << root.err;
  auto empty = RunWattcut("emulate --out ''");
  EXPECT_EQ(empty.exit_code, 1);
  EXPECT_NE(empty.err.find("--out: expected a directory, got an empty path"), std::string::npos) << empty.err;
  EXPECT_TRUE(HiddenEntries(dir.path()).empty());
}

TEST(OutputDirectory, StalePartialFolderOfADeadProcessIsRemoved) {
  TempDir dir;
  const std::string stale = dir.path() + "/.run.partial-" + std::to_string(DeadPid());
  fs::create_directories(stale + "/plans");
  std::ofstream(stale + "/frontier.csv") << "half a file";
  auto result = RunWattcut("frontier --stages 2 --microbatches 2 --plans ends --out " + dir.path() + "/run");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(dir.path() + "/run/frontier.csv"));
}

TEST(OutputDirectory, PartialFoldersOfLiveProcessesAndOtherNamesAreLeftAlone) {
  TempDir dir;
  const std::string dead = std::to_string(DeadPid());
  const std::vector<std::string> kept = {
      ".run.partial-" + std::to_string(getpid()),  // this test is alive: its run may be in progress
      ".run.partial-1",                            // init, always alive
      ".other.partial-" + dead,                    // another output directory's
      ".run.partial-12ab",                         // not a process id
      ".run.old-" + dead,                          // a previous output being replaced: never deleted here
  };
  for (const std::string& name : kept) fs::create_directories(dir.path() + "/" + name);
  auto result = RunWattcut("frontier --stages 2 --microbatches 2 --plans ends --out " + dir.path() + "/run");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  for (const std::string& name : kept) EXPECT_TRUE(fs::exists(dir.path() + "/" + name)) << name;
}

TEST(OutputDirectory, SigtermRemovesThePartialFolderAndEndsTheRunAsTheSignalDoes) {
  TempDir dir;
  const std::string trace = WriteTrace(dir.path());
  const std::string out = dir.path() + "/run";
  // Thirty simulated days of 40 servers: minutes of work, interrupted as soon as it starts.
  std::vector<std::string> args = {WATTCUT_BINARY, "polca", "simulate", "--trace", trace,
                                   "--duration",   "30d",   "--out",    out};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&actions);

  const std::string partial = dir.path() + "/.run.partial-" + std::to_string(pid);
  bool started = false;
  for (int i = 0; i < 6000 && !started; ++i) {  // bounded wait (at most a minute), not a speed check
    started = fs::exists(partial);
    if (!started) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(started) << "the run never created " << partial;
  kill(pid, started ? SIGTERM : SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(started);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << "status " << status;
  EXPECT_FALSE(fs::exists(partial));
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
}  // namespace wattcut
