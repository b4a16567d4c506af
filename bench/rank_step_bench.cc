#include "bench/rank_step_bench.h"

#include <chrono>
#include <memory>

namespace wattcut::bench {

std::vector<ScheduleEntry> AlternatingPlan(uint64_t version) {
  std::vector<ScheduleEntry> entries;
  for (int i = 0; i < 12; ++i) {
    entries.push_back({"forward", (version & 1) ? 1410 - 15 * i : 1200 - 15 * i});
    entries.push_back({"backward", (version & 1) ? 1200 - 15 * i : 1410 - 15 * i});
  }
  return entries;
}

void ScriptDeployments(RankClientOptions& options, bool change_every_step) {
  options.server.url = "http://127.0.0.1:9";
  options.job_id = "bench";
  options.profile = false;
  options.start_watcher_thread = false;
  options.watcher.log = [](const std::string&) {};
  options.calls.register_rank = [](const std::string&, const TrainingRankIds&, const std::vector<int>&) {
    return Status::Ok();
  };
  auto version = std::make_shared<uint64_t>(0);
  options.calls.fetch_deployment = [version, change_every_step](const std::string&, int, uint64_t step,
                                                                uint64_t held) -> Result<DeploymentAnswer> {
    if (!change_every_step && *version > 0) return DeploymentAnswer{.version = held, .poll_interval_s = 1};
    ++*version;
    return DeploymentAnswer{.version = *version,
                            .poll_interval_s = 1,
                            .change = RankDeployment{.version = *version,
                                                     .apply_from_step = step,
                                                     .mode = DeploymentMode::kPlan,
                                                     .plan_index = 0,
                                                     .frequencies = AlternatingPlan(*version)}};
  };
}

double RunTimedSteps(benchmark::State& state, RankClient& client) {
  const std::vector<ScheduleEntry> names = AlternatingPlan(1);
  double timed_s = 0;
  for (auto _ : state) {
    client.watcher().RunOnce();  // the background's round, not timed
    const auto start = std::chrono::steady_clock::now();
    bool ok = client.OnStepBegin().ok();
    for (const ScheduleEntry& entry : names) {
      ok = client.OnInstructionBegin(entry.instruction).ok() && ok;
      ok = client.OnInstructionEnd(entry.instruction).ok() && ok;
    }
    ok = client.OnStepEnd().ok() && ok;
    const double step_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    timed_s += step_s;
    state.SetIterationTime(step_s);
    if (!ok) {
      state.SkipWithError("a step failed");
      break;
    }
  }
  return timed_s;
}

}  // namespace wattcut::bench
