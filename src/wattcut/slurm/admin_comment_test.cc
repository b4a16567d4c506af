#include "wattcut/slurm/admin_comment.h"

#include <gtest/gtest.h>

namespace wattcut::slurm {
namespace {

AgentJobEnd End(std::optional<double> energy_j) {
  AgentJobEnd end;
  end.gpus = {0, 1, 2, 3, 6};
  end.duration_s = 33.6;
  end.gpu_energy_j = energy_j;
  return end;
}

TEST(AdminComment, OneEntryPerNodeWithItsGpusEnergyAndTime) {
  EXPECT_EQ(JobEnergyEntry("node01", End(12345.64)), "wattcut[node01]: GPUs 0-3,6 used 12345.6 J in 34 s");
  EXPECT_EQ(JobEnergyEntry("node01", End(std::nullopt)),
            "wattcut[node01]: GPUs 0-3,6 used an unknown energy (a GPU has no energy counter) in 34 s");
}

TEST(AdminComment, ANodesEntryReplacesItsEarlierOneAndKeepsEverythingElse) {
  const std::string a = "wattcut[a]: GPUs 0 used 1.0 J in 1 s", b = "wattcut[b]: GPUs 0 used 2.0 J in 1 s";
  EXPECT_EQ(MergeAdminComment("", "a", a), a);
  EXPECT_EQ(MergeAdminComment(a, "b", b), a + "; " + b);
  EXPECT_EQ(MergeAdminComment(a + "; " + b, "a", "wattcut[a]: new"), b + "; wattcut[a]: new");
  EXPECT_EQ(MergeAdminComment("checked by ops", "a", a), "checked by ops; " + a);
  EXPECT_EQ(MergeAdminComment("wattcut[ab]: x", "a", a), "wattcut[ab]: x; " + a) << "node 'ab' is not node 'a'";
}

TEST(AdminComment, ReadFromScontrolsOneLineOutput) {
  EXPECT_EQ(AdminCommentOf("JobId=5 JobName=x UserId=root(0) Comment=hi AdminComment=wattcut[n]: GPUs 0 used 1.0 J "
                           "in 1 s; ops note OverSubscribe=OK Contiguous=0\n"),
            "wattcut[n]: GPUs 0 used 1.0 J in 1 s; ops note");
  EXPECT_EQ(AdminCommentOf("JobId=5 JobName=x AdminComment=last\n"), "last");
  EXPECT_EQ(AdminCommentOf("JobId=5 JobName=x Comment=AdminComment=no\n"), "");
  EXPECT_EQ(AdminCommentOf("JobId=5 JobName=x\n"), "");
  EXPECT_EQ(AdminCommentOf("JobId=5 AdminComment=(null) Reason=None\n"), "");
}

}  // namespace
}  // namespace wattcut::slurm
