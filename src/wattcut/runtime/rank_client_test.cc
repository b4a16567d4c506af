#include "wattcut/runtime/rank_client.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "wattcut/gpu/fake_nvml/fake_nvml_test_support.h"
#include "wattcut/runtime/test_plan_server.h"

namespace wattcut {
namespace {

using fake_nvml::ScopedFakeNvml;

const bool kLibraryPathSet = (fake_nvml::EnsureLibraryPath(WATTCUT_FAKE_NVML_DIR), true);

// Two fake GPUs with three SM clocks: 1410, 1110, 810 MHz.
fake_nvml::State SmallGpus() { return {{"gpu_count", "2"}, {"min_mhz", "810"}, {"step_mhz", "300"}}; }

RankClientOptions Options(const std::string& url, const std::string& job, int pp_rank) {
  RankClientOptions options;
  options.server.url = url;
  options.job_id = job;
  options.ids = {.rank = pp_rank, .dp_rank = 0, .pp_rank = pp_rank, .tp_rank = 0};
  options.gpu = pp_rank;
  options.profiler.warmup_iterations = 0;
  options.profiler.measured_iterations = 1;
  options.profiler.sample_interval_s = 0.002;
  options.schedule_timeout_s = 60;
  return options;
}

// The instructions of a 2-stage, 2-microbatch 1F1B iteration.
std::vector<std::string> Instructions(int stage) {
  return stage == 0 ? std::vector<std::string>{"forward", "forward", "backward", "backward"}
                    : std::vector<std::string>{"forward", "backward", "forward", "backward"};
}

// One instruction on the fake GPU: its time stretches with the locked clock (the fake's clock does
// not slow the CPU), so the profile has a real time/energy trade-off.
int RunInstruction(RankClient& client, const std::string& name, int stage) {
  EXPECT_TRUE(client.WaitUntilFrequencyApplied().ok());
  const int clock_mhz = client.SmClockMhz().value();
  const double base_s = (name == "forward" ? 0.004 : 0.008) * (stage == 1 ? 1.5 : 1.0);
  std::this_thread::sleep_for(std::chrono::duration<double>(base_s * 1410.0 / clock_mhz));
  return clock_mhz;
}

struct RankRun {
  std::vector<std::vector<ScheduleEntry>> planned;  // per planned step
  std::vector<std::vector<int>> locked;             // the clock each instruction ran at
  std::string error;
};

// A rank's whole life: profile, upload, then `planned_steps` steps on the server's plans.
void RunRank(RankClient& client, int stage, int planned_steps, RankRun& run) {
  auto fail = [&](const std::string& what, const Status& s) { run.error = what + ": " + s.error().message; };
  while (!client.profiling_done_locally()) {
    if (Status s = client.OnStepBegin(); !s.ok()) return fail("profiling step begin", s);
    for (const auto& name : Instructions(stage)) {
      if (auto f = client.OnInstructionBegin(name); !f.ok()) return fail("profiling instruction", f.error());
      RunInstruction(client, name, stage);
      if (Status s = client.OnInstructionEnd(name); !s.ok()) return fail("profiling instruction end", s);
    }
    if (Status s = client.OnStepEnd(); !s.ok()) return fail("profiling step end", s);
  }
  if (Status s = client.FinishProfiling(); !s.ok()) return fail("finish profiling", s);
  for (int step = 0; step < planned_steps; ++step) {
    if (Status s = client.OnStepBegin(); !s.ok()) return fail("step begin", s);
    run.planned.push_back(client.schedule());
    run.locked.emplace_back();
    for (const auto& name : Instructions(stage)) {
      auto f = client.OnInstructionBegin(name);
      if (!f.ok()) return fail("instruction", f.error());
      run.locked.back().push_back(RunInstruction(client, name, stage));
      if (Status s = client.OnInstructionEnd(name); !s.ok()) return fail("instruction end", s);
    }
    if (Status s = client.OnStepEnd(); !s.ok()) return fail("step end", s);
  }
}

TEST(RankClient, ProfilesUploadsAndFollowsTheServersPlanOnFakeGpus) {
  ScopedFakeNvml fake(SmallGpus());
  testing::TestPlanServer server;
  auto api = PlanServerClient::Create({.url = server.url()});
  auto job = api->RegisterJob({.pp_degree = 2, .world_size = 2, .num_microbatches = 2, .p2p_power_w = 60});
  ASSERT_TRUE(job.ok()) << job.error().message;

  std::vector<std::unique_ptr<RankClient>> clients;
  for (int stage = 0; stage < 2; ++stage) {
    auto client = RankClient::Start(Options(server.url(), *job, stage));
    ASSERT_TRUE(client.ok()) << client.error().message;
    EXPECT_EQ((*client)->available_freqs_mhz(), (std::vector<int>{1410, 1110, 810}));
    EXPECT_EQ((*client)->phase(), RankClient::Phase::kProfiling);
    clients.push_back(std::move(*client));
  }
  EXPECT_FALSE(clients[0]->FinishProfiling().ok());  // frequencies left to measure
  auto outside_step = clients[0]->OnInstructionBegin("forward");
  ASSERT_FALSE(outside_step.ok());
  EXPECT_NE(outside_step.error().message.find("while profiling, call on_step_begin before"), std::string::npos);

  std::vector<RankRun> runs(2);
  std::vector<std::thread> threads;
  for (int stage = 0; stage < 2; ++stage) {
    threads.emplace_back([&, stage] { RunRank(*clients[stage], stage, 12, runs[stage]); });
  }
  for (auto& t : threads) t.join();

  bool saw_plan_below_max = false;
  for (int stage = 0; stage < 2; ++stage) {
    const RankRun& run = runs[stage];
    ASSERT_EQ(run.error, "") << "stage " << stage;
    EXPECT_EQ(clients[stage]->profiled_rows().size(), 6u);  // 3 clocks x forward/backward
    ASSERT_EQ(run.planned.size(), 12u);
    for (size_t step = 0; step < run.planned.size(); ++step) {
      ASSERT_EQ(run.planned[step].size(), 4u);
      for (size_t i = 0; i < 4; ++i) {
        EXPECT_EQ(run.planned[step][i].instruction, Instructions(stage)[i]);
        // Every instruction ran at exactly the planned clock.
        EXPECT_EQ(run.locked[step][i], run.planned[step][i].freq_mhz) << "stage " << stage << " step " << step;
        saw_plan_below_max = saw_plan_below_max || run.planned[step][i].freq_mhz < 1410;
      }
    }
  }
  // Stage 0 has slack next to the slower stage 1: the fastest plan slows some of its work.
  EXPECT_TRUE(saw_plan_below_max);

  for (auto& client : clients) ASSERT_TRUE(client->Close().ok());
  const auto state = fake.Read();
  EXPECT_EQ(state.at("gpu0.locked_max"), "0");
  EXPECT_EQ(state.at("gpu1.locked_max"), "0");
}

TEST(RankClient, ReportsMistakesOfTheTrainingLoop) {
  ScopedFakeNvml fake(SmallGpus());
  testing::TestPlanServer server;
  auto api = PlanServerClient::Create({.url = server.url()});
  auto job = api->RegisterJob({.pp_degree = 1, .world_size = 1, .num_microbatches = 2});
  ASSERT_TRUE(job.ok());

  RankClientOptions options = Options(server.url(), *job, 0);
  options.profile = false;
  auto client = RankClient::Start(options);
  ASSERT_TRUE(client.ok()) << client.error().message;
  // No profile on the server: with profile=false the server's own sweep serves the first clock.
  ASSERT_TRUE((*client)->OnStepBegin().ok());
  EXPECT_FALSE((*client)->OnStepBegin().ok());  // twice
  auto wrong = (*client)->OnInstructionBegin("backward");
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.error().message.find("is 'forward' in the plan, but the job ran 'backward'"), std::string::npos)
      << wrong.error().message;
  EXPECT_FALSE((*client)->FinishProfiling().ok());
  ASSERT_TRUE((*client)->Close().ok());
  EXPECT_FALSE((*client)->OnStepEnd().ok());

  RankClientOptions bad_gpu = Options(server.url(), *job, 0);
  bad_gpu.gpu = 7;
  auto no_gpu = RankClient::Start(bad_gpu);
  ASSERT_FALSE(no_gpu.ok());
  EXPECT_NE(no_gpu.error().message.find("GPU 7 does not exist"), std::string::npos) << no_gpu.error().message;

  RankClientOptions unknown_job = Options(server.url(), "no-such-job", 0);
  auto refused = RankClient::Start(unknown_job);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("HTTP 404"), std::string::npos) << refused.error().message;
  EXPECT_EQ(fake.Read().at("gpu0.locked_max"), "0");  // the setter that started was stopped again
}

}  // namespace
}  // namespace wattcut
