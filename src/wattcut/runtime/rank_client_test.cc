#include "wattcut/runtime/rank_client.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "wattcut/gpu/fake_nvml/fake_nvml_backend_testing.h"
#include "wattcut/gpu/fake_nvml/fake_nvml_test_support.h"
#include "wattcut/profile/gpu_model.h"
#include "wattcut/runtime/test_plan_server.h"

namespace wattcut {
namespace {

using fake_nvml::kLibraryPathSet;
using fake_nvml::ScopedFakeNvml;

// Fake GPUs with three SM clocks: 1410, 1110, 810 MHz.
fake_nvml::State SmallGpus(int count = 2) {
  return {{"gpu_count", std::to_string(count)}, {"min_mhz", "810"}, {"step_mhz", "300"}};
}

// Keeps the client's log lines (thread-safe: the watcher logs from its thread).
struct LogLines {
  std::mutex mutex;
  std::vector<std::string> lines;
  std::function<void(const std::string&)> Sink() {
    return [this](const std::string& line) {
      std::lock_guard lock(mutex);
      lines.push_back(line);
    };
  }
  std::vector<std::string> Lines() {
    std::lock_guard lock(mutex);
    return lines;
  }
};

RankClientOptions Options(const std::string& url, const std::string& job, int pp_rank, int dp_rank = 0,
                          int pp_degree = 2) {
  RankClientOptions options;
  options.server.url = url;
  options.job_id = job;
  const int rank = dp_rank * pp_degree + pp_rank;
  options.ids = {.rank = rank, .dp_rank = dp_rank, .pp_rank = pp_rank, .tp_rank = 0};
  options.gpu = rank;
  options.profiler.warmup_iterations = 0;
  options.profiler.measured_iterations = 1;
  options.profiler.sample_interval_s = 0.002;
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

struct StepRecord {
  uint64_t version = 0;                // the plan version the step ran
  std::vector<ScheduleEntry> planned;  // empty: at the highest clock, no plan
  std::vector<int> locked;             // the clock each instruction ran at
};

// One step of `client`; the error, if any.
std::string RunStep(RankClient& client, int stage, StepRecord* record = nullptr) {
  auto fail = [](const std::string& what, const Error& e) { return what + ": " + e.message; };
  if (Status s = client.OnStepBegin(); !s.ok()) return fail("step begin", s.error());
  if (record) {
    record->version = client.plan_version();
    record->planned = client.schedule();
  }
  for (const auto& name : Instructions(stage)) {
    auto f = client.OnInstructionBegin(name);
    if (!f.ok()) return fail("instruction", f.error());
    const int clock = RunInstruction(client, name, stage);
    if (record) record->locked.push_back(clock);
    if (Status s = client.OnInstructionEnd(name); !s.ok()) return fail("instruction end", s.error());
  }
  if (Status s = client.OnStepEnd(); !s.ok()) return fail("step end", s.error());
  return "";
}

// Every rank profiles until all are done (the Python layer's all-reduce), then uploads.
void ProfileAll(std::vector<std::unique_ptr<RankClient>>& clients, const std::vector<int>& stages) {
  for (int step = 0; step < 20; ++step) {
    bool all_done = true;
    for (auto& client : clients) all_done = all_done && client->profiling_done_locally();
    if (all_done) break;
    for (size_t r = 0; r < clients.size(); ++r) ASSERT_EQ(RunStep(*clients[r], stages[r]), "") << "rank " << r;
  }
  for (auto& client : clients) ASSERT_TRUE(client->FinishProfiling().ok());
}

TEST(RankClient, ProfilesUploadsAndFollowsTheServersPlanOnFakeGpus) {
  ScopedFakeNvml fake(SmallGpus());
  testing::TestPlanServer server;
  auto api = PlanServerClient::Create({.url = server.url()});
  auto job = api->RegisterJob({.pp_degree = 2, .world_size = 2, .num_microbatches = 2, .p2p_power_w = 60});
  ASSERT_TRUE(job.ok()) << job.error().message;

  LogLines log;
  std::vector<std::unique_ptr<RankClient>> clients;
  for (int stage = 0; stage < 2; ++stage) {
    RankClientOptions options = Options(server.url(), *job, stage);
    options.watcher.log = log.Sink();
    auto client = RankClient::Start(options);
    ASSERT_TRUE(client.ok()) << client.error().message;
    EXPECT_EQ((*client)->available_freqs_mhz(), (std::vector<int>{1410, 1110, 810}));
    EXPECT_EQ((*client)->phase(), RankClient::Phase::kProfiling);
    EXPECT_TRUE((*client)->watcher().connected());
    clients.push_back(std::move(*client));
  }
  EXPECT_FALSE(clients[0]->FinishProfiling().ok());  // frequencies left to measure
  auto outside_step = clients[0]->OnInstructionBegin("forward");
  ASSERT_FALSE(outside_step.ok());
  EXPECT_NE(outside_step.error().message.find("while profiling, call on_step_begin before"), std::string::npos);

  ProfileAll(clients, {0, 1});
  for (int stage = 0; stage < 2; ++stage) {
    EXPECT_EQ(clients[stage]->profiled_rows().size(), 6u);  // 3 clocks x forward/backward
    EXPECT_EQ(clients[stage]->phase(), RankClient::Phase::kPlanned);
  }

  // The upload goes out in the background; until the plan is deployed (and its apply step has
  // come) every instruction runs at the highest clock. Bounded: a plan within 3,000 steps.
  std::vector<std::vector<StepRecord>> runs(2);
  int planned_steps = 0;
  for (int step = 0; step < 3000 && planned_steps < 12; ++step) {
    for (int stage = 0; stage < 2; ++stage) {
      runs[stage].emplace_back();
      ASSERT_EQ(RunStep(*clients[stage], stage, &runs[stage].back()), "") << "stage " << stage;
    }
    if (!runs[0].back().planned.empty() && !runs[1].back().planned.empty()) ++planned_steps;
  }
  ASSERT_EQ(planned_steps, 12) << "no plan was deployed";

  bool saw_plan_below_max = false;
  for (int stage = 0; stage < 2; ++stage) {
    bool planned = false;
    for (const StepRecord& step : runs[stage]) {
      if (step.planned.empty()) {
        EXPECT_FALSE(planned) << "stage " << stage << ": back to no plan";
        EXPECT_EQ(step.version, 0u);
        EXPECT_EQ(step.locked, std::vector<int>(4, 1410));
        continue;
      }
      planned = true;
      EXPECT_GE(step.version, 1u);
      ASSERT_EQ(step.planned.size(), 4u);
      for (size_t i = 0; i < 4; ++i) {
        EXPECT_EQ(step.planned[i].instruction, Instructions(stage)[i]);
        EXPECT_EQ(step.locked[i], step.planned[i].freq_mhz);  // every instruction at the planned clock
        saw_plan_below_max = saw_plan_below_max || step.planned[i].freq_mhz < 1410;
      }
    }
  }
  // Stage 0 has slack next to the slower stage 1: the fastest plan slows some of its work.
  EXPECT_TRUE(saw_plan_below_max);
  EXPECT_EQ(clients[0]->watcher().queued_requests(), 0u);  // the upload was acknowledged
  EXPECT_EQ(clients[0]->watcher().outages(), 0u);

  for (auto& client : clients) ASSERT_TRUE(client->Close().ok());
  const auto state = fake.Read();
  EXPECT_EQ(state.at("gpu0.locked_max"), "0");
  EXPECT_EQ(state.at("gpu1.locked_max"), "0");
  // The first plan may come a few steps late (the server has not seen the job's step rate yet):
  // said in a warning. Nothing else is logged.
  for (const std::string& line : log.Lines()) {
    if (line.find("was due at step") == std::string::npos) ADD_FAILURE() << "unexpected log line: " << line;
  }
}

// The first step index at which `run` ran a schedule different from the step before, from
// `from` on; -1 when none.
int SwitchStep(const std::vector<StepRecord>& run, size_t from) {
  for (size_t s = std::max<size_t>(from, 1); s < run.size(); ++s) {
    if (run[s].planned != run[s - 1].planned) return static_cast<int>(s);
  }
  return -1;
}

// A profiling step whose clock cannot be locked or whose energy cannot be read (what an agent
// that is slow or down looks like to the rank) is not measured, and the training loop does not
// see it: the step runs, the next one profiles again, and profiling completes every frequency.
TEST(RankClient, AProfilingStepTheGpuCannotMeasureIsProfiledAgainAndTrainingGoesOn) {
  ScopedFakeNvml fake(SmallGpus(1));
  testing::TestPlanServer server;
  auto api = PlanServerClient::Create({.url = server.url()});
  auto job = api->RegisterJob({.pp_degree = 1, .world_size = 1, .num_microbatches = 2, .p2p_power_w = 60});
  ASSERT_TRUE(job.ok()) << job.error().message;
  LogLines log;
  RankClientOptions options = Options(server.url(), *job, 0, 0, /*pp_degree=*/1);
  options.watcher.log = log.Sink();
  auto client = RankClient::Start(options);
  ASSERT_TRUE(client.ok()) << client.error().message;
  RankClient& rank = **client;
  ASSERT_EQ(RunStep(rank, 0), "");  // 1410 MHz measured

  fake.Set("fail.nvmlDeviceGetTotalEnergyConsumption", "999");  // the counter cannot be read
  ASSERT_EQ(RunStep(rank, 0), "");
  ASSERT_EQ(RunStep(rank, 0), "");
  fake.Erase("fail.nvmlDeviceGetTotalEnergyConsumption");
  EXPECT_EQ(rank.unmeasured_profiling_steps(), 2u);
  ASSERT_EQ(RunStep(rank, 0), "");  // 1110 MHz measured
  EXPECT_EQ(rank.unmeasured_profiling_steps(), 2u);
  fake.Set("fail.nvmlDeviceSetGpuLockedClocks", "999");  // the next clock cannot be locked
  ASSERT_TRUE(rank.OnStepBegin().ok());
  for (const auto& name : Instructions(0)) {
    auto freq = rank.OnInstructionBegin(name);
    ASSERT_TRUE(freq.ok()) << freq.error().message;
    EXPECT_EQ(*freq, 810);  // the clock the profiler asked for
    ASSERT_TRUE(rank.OnInstructionEnd(name).ok());
  }
  ASSERT_TRUE(rank.OnStepEnd().ok());
  fake.Erase("fail.nvmlDeviceSetGpuLockedClocks");
  EXPECT_EQ(rank.unmeasured_profiling_steps(), 3u);
  EXPECT_EQ(rank.phase(), RankClient::Phase::kProfiling);

  for (int step = 0; step < 10 && !rank.profiling_done_locally(); ++step) ASSERT_EQ(RunStep(rank, 0), "");
  ASSERT_TRUE(rank.profiling_done_locally());
  EXPECT_EQ(rank.unmeasured_profiling_steps(), 3u);
  EXPECT_EQ(rank.steps_completed(), 6u);  // 3 clocks measured, 3 steps not
  std::set<int> measured;
  for (const ProfiledRow& row : rank.profiled_rows()) measured.insert(row.freq_mhz);
  EXPECT_EQ(measured, (std::set<int>{1410, 1110, 810}));
  ASSERT_TRUE(rank.FinishProfiling().ok());
  // One line when each run of failures starts, one when profiling goes on after it.
  int warned = 0, resumed = 0;
  for (const std::string& line : log.Lines()) {
    warned += line.find("could not be profiled") != std::string::npos;
    resumed += line.find("profiling goes on at step") != std::string::npos;
  }
  EXPECT_EQ(warned, 2);
  EXPECT_EQ(resumed, 2);
}

// Two pipelines of two stages against the real server: a straggler report for pipeline 0 moves
// both ranks of pipeline 1 to a slower plan at the same step, and the recovery moves them back at
// the same step; pipeline 0 keeps its plan throughout.
TEST(RankClient, AStragglerReportSwitchesTheOtherPipelineAtTheSameStepOnEachOfItsRanks) {
  ScopedFakeNvml fake(SmallGpus(4));
  testing::TestPlanServer server;
  auto api = PlanServerClient::Create({.url = server.url()});
  auto job =
      api->RegisterJob({.pp_degree = 2, .dp_degree = 2, .world_size = 4, .num_microbatches = 2, .p2p_power_w = 60});
  ASSERT_TRUE(job.ok()) << job.error().message;
  LogLines log;
  std::vector<std::unique_ptr<RankClient>> clients;
  std::vector<int> stages;
  for (int dp = 0; dp < 2; ++dp) {
    for (int stage = 0; stage < 2; ++stage) {
      RankClientOptions options = Options(server.url(), *job, stage, dp);
      options.watcher.log = log.Sink();
      auto client = RankClient::Start(options);
      ASSERT_TRUE(client.ok()) << client.error().message;
      clients.push_back(std::move(*client));
      stages.push_back(stage);
    }
  }
  ProfileAll(clients, stages);

  // Steps in lockstep (one driver, as the pipelines' collectives keep real ranks), each rank's
  // steps recorded; `until` ends a phase (bounded by `max_steps`).
  std::vector<std::vector<StepRecord>> runs(4);
  // A step takes at least 2 ms, as training steps take time: the server's apply step is then
  // seconds ahead of the ranks (docs/server.md), which a loaded machine's scheduling delays of
  // the background threads stay within; a loop of microsecond steps would not be a training job.
  auto run_until = [&](auto until, int max_steps) {
    for (int step = 0; step < max_steps && !until(); ++step) {
      for (size_t r = 0; r < clients.size(); ++r) {
        runs[r].emplace_back();
        ASSERT_EQ(RunStep(*clients[r], stages[r], &runs[r].back()), "") << "rank " << r;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  };
  auto all_at_least = [&](uint64_t version) {
    for (const auto& run : runs) {
      if (run.empty() || run.back().version < version || run.back().planned.empty()) return false;
    }
    return true;
  };
  auto below_max = [](const StepRecord& step) {
    for (const ScheduleEntry& e : step.planned) {
      if (e.freq_mhz < 1410) return true;
    }
    return false;
  };
  // The frontier's plan (stage 0 has slack: some of its work below 1410 MHz), on every rank.
  run_until([&] { return all_at_least(1) && below_max(runs[0].back()); }, 20000);
  ASSERT_TRUE(all_at_least(1) && below_max(runs[0].back())) << "no plan was deployed";
  uint64_t base_version = 0;
  for (auto& client : clients) base_version = std::max(base_version, client->watcher().received_version());
  run_until([&] { return all_at_least(base_version); }, 20000);
  ASSERT_TRUE(all_at_least(base_version));
  const std::vector<ScheduleEntry> base2 = runs[2].back().planned, base3 = runs[3].back().planned;
  auto pipeline1_runs = [&](bool base) {
    return (runs[2].back().planned == base2) == base && (runs[3].back().planned == base3) == base;
  };

  // Pipeline 0 straggles by 1.5x: reported in the background, returns at once.
  const size_t reported_at = runs[0].size();
  ASSERT_TRUE(clients[0]->ReportStraggler({.dp_rank = 0, .slowdown = 1.5}).ok());
  run_until([&] { return pipeline1_runs(/*base=*/false); }, 20000);
  ASSERT_TRUE(pipeline1_runs(false)) << "the straggler's plan was not deployed";
  run_until([&] { return false; }, 3);
  const size_t recovered_at = runs[0].size();
  ASSERT_TRUE(clients[1]->ReportStraggler({.dp_rank = 0, .recovered = true}).ok());
  run_until([&] { return pipeline1_runs(/*base=*/true); }, 20000);
  ASSERT_TRUE(pipeline1_runs(true)) << "the recovery was not deployed";
  run_until([&] { return false; }, 3);

  // Pipeline 1 (ranks 2 and 3) switched to another plan after the report, both at one step, and
  // back after the recovery, both at one step.
  const int slow_from = SwitchStep(runs[2], reported_at);
  ASSERT_GT(slow_from, 0);
  EXPECT_EQ(SwitchStep(runs[3], reported_at), slow_from);
  EXPECT_LT(static_cast<size_t>(slow_from), recovered_at);
  const int back_from = SwitchStep(runs[2], recovered_at);
  ASSERT_GT(back_from, 0);
  EXPECT_EQ(SwitchStep(runs[3], recovered_at), back_from);
  for (int r : {2, 3}) {
    EXPECT_EQ(runs[r][back_from].planned, runs[r][reported_at].planned) << "rank " << r << ": back to the base plan";
    EXPECT_NE(runs[r][slow_from].planned, runs[r][reported_at].planned);
    // The slower plan runs no instruction faster.
    for (size_t i = 0; i < runs[r][slow_from].planned.size(); ++i) {
      EXPECT_LE(runs[r][slow_from].planned[i].freq_mhz, runs[r][reported_at].planned[i].freq_mhz);
    }
  }
  // Every step ran every instruction at its planned clock, and the switch step is the same step
  // index on both stages of pipeline 1, i.e. also the same version.
  for (size_t r = 0; r < 4; ++r) {
    for (const StepRecord& step : runs[r]) {
      if (step.planned.empty()) continue;
      for (size_t i = 0; i < step.planned.size(); ++i) EXPECT_EQ(step.locked[i], step.planned[i].freq_mhz);
    }
  }
  EXPECT_EQ(runs[2][slow_from].version, runs[3][slow_from].version);
  // Pipeline 0, the straggler, kept its plan.
  for (size_t r : {size_t{0}, size_t{1}}) {
    EXPECT_EQ(SwitchStep(runs[r], reported_at), -1) << "rank " << r;
  }
  for (auto& client : clients) ASSERT_TRUE(client->Close().ok());
  for (int g = 0; g < 4; ++g) EXPECT_EQ(fake.Read().at("gpu" + std::to_string(g) + ".locked_max"), "0");
  // Only the first plan may have come late (the server had not seen the job's step rate yet);
  // the straggler's and the recovery's came before their apply steps.
  for (const std::string& line : log.Lines()) {
    bool early_plan = false;
    for (uint64_t v = 1; v <= base_version; ++v) {
      early_plan = early_plan || line.find("plan version " + std::to_string(v) + " was due") != std::string::npos;
    }
    if (!early_plan) ADD_FAILURE() << "unexpected log line: " << line;
  }
}

TEST(RankClient, ReportsMistakesOfTheTrainingLoop) {
  ScopedFakeNvml fake(SmallGpus());
  testing::TestPlanServer server;
  auto api = PlanServerClient::Create({.url = server.url()});
  auto job = api->RegisterJob({.pp_degree = 1, .world_size = 1, .num_microbatches = 2});
  ASSERT_TRUE(job.ok());

  RankClientOptions options = Options(server.url(), *job, 0, 0, 1);
  options.profile = false;
  auto client = RankClient::Start(options);
  ASSERT_TRUE(client.ok()) << client.error().message;
  ASSERT_TRUE((*client)->OnStepBegin().ok());   // no profile, no plan: the highest clock
  EXPECT_FALSE((*client)->OnStepBegin().ok());  // twice
  auto any = (*client)->OnInstructionBegin("backward");
  ASSERT_TRUE(any.ok()) << any.error().message;
  EXPECT_EQ(*any, 1410);
  EXPECT_FALSE((*client)->FinishProfiling().ok());
  EXPECT_FALSE((*client)->ReportStraggler({.dp_rank = 0}).ok());  // none of the three
  EXPECT_FALSE((*client)->ReportStraggler({.dp_rank = 0, .slowdown = 1.2, .recovered = true}).ok());
  ASSERT_TRUE((*client)->Close().ok());
  EXPECT_FALSE((*client)->OnStepEnd().ok());

  RankClientOptions bad_gpu = Options(server.url(), *job, 0, 0, 1);
  bad_gpu.gpu = 7;
  auto no_gpu = RankClient::Start(bad_gpu);
  ASSERT_FALSE(no_gpu.ok());
  EXPECT_NE(no_gpu.error().message.find("GPU 7 does not exist"), std::string::npos) << no_gpu.error().message;

  RankClientOptions unknown_job = Options(server.url(), "no-such-job", 0, 0, 1);
  auto refused = RankClient::Start(unknown_job);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("HTTP 404"), std::string::npos) << refused.error().message;
  EXPECT_EQ(fake.Read().at("gpu0.locked_max"), "0");  // the setter that started was stopped again

  RankClientOptions no_id = Options(server.url(), "", 0, 0, 1);
  auto empty = RankClient::Start(no_id);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().message, "rank client: empty job id");
}

// ---- without a server: the calls replaced by a scripted one ----

// A scripted server for one rank. Its calls may be made to block (`hold`), to show that the
// training thread never waits for them.
struct ScriptedServer {
  std::mutex mutex;
  std::condition_variable released_cv;
  bool hold = false;
  bool reachable = true;
  std::optional<DeploymentAnswer> next;  // the next poll's answer; empty: unchanged
  int polls = 0;
  int registrations = 0;
  std::vector<std::string> reports;

  Status Gate() {
    std::unique_lock lock(mutex);
    released_cv.wait(lock, [this] { return !hold; });
    if (!reachable) return Error::Unavailable("cannot reach the wattcut server at http://127.0.0.1:9: refused");
    return Status::Ok();
  }
  RankServerCalls Calls() {
    RankServerCalls calls;
    calls.register_rank = [this](const std::string&, const TrainingRankIds&, const std::vector<int>&) {
      if (Status s = Gate(); !s.ok()) return s;
      std::lock_guard lock(mutex);
      ++registrations;
      return Status::Ok();
    };
    calls.fetch_deployment = [this](const std::string&, int, uint64_t, uint64_t version) -> Result<DeploymentAnswer> {
      if (Status s = Gate(); !s.ok()) return s.error();
      std::lock_guard lock(mutex);
      ++polls;
      DeploymentAnswer answer{.version = version, .poll_interval_s = 0.5};
      if (next) answer = *std::exchange(next, std::nullopt);
      return answer;
    };
    calls.report_straggler = [this](const std::string& job_id, const StragglerUpdate& update) {
      if (Status s = Gate(); !s.ok()) return s;
      std::lock_guard lock(mutex);
      reports.push_back(job_id + " dp " + std::to_string(update.dp_rank));
      return Status::Ok();
    };
    calls.upload_rank_profile = [this](const std::string& job_id, const TrainingRankIds&,
                                       const std::vector<ProfiledRow>& rows) {
      if (Status s = Gate(); !s.ok()) return s;
      std::lock_guard lock(mutex);
      reports.push_back("profile of " + job_id + ": " + std::to_string(rows.size()) + " rows");
      return Status::Ok();
    };
    return calls;
  }
  void Deploy(uint64_t version, uint64_t apply_from_step, std::vector<ScheduleEntry> frequencies) {
    std::lock_guard lock(mutex);
    next = DeploymentAnswer{.version = version,
                            .poll_interval_s = 0.5,
                            .change = RankDeployment{.version = version,
                                                     .apply_from_step = apply_from_step,
                                                     .mode = DeploymentMode::kPlan,
                                                     .plan_index = 0,
                                                     .frequencies = std::move(frequencies)}};
  }
  void SetHold(bool value) {
    {
      std::lock_guard lock(mutex);
      hold = value;
    }
    released_cv.notify_all();
  }
};

// One rank on a simulated GPU (clocks from 1410 MHz down), its calls scripted, no watcher thread
// unless asked for: the test runs the watcher's rounds.
RankClientOptions ScriptedOptions(ScriptedServer& server, LogLines& log, bool thread = false) {
  RankClientOptions options;
  options.server.url = "http://127.0.0.1:9";
  options.job_id = "job-1";
  options.backend.kind = "simulated";
  options.watchdog_setter = false;
  options.profile = false;
  options.start_watcher_thread = thread;
  options.watcher.log = log.Sink();
  options.calls = server.Calls();
  return options;
}

std::string StepOf(RankClient& client, const std::vector<std::string>& names, std::vector<int>* clocks = nullptr) {
  if (Status s = client.OnStepBegin(); !s.ok()) return s.error().message;
  for (const auto& name : names) {
    auto f = client.OnInstructionBegin(name);
    if (!f.ok()) return f.error().message;
    if (clocks) clocks->push_back(*f);
    if (Status s = client.OnInstructionEnd(name); !s.ok()) return s.error().message;
  }
  if (Status s = client.OnStepEnd(); !s.ok()) return s.error().message;
  return "";
}

TEST(RankClient, RunsAtTheHighestClockUntilItsFirstDeploymentThenFromItsApplyStep) {
  ScriptedServer server;
  LogLines log;
  auto client = RankClient::Start(ScriptedOptions(server, log));
  ASSERT_TRUE(client.ok()) << client.error().message;
  RankClient& c = **client;
  EXPECT_EQ(server.registrations, 1);
  EXPECT_EQ(server.polls, 1);  // asked once at start: nothing deployed yet
  EXPECT_EQ(c.plan_version(), 0u);

  std::vector<int> clocks;
  ASSERT_EQ(StepOf(c, {"forward", "backward", "backward"}, &clocks), "");  // any order without a plan
  EXPECT_EQ(clocks, (std::vector<int>{1410, 1410, 1410}));
  EXPECT_TRUE(c.schedule().empty());

  server.Deploy(1, 3, {{"forward", 1200}, {"backward", 1005}});
  c.watcher().RunOnce();
  ASSERT_EQ(StepOf(c, {"forward", "backward"}), "");  // step 1: not yet
  ASSERT_EQ(StepOf(c, {"forward", "backward"}), "");  // step 2
  EXPECT_EQ(c.plan_version(), 0u);
  clocks.clear();
  ASSERT_EQ(StepOf(c, {"forward", "backward"}, &clocks), "");  // step 3: the plan
  EXPECT_EQ(clocks, (std::vector<int>{1200, 1005}));
  EXPECT_EQ(c.plan_version(), 1u);
  EXPECT_EQ(c.schedule(), (std::vector<ScheduleEntry>{{"forward", 1200}, {"backward", 1005}}));
  // With a plan the order is checked.
  ASSERT_TRUE(c.OnStepBegin().ok());
  auto wrong = c.OnInstructionBegin("backward");
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.error().message.find("is 'forward' in the plan, but the job ran 'backward'"), std::string::npos)
      << wrong.error().message;
  EXPECT_FALSE(c.OnStepEnd().ok());  // the step ended after 0 of 2 instructions

  // A deployment that comes after its apply step: applied at the next step, with one warning.
  server.Deploy(2, 1, {{"forward", 810}, {"backward", 810}});
  c.watcher().RunOnce();
  clocks.clear();
  ASSERT_EQ(StepOf(c, {"forward", "backward"}, &clocks), "");  // step 5
  EXPECT_EQ(clocks, (std::vector<int>{810, 810}));
  EXPECT_EQ(log.Lines(), std::vector<std::string>{"rank 0: plan version 2 was due at step 1; applied at step 5 (4 "
                                                  "steps late)"});
  // A loop that never calls on_step_begin still switches at a step boundary.
  server.Deploy(3, 6, {{"forward", 1110}, {"backward", 1110}});
  c.watcher().RunOnce();
  auto first = c.OnInstructionBegin("forward");
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(*first, 1110);
  ASSERT_TRUE(c.Close().ok());
}

// The simulated GPU runs an instruction's work as its model says (the example's demo without a GPU):
// profiled at three clocks, each instruction lasts at least the model's time at that clock and uses
// at least the model's energy for it, and never draws more than the model's power at that clock.
TEST(RankClient, SimulatedWorkIsProfiledWithTheGpuModelsTimeAndEnergyAtEachClock) {
  ScriptedServer server;
  LogLines log;
  RankClientOptions options = ScriptedOptions(server, log);
  options.profile = true;
  options.profiler.step_mhz = 600;  // 1410, 810, 210 MHz
  options.profiler.warmup_iterations = 0;
  options.profiler.measured_iterations = 1;
  auto client = RankClient::Start(options);
  ASSERT_TRUE(client.ok()) << client.error().message;
  RankClient& c = **client;
  const GpuModel& model = **FindGpuModel("a100-sxm");
  const std::map<std::string, double> work_s = {{"forward", 0.01}, {"backward", 0.02}};
  for (int step = 0; step < 10 && !c.profiling_done_locally(); ++step) {
    ASSERT_TRUE(c.OnStepBegin().ok());
    for (const auto& [name, seconds] : work_s) {
      ASSERT_TRUE(c.OnInstructionBegin(name).ok());
      ASSERT_TRUE(c.WaitUntilFrequencyApplied().ok());
      auto took = c.RunSimulatedWork(name, seconds);
      ASSERT_TRUE(took.ok()) << took.error().message;
      EXPECT_GE(*took, seconds * model.RelativeTime(*ParseInstruction(name), *c.SmClockMhz()) * 0.999);
      ASSERT_TRUE(c.OnInstructionEnd(name).ok());
    }
    ASSERT_TRUE(c.OnStepEnd().ok());
  }
  ASSERT_TRUE(c.profiling_done_locally());
  ASSERT_EQ(c.profiled_rows().size(), 6u);
  for (const ProfiledRow& row : c.profiled_rows()) {
    const InstructionKind kind = *ParseInstruction(row.instruction);
    const double busy_w = model.middle_stage.of(kind).power_w * model.RelativePower(kind, row.freq_mhz);
    const double model_s = work_s.at(row.instruction) * model.RelativeTime(kind, row.freq_mhz);
    SCOPED_TRACE(row.instruction + " at " + std::to_string(row.freq_mhz) + " MHz");
    EXPECT_GE(row.time_s, model_s * 0.999);
    EXPECT_GE(row.energy_j, busy_w * model_s * 0.95);             // the model's work, not idle power
    EXPECT_LE(row.energy_j, busy_w * row.time_s * 1.05 + 0.002);  // never above the model's power
  }

  // Only the simulated backend runs simulated work, and only real instructions for a real time.
  EXPECT_NE(c.RunSimulatedWork("sideways", 0.01).error().message.find("unknown instruction 'sideways'"),
            std::string::npos);
  EXPECT_NE(c.RunSimulatedWork("forward", -1).error().message.find("must last 0 to 3600 s"), std::string::npos);
  ASSERT_TRUE(c.Close().ok());
  EXPECT_FALSE(c.RunSimulatedWork("forward", 0.01).ok());
}

TEST(RankClient, SimulatedWorkNeedsTheSimulatedBackend) {
  ScopedFakeNvml fake(SmallGpus(1));
  ScriptedServer server;
  LogLines log;
  RankClientOptions options = ScriptedOptions(server, log);
  options.backend.kind = "nvml";  // the fake NVML
  auto client = RankClient::Start(options);
  ASSERT_TRUE(client.ok()) << client.error().message;
  auto refused = (*client)->RunSimulatedWork("forward", 0.01);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message,
            "rank client: simulated work needs the simulated GPU backend; this rank's is nvml");
  ASSERT_TRUE((*client)->Close().ok());
}

TEST(RankClient, TheStepPathNeverWaitsForTheServer) {
  ScriptedServer server;
  LogLines log;
  auto client = RankClient::Start(ScriptedOptions(server, log, /*thread=*/true));
  ASSERT_TRUE(client.ok()) << client.error().message;
  RankClient& c = **client;
  server.SetHold(true);  // every call to the server now blocks until released
  // Reports and steps return although the server does not answer.
  ASSERT_TRUE(c.ReportStraggler({.dp_rank = 1, .slowdown = 1.5}).ok());
  for (int step = 0; step < 20; ++step) ASSERT_EQ(StepOf(c, {"forward", "backward"}), "");
  EXPECT_EQ(c.steps_completed(), 20u);
  server.SetHold(false);
  for (int i = 0; i < 20000 && c.watcher().queued_requests() > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(c.watcher().queued_requests(), 0u);
  {
    std::lock_guard lock(server.mutex);
    EXPECT_EQ(server.reports, std::vector<std::string>{"job-1 dp 1"});
  }
  ASSERT_TRUE(c.Close().ok());
}

TEST(RankClient, StartsWhileTheServerIsDownAndPicksUpItsPlanWhenItIsBack) {
  ScriptedServer server;
  server.reachable = false;
  LogLines log;
  auto client = RankClient::Start(ScriptedOptions(server, log));
  ASSERT_TRUE(client.ok()) << client.error().message;  // not an error
  RankClient& c = **client;
  EXPECT_FALSE(c.watcher().connected());
  EXPECT_FALSE(c.watcher().rank_registered());
  EXPECT_EQ(c.watcher().outages(), 1u);
  ASSERT_EQ(log.Lines().size(), 1u);
  EXPECT_NE(log.Lines()[0].find("rank 0: rank registration: cannot reach the wattcut server at http://127.0.0.1:9"),
            std::string::npos)
      << log.Lines()[0];
  std::vector<int> clocks;
  ASSERT_EQ(StepOf(c, {"forward", "backward"}, &clocks), "");
  EXPECT_EQ(clocks, (std::vector<int>{1410, 1410}));
  ASSERT_TRUE(c.ReportStraggler({.dp_rank = 0, .recovered = true}).ok());
  c.watcher().RunOnce();  // still down
  EXPECT_EQ(c.watcher().outages(), 1u);
  EXPECT_EQ(log.Lines().size(), 1u);

  server.reachable = true;
  server.Deploy(4, 0, {{"forward", 1200}, {"backward", 1200}});
  c.watcher().RunOnce();  // registers, sends the report, polls
  EXPECT_TRUE(c.watcher().connected());
  EXPECT_EQ(server.registrations, 1);
  EXPECT_EQ(server.reports, std::vector<std::string>{"job-1 dp 0"});
  ASSERT_EQ(log.Lines().size(), 2u);
  EXPECT_NE(log.Lines()[1].find("is back after"), std::string::npos);
  clocks.clear();
  ASSERT_EQ(StepOf(c, {"forward", "backward"}, &clocks), "");  // step 1 >= 0: not late (just up)
  EXPECT_EQ(clocks, (std::vector<int>{1200, 1200}));
  ASSERT_TRUE(c.Close().ok());
}

TEST(RankClient, RegistersTheJobInTheBackgroundAndShareItsId) {
  ScriptedServer server;
  server.reachable = false;
  LogLines log;
  RankClientOptions options = ScriptedOptions(server, log);
  options.job_id = "";
  options.register_job = TrainingJobInfo{.pp_degree = 1, .world_size = 1};
  int job_registrations = 0;
  options.calls.register_job = [&](const TrainingJobInfo&) -> Result<std::string> {
    if (Status s = server.Gate(); !s.ok()) return s.error();
    ++job_registrations;
    return std::string("job-42");
  };
  auto client = RankClient::Start(options);
  ASSERT_TRUE(client.ok()) << client.error().message;
  RankClient& c = **client;
  EXPECT_EQ(c.job_id(), "");
  server.reachable = true;
  c.watcher().RunOnce();
  EXPECT_EQ(c.job_id(), "job-42");
  EXPECT_EQ(job_registrations, 1);
  EXPECT_EQ(server.registrations, 1);
  EXPECT_EQ(server.polls, 1);

  // Another rank learns the id later (the Python layer broadcasts it).
  RankClientOptions follower = ScriptedOptions(server, log);
  follower.job_id = "";
  follower.job_id_follows = true;
  auto other = RankClient::Start(follower);
  ASSERT_TRUE(other.ok()) << other.error().message;
  EXPECT_EQ(server.registrations, 1);  // nothing to register without the id
  EXPECT_TRUE((*other)->SetJobId("job-42"));
  (*other)->watcher().RunOnce();
  EXPECT_EQ(server.registrations, 2);
  EXPECT_EQ((*other)->job_id(), "job-42");
}

}  // namespace
}  // namespace wattcut
