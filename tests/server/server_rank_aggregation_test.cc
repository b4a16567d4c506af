// Per-rank profiles with a frequency one tensor-parallel rank lacks (issue 15): the server
// plans exactly like the same rank profiles with that measurement removed for every rank,
// and the job's status names the frequency it left out, also after a restart.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "tests/server/server_process.h"
#include "wattcut/base/shared_data_testing.h"
#include "wattcut/profile/profile_csv.h"

namespace wattcut::testing {
namespace {

using nlohmann::json;

constexpr int kAggregatedJobStages = 8;
constexpr int kAggregatedJobTp = 2;

// Registers a pp=8, dp=1, tp=2 job of the GPT-3 profile's planner settings and its ranks
// (rank = stage * 2 + tp_rank); returns the job id.
std::string RegisterJob(httplib::Client& c, const std::vector<int>& freqs) {
  auto job = Post(c, "/register_job",
                  {{"pp_degree", kAggregatedJobStages},
                   {"dp_degree", 1},
                   {"tp_degree", kAggregatedJobTp},
                   {"world_size", kAggregatedJobStages * kAggregatedJobTp},
                   {"planner", {{"num_microbatches", 12}, {"p2p_power_w", 83.64}}}});
  EXPECT_EQ(job.status, 200) << job.text;
  std::string id = job.body.get<std::string>();
  for (int s = 0; s < kAggregatedJobStages; ++s) {
    for (int t = 0; t < kAggregatedJobTp; ++t) {
      auto r = Post(c, "/register_rank/" + id,
                    {{"rank", s * kAggregatedJobTp + t},
                     {"dp_rank", 0},
                     {"pp_rank", s},
                     {"tp_rank", t},
                     {"available_frequencies", freqs}});
      EXPECT_EQ(r.status, 200) << r.text;
    }
  }
  return id;
}

// Uploads the stage profile as 2-way tensor-parallel rank profiles: both tp ranks take the
// stage's time and draw half its energy (their aggregate is the stage profile itself).
// Stage 0's 1410 MHz forward is left out for the tp ranks in `skip_tp_ranks`. Returns the
// last upload's reply.
HttpReply UploadRankProfiles(httplib::Client& c, const std::string& id, const Profile& profile,
                             const std::set<int>& skip_tp_ranks) {
  HttpReply last;
  for (int s = 0; s < kAggregatedJobStages; ++s) {
    for (int t = 0; t < kAggregatedJobTp; ++t) {
      json body = {{"rank", s * kAggregatedJobTp + t}, {"dp_rank", 0}, {"pp_rank", s}, {"tp_rank", t}};
      for (InstructionKind kind : {InstructionKind::kForward, InstructionKind::kBackward}) {
        json times = json::object(), energies = json::object();
        for (const Measurement& m : profile.measurements(s, kind)) {
          if (s == 0 && kind == InstructionKind::kForward && m.freq_mhz == 1410 && skip_tp_ranks.count(t)) continue;
          times[std::to_string(m.freq_mhz)] = m.time_s;
          energies[std::to_string(m.freq_mhz)] = m.energy_j / 2;
        }
        body[std::string(InstructionName(kind)) + "_time"] = times;
        body[std::string(InstructionName(kind)) + "_energy"] = energies;
      }
      last = Post(c, "/v1/jobs/" + id + "/rank_profiles", body);
      EXPECT_EQ(last.status, 200) << last.text;
    }
  }
  return last;
}

// Everything the server plans for a job: its frontier points and every rank's schedule at
// the fastest and at the minimum-energy point.
json Plans(httplib::Client& c, const std::string& id) {
  json out;
  out["points"] = Get(c, "/v1/jobs/" + id + "/frontier/points?offset=0&limit=10000").body["points"];
  for (const char* point : {"fastest", "min_energy"}) {
    EXPECT_EQ(Put(c, "/v1/jobs/" + id + "/plan", {{"point", point}}).status, 200);
    for (int r = 0; r < kAggregatedJobStages * kAggregatedJobTp; ++r) {
      auto preview = Get(c, "/v1/jobs/" + id + "/schedule?rank=" + std::to_string(r));
      EXPECT_EQ(preview.status, 200) << preview.text;
      out[point].push_back({preview.body["plan_index"], preview.body["frequencies"]});
    }
  }
  return out;
}

const char kWarning[] =
    "stage 0 forward 1410 MHz is not used: rank 1 (dp_rank 0, tp_rank 1) did not measure it (1 of 2 ranks of the "
    "stage); a frequency is used only where every rank of the stage measured it";

TEST(ServerRankAggregation, ATpRankLackingAFrequencyPlansLikeTheRankProfilesWithoutItAndIsReported) {
  WATTCUT_REQUIRE_SHARED_FILE(path, "perseus-sosp24/stage_profile/gpt3-175b+a100_sxm_bf16.csv");
  Result<Profile> profile = ReadProfileCsv(path, kAggregatedJobStages);
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  std::vector<int> freqs;
  for (const Measurement& m : profile->measurements(0, InstructionKind::kForward)) freqs.push_back(m.freq_mhz);

  ScopedTempDir data("rank-aggregation");
  std::string partial, reduced;
  json partial_plans, reduced_plans;
  {
    ServerProcess server({}, data.path());
    ASSERT_TRUE(server.running()) << server.startup_output();
    auto c = server.Client();
    partial = RegisterJob(*c, freqs);
    reduced = RegisterJob(*c, freqs);
    HttpReply partial_upload = UploadRankProfiles(*c, partial, *profile, {1});
    HttpReply reduced_upload = UploadRankProfiles(*c, reduced, *profile, {0, 1});
    // The upload that completes the job says what was left out.
    ASSERT_EQ(partial_upload.body["profile_warnings"].size(), 1u) << partial_upload.text;
    EXPECT_EQ(partial_upload.body["profile_warnings"][0]["message"], kWarning);
    EXPECT_EQ(reduced_upload.body["profile_warnings"], json::array()) << reduced_upload.text;

    json partial_status = WaitForFrontier(*c, partial);
    json reduced_status = WaitForFrontier(*c, reduced);
    ASSERT_EQ(partial_status["state"], "ready") << partial_status.dump();
    ASSERT_EQ(reduced_status["state"], "ready") << reduced_status.dump();
    EXPECT_EQ(partial_status["num_points"], 640);  // as `wattcut frontier` on the reduced profile
    partial_plans = Plans(*c, partial);
    reduced_plans = Plans(*c, reduced);
    EXPECT_EQ(partial_plans["points"].size(), 640u);
    EXPECT_TRUE(partial_plans == reduced_plans) << "the two jobs plan differently";

    json job = Get(*c, "/v1/jobs/" + partial).body;
    EXPECT_EQ(job["profile_source"], "rank_profiles");
    EXPECT_EQ(job["profile_warnings"],
              json::parse(std::string(R"([{"stage": 0, "instruction": "forward", "freq_mhz": 1410, "missing_ranks":
                  [{"rank": 1, "dp_rank": 0, "tp_rank": 1}], "stage_ranks": 2, "message": ")") +
                          kWarning + "\"}]"));
    EXPECT_EQ(Get(*c, "/v1/jobs/" + reduced).body["profile_warnings"], json::array());
    ASSERT_EQ(server.Stop(), 0);
  }
  // After a restart the stored profile plans the same and the warning is still there.
  ServerProcess server({}, data.path());
  ASSERT_TRUE(server.running()) << server.startup_output();
  auto c = server.Client();
  ASSERT_EQ(WaitForFrontier(*c, partial)["state"], "ready");
  ASSERT_EQ(WaitForFrontier(*c, reduced)["state"], "ready");
  EXPECT_TRUE(Plans(*c, partial) == partial_plans);
  json job = Get(*c, "/v1/jobs/" + partial).body;
  ASSERT_EQ(job["profile_warnings"].size(), 1u) << job.dump();
  EXPECT_EQ(job["profile_warnings"][0]["message"], kWarning);
  EXPECT_EQ(Get(*c, "/v1/jobs/" + reduced).body["profile_warnings"], json::array());
}

TEST(ServerRankAggregation, APerRankCsvUploadIsReportedTheSameWay) {
  ServerProcess server;
  ASSERT_TRUE(server.running()) << server.startup_output();
  auto c = server.Client();
  auto job = Post(*c, "/register_job",
                  {{"pp_degree", 1},
                   {"dp_degree", 1},
                   {"tp_degree", 2},
                   {"world_size", 2},
                   {"planner", {{"num_microbatches", 2}, {"p2p_power_w", 80}}}});
  ASSERT_EQ(job.status, 200) << job.text;
  std::string id = job.body.get<std::string>();
  auto upload = Put(*c, "/v1/jobs/" + id + "/profile",
                    {{"csv",
                      "rank,dp_rank,pp_rank,tp_rank,stage,instruction,frequency,time,energy\n"
                      "0,0,0,0,0,forward,1410,0.1,10\n"
                      "0,0,0,0,0,forward,1200,0.12,9\n1,0,0,1,0,forward,1200,0.12,9\n"
                      "0,0,0,0,0,backward,1410,0.2,20\n1,0,0,1,0,backward,1410,0.2,20\n"}});
  ASSERT_EQ(upload.status, 202) << upload.text;
  json warnings = Get(*c, "/v1/jobs/" + id).body["profile_warnings"];
  ASSERT_EQ(warnings.size(), 1u) << warnings.dump();
  EXPECT_EQ(warnings[0]["message"], kWarning);
}

}  // namespace
}  // namespace wattcut::testing
