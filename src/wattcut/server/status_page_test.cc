#include "wattcut/server/status_page.h"

#include <gtest/gtest.h>

#include "wattcut/plot/xml_check_testing.h"

namespace wattcut::server {
namespace {

using plot::testing::XmlProblem;

// The page without its doctype line: the rest is well-formed XML (XHTML syntax).
std::string Body(const std::string& page) { return page.substr(page.find('\n') + 1); }

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

ServerStatusView StatusOfServer(std::vector<JobStatusView> jobs) {
  ServerStatusView view;
  view.version = "1.2.3";
  view.uptime_s = 3725;
  view.num_jobs = jobs.size();
  view.jobs = std::move(jobs);
  return view;
}

JobStatusView StatusOfJob(const std::string& name) {
  JobStatusView job;
  job.job_id = "2026-12-01-10-00-00+dp2+pp4+tp1+perseus+1+" + name;
  job.name = name;
  job.pp_degree = 4;
  job.dp_degree = 2;
  job.world_size = 8;
  job.num_microbatches = 8;
  return job;
}

StatusFrontierView StatusOfFrontier() {
  StatusFrontierView f;
  f.num_points = 5;
  for (size_t i = 0; i < 5; ++i) f.curve.push_back({i, 2.0 - 0.1 * i, 1000 + 10.0 * (i - 2) * (i - 2)});
  f.fastest = f.curve.back();
  f.min_energy = f.curve[2];
  f.selected = f.curve[3];
  f.all_max_time_s = 1.6;
  f.all_max_energy_j = 1100;
  f.compute_seconds = 0.25;
  return f;
}

TEST(StatusPage, WithoutJobsItSaysSoAndShowsTheServer) {
  const std::string page = StatusPageHtml(StatusOfServer({}));
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(XmlProblem(Body(page)), "");
  EXPECT_NE(page.find("version 1.2.3"), std::string::npos);
  EXPECT_NE(page.find("up 1 h 2 min"), std::string::npos);
  EXPECT_NE(page.find("0 jobs"), std::string::npos);
  EXPECT_NE(page.find("No jobs are registered."), std::string::npos);
  EXPECT_EQ(page.find("<svg"), std::string::npos);
  // No external asset: nothing is fetched, nothing runs.
  EXPECT_EQ(page.find("<script"), std::string::npos);
  EXPECT_EQ(page.find("<link"), std::string::npos);
  EXPECT_EQ(page.find("src="), std::string::npos);
}

TEST(StatusPage, AJobRegisteringItsRanks) {
  JobStatusView job = StatusOfJob("bert-large");
  job.ranks_registered = 3;
  job.num_microbatches = 0;
  const std::string page = StatusPageHtml(StatusOfServer({job}));
  EXPECT_EQ(XmlProblem(Body(page)), "");
  EXPECT_EQ(PhaseText(job), "registering ranks (3 of 8)");
  EXPECT_NE(page.find("registering ranks (3 of 8)"), std::string::npos);
  EXPECT_NE(page.find("<h2 class=\"job-name\">bert-large</h2>"), std::string::npos);
  EXPECT_NE(page.find("3 of 8 registered (pp 4 x dp 2 x tp 1)"), std::string::npos);
  EXPECT_NE(page.find("<th>microbatches</th><td>not set</td>"), std::string::npos);
  EXPECT_NE(page.find("nothing deployed"), std::string::npos);
  EXPECT_NE(page.find("no step reported yet"), std::string::npos);
  EXPECT_EQ(page.find("<svg"), std::string::npos);
  // Without a name, the id is the heading.
  job.name.reset();
  EXPECT_NE(StatusPageHtml(StatusOfServer({job})).find("<h2 class=\"job-name\">" + job.job_id), std::string::npos);
}

TEST(StatusPage, AJobBeingProfiledOrWaitingOrComputing) {
  JobStatusView job = StatusOfJob("gpt3");
  job.ranks_registered = 8;
  EXPECT_EQ(PhaseText(job), "waiting for a profile");
  job.profiling_freq_mhz = 1410;
  EXPECT_EQ(PhaseText(job), "profiling at 1410 MHz");
  job.deployment_version = 2;
  job.deployment_mode = "all_max";
  job.job_step = 40;
  const std::string page = StatusPageHtml(StatusOfServer({job}));
  EXPECT_EQ(XmlProblem(Body(page)), "");
  EXPECT_NE(page.find("profiling at 1410 MHz"), std::string::npos);
  EXPECT_NE(page.find("version 2, all_max, largest reported step 40"), std::string::npos);
  job.profiling_freq_mhz.reset();
  job.profile_source = "server_profiling";
  job.frontier_state = FrontierState::kComputing;
  EXPECT_EQ(PhaseText(job), "computing the frontier");
  job.frontier_state = FrontierState::kFailed;
  job.frontier_error = "num_microbatches is not set";
  const std::string failed = StatusPageHtml(StatusOfServer({job}));
  EXPECT_NE(failed.find("frontier failed"), std::string::npos);
  EXPECT_NE(failed.find("<span class=\"error\">num_microbatches is not set</span>"), std::string::npos);
}

TEST(StatusPage, APlannedJobShowsItsFrontierChartAndTheSaving) {
  JobStatusView job = StatusOfJob("gpt3-xl");
  job.ranks_registered = 8;
  job.frontier_state = FrontierState::kReady;
  job.profile_source = "csv";
  job.frontier = StatusOfFrontier();
  job.deployment_version = 1;
  job.deployment_mode = "plan";
  job.saving = {true, true, 120, 100, 2.5e6, 25000};
  const std::string page = StatusPageHtml(StatusOfServer({job}));
  EXPECT_EQ(XmlProblem(Body(page)), "");
  EXPECT_EQ(PhaseText(job), "planned");
  EXPECT_EQ(Count(page, "<svg"), 1u);
  EXPECT_EQ(page.find("<?xml"), std::string::npos);
  for (const char* mark : {">T_min<", ">T*<", ">selected<", ">AllMax<"}) {
    EXPECT_NE(page.find(mark), std::string::npos) << mark;
  }
  // The selected plan at T_min is labelled once, beside T_min.
  job.frontier->selected = job.frontier->fastest;
  const std::string at_fastest = StatusFrontierChartSvg(*job.frontier, "");
  EXPECT_NE(at_fastest.find(">T_min, selected<"), std::string::npos);
  EXPECT_EQ(at_fastest.find(">selected<"), std::string::npos);
  // A frontier of one point: T_min is T*, and both are the selected plan: one label, not two on top
  // of each other.
  job.frontier->min_energy = job.frontier->fastest;
  const std::string one_point = StatusFrontierChartSvg(*job.frontier, "");
  EXPECT_EQ(Count(one_point, ">T_min, T*, selected<"), 1u) << one_point;
  EXPECT_EQ(one_point.find(">T*, selected<"), std::string::npos);
  EXPECT_EQ(Count(one_point, ">T*<"), Count(at_fastest, ">T*<") - 1);  // the legend's, not a point's
  job.frontier = StatusOfFrontier();
  EXPECT_NE(page.find("5 points, computed in 0.25 s"), std::string::npos);
  // Issue 54: the saving names what it is (it said "the deployed target saves", with no power
  // target set), and a deadline's cost says its unit is the price series' (it read "0.00 of 74.44").
  EXPECT_NE(page.find("the plan deployed now saves 25.000 kJ a step against AllMax"), std::string::npos) << page;
  job.deadline = StatusDeadlineView{"2026-12-14T16:48Z", "cost", 214620, 10, 12, size_t{3}, 0.0, 74.44,
                                    "2026-12-14T10:00Z", 0,      ""};
  const std::string costed = StatusPageHtml(StatusOfServer({job}));
  EXPECT_NE(costed.find("cost 0.00 of 74.44 (in the price series' currency) so far as planned"), std::string::npos)
      << costed;
  job.deadline->objective = "energy";
  EXPECT_NE(StatusPageHtml(StatusOfServer({job})).find("energy 0.00 kWh of 74.44 kWh so far as planned"),
            std::string::npos);
  EXPECT_NE(page.find("point 3: 1.700 s, 1.010 kJ"), std::string::npos);  // the selected one
  EXPECT_NE(page.find("<span class=\"saved\">2.500 MJ</span> over 120 steps"), std::string::npos);
  EXPECT_NE(page.find("(100 of them under a plan)"), std::string::npos);
  EXPECT_NE(page.find("saves 25.000 kJ a step"), std::string::npos);
  EXPECT_NE(page.find("Stragglers: none reported."), std::string::npos);
  EXPECT_NE(page.find("<th>power target</th><td>none</td>"), std::string::npos);
  // A power target: met, not met, before the frontier.
  job.power_target = StatusPowerTargetView{"peak_1s", 300, "row 7 <over>", true, 2, 287.25, true};
  const std::string capped = StatusPageHtml(StatusOfServer({job}));
  EXPECT_EQ(XmlProblem(Body(capped)), "");
  EXPECT_NE(capped.find("peak 1-s power &lt;= 300.0 W per GPU (row 7 &lt;over&gt;): point 2 at 287.2 W per GPU, met"),
            std::string::npos)
      << capped;
  job.power_target->met = false;
  EXPECT_NE(StatusPageHtml(StatusOfServer({job})).find("not met</span>: the job runs its lowest-power plan, point 2"),
            std::string::npos);
  job.power_target->applied = false;
  EXPECT_NE(
      StatusPageHtml(StatusOfServer({job})).find("W per GPU (row 7 &lt;over&gt;): kept until the frontier is ready"),
      std::string::npos);
  job.power_target.reset();
  // The chart's SVG on its own is well-formed, and each chart's clip region has its own id.
  const std::string svg = StatusFrontierChartSvg(*job.frontier, "job7-");
  EXPECT_EQ(XmlProblem(svg), "");
  EXPECT_NE(svg.find("id=\"job7-plot-area\""), std::string::npos);
  EXPECT_EQ(svg.find("\"plot-area\""), std::string::npos);
  const std::string two = StatusPageHtml(StatusOfServer({job, job}));
  EXPECT_EQ(Count(two, "id=\"job0-plot-area\""), 1u);
  EXPECT_EQ(Count(two, "id=\"job1-plot-area\""), 1u);
  // Without an AllMax point, the page says the saving cannot be counted.
  job.frontier->all_max_time_s.reset();
  job.frontier->all_max_energy_j.reset();
  job.saving.all_max_known = false;
  const std::string unknown = StatusPageHtml(StatusOfServer({job}));
  EXPECT_NE(unknown.find("AllMax</th><td>not known"), std::string::npos);
  EXPECT_NE(unknown.find("no AllMax point is known for this job"), std::string::npos);
}

TEST(StatusPage, AStragglerAndTheNonStragglerPlan) {
  JobStatusView job = StatusOfJob("llama");
  job.ranks_registered = 8;
  job.frontier_state = FrontierState::kReady;
  job.frontier = StatusOfFrontier();
  job.frontier->non_straggler = job.frontier->curve[1];
  job.stragglers = {{1, StragglerReport::Kind::kSlowdown, 1.2}, {0, StragglerReport::Kind::kIterationTime, 2.04}};
  job.straggler_time_s = 2.04;
  const std::string page = StatusPageHtml(StatusOfServer({job}));
  EXPECT_EQ(XmlProblem(Body(page)), "");
  EXPECT_NE(page.find("<tr><td>1</td><td>slowdown 1.200x</td></tr>"), std::string::npos);
  EXPECT_NE(page.find("<tr><td>0</td><td>iteration time 2.040 s</td></tr>"), std::string::npos);
  EXPECT_NE(page.find("T' = 2.040 s"), std::string::npos);
  EXPECT_NE(page.find("<th>non-straggler plan</th><td>point 1: 1.900 s"), std::string::npos);
  EXPECT_NE(page.find(">non-straggler<"), std::string::npos);  // marked on the chart
}

TEST(StatusPage, HostileNamesAndErrorsAreEscaped) {
  const std::string hostile = "<script>alert('x')</script>&\"\x01";
  JobStatusView job = StatusOfJob("x");
  job.name = hostile;
  job.job_id = "id<img src=x onerror=1>";
  job.frontier_state = FrontierState::kFailed;
  job.frontier_error = "</td><b>bad</b>";
  job.profile_source = "<i>";
  ServerStatusView view = StatusOfServer({job});
  view.version = "<v>";
  const std::string page = StatusPageHtml(view);
  EXPECT_EQ(XmlProblem(Body(page)), "");
  EXPECT_EQ(page.find("<script"), std::string::npos);
  EXPECT_EQ(page.find("<img"), std::string::npos);
  EXPECT_EQ(page.find("<b>bad"), std::string::npos);
  EXPECT_EQ(page.find("<i>"), std::string::npos);
  EXPECT_EQ(page.find("<v>"), std::string::npos);
  EXPECT_EQ(page.find('\x01'), std::string::npos);
  EXPECT_NE(page.find("&lt;script&gt;alert(&apos;x&apos;)&lt;/script&gt;&amp;&quot;"), std::string::npos);
}

// The GPU energy the nodes measured beside the planner's estimate, and what each covers.
TEST(StatusPage, TheMeasuredGpuEnergyBesideThePlannersEstimate) {
  JobStatusView job = StatusOfJob("gpt3-xl");
  const std::string none = StatusPageHtml(StatusOfServer({job}));
  EXPECT_EQ(XmlProblem(Body(none)), "");
  EXPECT_NE(none.find("<th>GPU energy</th><td>not measured (no node reported) &#183; planner's estimate none yet"),
            std::string::npos)
      << none;
  job.gpu_energy = StatusGpuEnergyView{2, 12300, {"slurm-epilog"}, 40, 11800};
  const std::string page = StatusPageHtml(StatusOfServer({job}));
  EXPECT_EQ(XmlProblem(Body(page)), "");
  EXPECT_NE(page.find("<th>GPU energy</th><td>measured 12.300 kJ on 2 nodes (slurm-epilog) &#183; planner's estimate "
                      "11.800 kJ over 40 steps<br/><span class=\"note\">The measurement covers the whole job on those "
                      "nodes, start-up and profiling included; the estimate only the steps the ranks reported since "
                      "the server started.</span></td>"),
            std::string::npos)
      << page;
  // One node, a step, no source said; then sources a client chose, escaped.
  job.gpu_energy = StatusGpuEnergyView{1, 950, {}, 1, 900};
  EXPECT_NE(StatusPageHtml(StatusOfServer({job}))
                .find("measured 950.0 J on 1 node &#183; planner's estimate 900.0 J over 1 step<"),
            std::string::npos);
  job.gpu_energy.sources = {"<script>x</script>", "a&b"};
  const std::string hostile = StatusPageHtml(StatusOfServer({job}));
  EXPECT_EQ(XmlProblem(Body(hostile)), "");
  EXPECT_EQ(hostile.find("<script"), std::string::npos);
  EXPECT_NE(hostile.find("on 1 node (&lt;script&gt;x&lt;/script&gt;, a&amp;b)"), std::string::npos);
}

TEST(StatusPage, ALongJobListIsBoundedWithACount) {
  ServerStatusView view = StatusOfServer({StatusOfJob("newest")});
  view.num_jobs = 57;
  view.num_quarantined = 2;
  const std::string page = StatusPageHtml(view);
  EXPECT_NE(page.find("57 jobs (the 1 most recently registered shown)"), std::string::npos);
  EXPECT_NE(page.find("2 quarantined"), std::string::npos);
}

}  // namespace
}  // namespace wattcut::server
