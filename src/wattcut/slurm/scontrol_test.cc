// RunScontrol and RecordAdminComment against a stand-in scontrol (a shell script that answers
// `show job -o` with a line and records each call): how the command is run, bounded and read.
// The real scontrol is run by tests/slurm/slurm_spank_e2e_test.py.
#include "wattcut/slurm/scontrol.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace wattcut::slurm {
namespace {

struct StandIn {
  StandIn(const std::string& script_body) {
    std::string pattern = (std::filesystem::temp_directory_path() / "wcscontrol-XXXXXX").string();
    dir = ::mkdtemp(pattern.data()) ? pattern : "";
    path = dir + "/scontrol";
    calls = dir + "/calls";
    std::ofstream(path) << "#!/bin/sh\nprintf '%s|' \"$@\" >> " << calls << "\necho >> " << calls << "\n"
                        << script_body;
    ::chmod(path.c_str(), 0755);
  }
  ~StandIn() {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
  std::string Calls() const {
    std::ifstream in(calls);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  std::string dir, path, calls;
};

TEST(Scontrol, TheAdminCommentIsReadMergedAndWrittenWithoutAShell) {
  StandIn scontrol(
      "if [ \"$1\" = show ]; then echo 'JobId=7 JobName=a b AdminComment=ops note; wattcut[n1]: old Reason=None'; "
      "fi\n");
  ASSERT_TRUE(RecordAdminComment(scontrol.path, "7", "n1", "wattcut[n1]: GPUs 0 used 5.0 J in 2 s").ok());
  EXPECT_EQ(scontrol.Calls(),
            "show|job|-o|7|\n"
            "update|JobId=7|AdminComment=ops note; wattcut[n1]: GPUs 0 used 5.0 J in 2 s|\n");
}

TEST(Scontrol, AFinishedJobsAdminCommentGoesToItsAccountingRecord) {
  StandIn scontrol(
      "if [ \"$1\" = show ]; then echo 'JobId=7 AdminComment=(null) Reason=None'; exit 0; fi\n"
      "echo 'slurm_update error: Job has already finished' >&2; exit 1\n");
  // sacct and sacctmgr beside it record their calls in the same file.
  for (const char* name : {"sacct", "sacctmgr"}) {
    std::ofstream(scontrol.dir + "/" + name)
        << "#!/bin/sh\nprintf '" << name << ":' >> " << scontrol.calls << "\nprintf '%s|' \"$@\" >> " << scontrol.calls
        << "\necho >> " << scontrol.calls << "\n"
        << (std::string(name) == "sacct" ? "echo 'ops note'\n" : "");
    ::chmod((scontrol.dir + "/" + name).c_str(), 0755);
  }
  ASSERT_TRUE(RecordAdminComment(scontrol.path, "7", "n1", "wattcut[n1]: GPUs 0 used 5.0 J in 2 s").ok());
  const std::string calls = scontrol.Calls();
  EXPECT_NE(calls.find("sacct:-n|-P|-X|-j|7|-o|AdminComment|"), std::string::npos) << calls;
  EXPECT_NE(calls.find("sacctmgr:-i|update|job|where|jobid=7|set|AdminComment=ops note; wattcut[n1]: GPUs 0 used "
                       "5.0 J in 2 s|"),
            std::string::npos)
      << calls;
}

TEST(Scontrol, WithoutAccountingAFinishedJobsCommentIsRefusedSayingWhy) {
  StandIn scontrol(
      "if [ \"$1\" = show ]; then exit 0; fi\necho 'slurm_update error: Job has already finished' >&2; exit 1\n");
  std::ofstream(scontrol.dir + "/sacct")
      << "#!/bin/sh\necho 'sacct: error: Problem talking to the database' >&2; exit 1\n";
  ::chmod((scontrol.dir + "/sacct").c_str(), 0755);
  Status refused = RecordAdminComment(scontrol.path, "7", "n1", "x");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message,
            "the job has finished, and its accounting record cannot be read (sacct -n failed (status 1): sacct: "
            "error: Problem talking to the database)");
}

// A warning on stderr from a command that succeeds is not part of its answer: sacct warning
// about its database must not land in the AdminComment written back.
TEST(Scontrol, WhatACommandWarnsOnStderrIsNotItsAnswer) {
  StandIn scontrol(
      "echo 'scontrol: warning: a deprecated option' >&2\n"
      "if [ \"$1\" = show ]; then echo 'JobId=7 AdminComment=(null) Reason=None'; exit 0; fi\n"
      "echo 'slurm_update error: Job has already finished' >&2; exit 1\n");
  auto shown = RunSlurmCommand(scontrol.path, {"show", "job", "-o", "7"});
  ASSERT_TRUE(shown.ok()) << shown.error().message;
  EXPECT_EQ(*shown, "JobId=7 AdminComment=(null) Reason=None\n");
  std::ofstream(scontrol.dir + "/sacct") << "#!/bin/sh\necho 'sacct: warning: slow database' >&2\necho 'ops note'\n";
  std::ofstream(scontrol.dir + "/sacctmgr")
      << "#!/bin/sh\nprintf 'sacctmgr:' >> " << scontrol.calls << "\nprintf '%s|' \"$@\" >> " << scontrol.calls << "\n";
  for (const char* name : {"sacct", "sacctmgr"}) ::chmod((scontrol.dir + "/" + name).c_str(), 0755);
  ASSERT_TRUE(RecordAdminComment(scontrol.path, "7", "n1", "wattcut[n1]: x").ok());
  EXPECT_NE(scontrol.Calls().find("sacctmgr:-i|update|job|where|jobid=7|set|AdminComment=ops note; wattcut[n1]: x|"),
            std::string::npos)
      << scontrol.Calls();
  // A failure says what it printed on stdout when its stderr is empty.
  StandIn quiet("echo 'Invalid job id specified'; exit 1\n");
  auto failed = RunSlurmCommand(quiet.path, {"show", "job", "-o", "9"});
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().message, "scontrol show failed (status 1): Invalid job id specified");
}

TEST(Scontrol, AFailureSaysWhatScontrolSaidAndAHangIsCutShort) {
  StandIn failing("echo 'slurm_update error: Access/permission denied' >&2; exit 1\n");
  auto failed = RunSlurmCommand(failing.path, {"update", "JobId=7"});
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().message, "scontrol update failed (status 1): slurm_update error: Access/permission denied");
  StandIn hanging("exec sleep 30\n");
  auto hung = RunSlurmCommand(hanging.path, {"show"}, /*timeout_s=*/0.3);
  ASSERT_FALSE(hung.ok());
  EXPECT_EQ(hung.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(hung.error().message.find("killed"), std::string::npos);
  auto missing = RunSlurmCommand("/nonexistent/scontrol", {"show"});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(missing.error().message.find("cannot run /nonexistent/scontrol"), std::string::npos)
      << missing.error().message;
}

}  // namespace
}  // namespace wattcut::slurm
