#include "tests/server/planned_job.h"

#include <gtest/gtest.h>

#include "tests/server/server_process.h"
#include "tests/server/test_profiles.h"

namespace wattcut::testing {

using nlohmann::json;

std::string RegisterPlannedJob(httplib::Client& c) {
  auto job = Post(c, "/register_job",
                  {{"pp_degree", kPlannedPp},
                   {"dp_degree", kPlannedDp},
                   {"tp_degree", 1},
                   {"world_size", kPlannedWorld},
                   {"planner", {{"num_microbatches", kPlannedMicrobatches}}}});
  EXPECT_EQ(job.status, 200) << job.text;
  const std::string path = EncodeJobIdForPath(job.body.get<std::string>());
  for (int r = 0; r < kPlannedWorld; ++r) {
    auto reply = Post(c, "/register_rank/" + path,
                      {{"rank", r},
                       {"dp_rank", r / kPlannedPp},
                       {"pp_rank", r % kPlannedPp},
                       {"tp_rank", 0},
                       {"available_frequencies", TestFrequencies()}});
    EXPECT_EQ(reply.status, 200) << reply.text;
  }
  EXPECT_EQ(Put(c, "/v1/jobs/" + path + "/profile", {{"csv", TestProfileCsv(kPlannedPp)}}).status, 202);
  EXPECT_EQ(WaitForFrontier(c, path).value("state", ""), "ready");
  return path;
}

std::vector<json> FetchAll(httplib::Client& c, const std::string& path, int step, uint64_t version) {
  std::vector<json> out;
  for (int r = 0; r < kPlannedWorld; ++r) {
    auto d = Get(c, "/v1/jobs/" + path + "/deployment?rank=" + std::to_string(r) + "&step=" + std::to_string(step) +
                        "&version=" + std::to_string(version));
    EXPECT_EQ(d.status, 200) << d.text;
    out.push_back(d.body);
  }
  return out;
}

}  // namespace wattcut::testing
