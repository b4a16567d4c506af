#include "wattcut/server/metrics.h"

#include <gtest/gtest.h>

namespace wattcut::server {
namespace {

TEST(Metrics, RendersPrometheusText) {
  Metrics m;
  m.SetGauges(2, 16);
  m.RecordRequest("schedule", "GET", 200, 0.003);
  m.RecordRequest("schedule", "GET", 200, 0.2);
  m.RecordRequest("register_job", "POST", 422, 0.0001);
  m.RecordFrontier(true, 1.5);
  std::string text = m.Render();
  EXPECT_NE(text.find("wattcut_jobs 2\n"), std::string::npos);
  EXPECT_NE(text.find("wattcut_ranks 16\n"), std::string::npos);
  EXPECT_NE(text.find("wattcut_http_requests_total{endpoint=\"schedule\",method=\"GET\",status=\"200\"} 2\n"),
            std::string::npos);
  EXPECT_NE(text.find("status=\"422\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("wattcut_http_request_duration_seconds_bucket{endpoint=\"schedule\",le=\"0.005\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("wattcut_http_request_duration_seconds_count{endpoint=\"schedule\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("wattcut_frontier_computations_total{outcome=\"ok\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("wattcut_frontier_computation_seconds_bucket{le=\"2.5\"} 1\n"), std::string::npos);
}

// Plan switches and stragglers: zero at first (the families are there for dashboards), then
// counted as the registry reports them.
TEST(Metrics, CountsPlanSwitchesAndStragglers) {
  Metrics m;
  std::string text = m.Render();
  EXPECT_NE(text.find("# TYPE wattcut_plan_switches_total counter\nwattcut_plan_switches_total 0\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("wattcut_stragglers 0\n"), std::string::npos);
  EXPECT_NE(text.find("wattcut_straggler_reports_total{kind=\"recovered\"} 0\n"), std::string::npos);
  m.RecordPlanSwitch();
  m.RecordPlanSwitch();
  m.RecordStragglerReport(false);
  m.RecordStragglerReport(false);
  m.RecordStragglerReport(true);
  m.SetStragglers(1);
  text = m.Render();
  EXPECT_NE(text.find("wattcut_plan_switches_total 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("wattcut_stragglers 1\n"), std::string::npos);
  EXPECT_NE(text.find("wattcut_straggler_reports_total{kind=\"straggler\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("wattcut_straggler_reports_total{kind=\"recovered\"} 1\n"), std::string::npos);
}

TEST(Metrics, CountsJobsByFrontierState) {
  Metrics m;
  EXPECT_NE(m.Render().find("wattcut_jobs_by_frontier_state{state=\"ready\"} 0\n"), std::string::npos);
  JobStateCounts counts;
  counts.by_frontier_state[static_cast<size_t>(FrontierState::kReady)] = 3;
  counts.by_frontier_state[static_cast<size_t>(FrontierState::kComputing)] = 1;
  counts.quarantined = 2;
  m.SetJobStates(counts);
  const std::string text = m.Render();
  EXPECT_NE(text.find("# TYPE wattcut_jobs_by_frontier_state gauge\n"), std::string::npos) << text;
  EXPECT_NE(text.find("wattcut_jobs_by_frontier_state{state=\"none\"} 0\n"), std::string::npos);
  EXPECT_NE(text.find("wattcut_jobs_by_frontier_state{state=\"computing\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("wattcut_jobs_by_frontier_state{state=\"ready\"} 3\n"), std::string::npos);
  EXPECT_NE(text.find("wattcut_jobs_by_frontier_state{state=\"failed\"} 0\n"), std::string::npos);
  EXPECT_NE(text.find("wattcut_jobs_by_frontier_state{state=\"quarantined\"} 2\n"), std::string::npos);
}

// Methods come from clients: anything but the standard ones shares one label value.
TEST(Metrics, UnknownMethodsShareOneSeries) {
  Metrics m;
  for (int i = 0; i < 1000; ++i) m.RecordRequest("unmatched", "JUNK" + std::to_string(i), 400, 0);
  m.RecordRequest("unmatched", "GET", 404, 0);
  std::string text = m.Render();
  EXPECT_NE(text.find("wattcut_http_requests_total{endpoint=\"unmatched\",method=\"other\",status=\"400\"} "
                      "1000\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("JUNK"), std::string::npos);
  EXPECT_STREQ(MethodLabel("DELETE"), "DELETE");
  EXPECT_STREQ(MethodLabel("get"), "other");
}

// The measured GPU energy: one gauge per job some node reported for, its id escaped.
TEST(Metrics, ShowsEachJobsMeasuredGpuEnergy) {
  Metrics m;
  std::string text = m.Render();
  EXPECT_NE(text.find("# TYPE wattcut_job_measured_gpu_energy_joules gauge\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("wattcut_job_measured_gpu_energy_joules{"), std::string::npos);
  m.SetMeasuredGpuEnergies({{"job-1", 12345.6}, {"odd\"id\\", 0}});
  text = m.Render();
  EXPECT_NE(text.find("# HELP wattcut_job_measured_gpu_energy_joules The GPU energy a job used as its nodes measured"),
            std::string::npos);
  EXPECT_NE(text.find("wattcut_job_measured_gpu_energy_joules{job_id=\"job-1\"} 12345.6\n"), std::string::npos) << text;
  EXPECT_NE(text.find("wattcut_job_measured_gpu_energy_joules{job_id=\"odd\\\"id\\\\\"} 0\n"), std::string::npos)
      << text;
}

}  // namespace
}  // namespace wattcut::server
