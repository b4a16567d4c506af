// PUT /v1/jobs/{id}/measured-energy/{node} through the real HTTP API: a Server on a free
// loopback port in this process, spoken to with an HTTP client. The report is stored (a later
// one of the same node replaces it, a new server on the same folder has it), refused naming the
// field, and shown beside the planner's estimate (GET /v1/jobs/{id}, GET /v1/jobs, GET /,
// /metrics).
#include "wattcut/server/job_measured_energy.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "wattcut/server/registry_harness_testing.h"
#include "wattcut/server/registry_testing.h"
#include "wattcut/server/server.h"

namespace wattcut::server {
namespace {

using nlohmann::json;
using testing::TempDir;

// A Server serving `dir` on a free port of `host` until the object goes.
class ServedServer {
 public:
  explicit ServedServer(const std::string& dir, const std::string& host = "127.0.0.1") {
    ServerOptions options;
    options.host = host;
    options.port = 0;
    options.data_dir = dir;
    options.sync = SyncMode::kNormal;
    options.http_threads = 8;
    auto created = Server::Create(options);
    EXPECT_TRUE(created.ok()) << created.error().message;
    if (!created.ok()) return;
    server_ = std::move(*created);
    run_ = std::thread([this] { server_->Run(); });
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
  }
  ~ServedServer() {
    if (!server_) return;
    server_->Stop();
    run_.join();
  }
  ServedServer(const ServedServer&) = delete;
  ServedServer& operator=(const ServedServer&) = delete;

  struct Reply {
    int status = 0;
    std::string text;
    json body;  // null when the text is not JSON
  };
  Reply Get(const std::string& path) { return ReplyOf(client_->Get(path)); }
  Reply Put(const std::string& path, const std::string& body) {
    return ReplyOf(client_->Put(path, body, "application/json"));
  }
  Reply Post(const std::string& path, const json& body) {
    return ReplyOf(client_->Post(path, body.dump(), "application/json"));
  }

 private:
  static Reply ReplyOf(const httplib::Result& result) {
    Reply reply;
    EXPECT_TRUE(result) << "no answer: " << httplib::to_string(result.error());
    if (!result) return reply;
    reply.status = result->status;
    reply.text = result->body;
    reply.body = json::parse(reply.text, nullptr, /*allow_exceptions=*/false);
    if (reply.body.is_discarded()) reply.body = nullptr;
    return reply;
  }

  std::unique_ptr<Server> server_;
  std::thread run_;
  std::unique_ptr<httplib::Client> client_;
};

// A job of pp 2 x dp 2 (4 microbatches), its four ranks registered; its id.
std::string RegisterJob(ServedServer& s) {
  auto job = s.Post("/register_job", {{"job_id", ""},
                                      {"pp_degree", 2},
                                      {"dp_degree", 2},
                                      {"tp_degree", 1},
                                      {"world_size", 4},
                                      {"job_metadata", "gpt-small"},
                                      {"planner", {{"num_microbatches", 4}}}});
  EXPECT_EQ(job.status, 200) << job.text;
  const std::string id = job.body.is_string() ? job.body.get<std::string>() : "";
  for (int r = 0; r < 4; ++r) {
    auto rank = s.Post("/register_rank/" + id, {{"rank", r},
                                                {"dp_rank", r / 2},
                                                {"pp_rank", r % 2},
                                                {"tp_rank", 0},
                                                {"available_frequencies", {1410, 1200, 900}}});
    EXPECT_EQ(rank.status, 200) << rank.text;
  }
  return id;
}

std::string Report(double energy_j, double duration_s, const std::string& gpus, const std::string& source) {
  return R"({"gpu_energy_j": )" + std::to_string(energy_j) + R"(, "duration_s": )" + std::to_string(duration_s) +
         R"(, "gpus": )" + gpus + R"(, "source": ")" + source + R"("})";
}

TEST(JobMeasuredEnergy, ANodesReportIsStoredReplacedAndShown) {
  TempDir temp("measured_energy_http");
  std::string id;
  {
    ServedServer s(temp.path());
    id = RegisterJob(s);
    const std::string path = "/v1/jobs/" + id + "/measured-energy/";
    // Nothing measured yet: null, and no gauge.
    auto job = s.Get("/v1/jobs/" + id);
    ASSERT_EQ(job.status, 200) << job.text;
    EXPECT_TRUE(job.body["measured_gpu_energy"].is_null());
    EXPECT_EQ(job.body["estimated_gpu_energy_j"], 0);
    EXPECT_EQ(job.body["estimated_gpu_energy_steps"], 0);
    EXPECT_EQ(s.Get("/metrics").text.find("wattcut_job_measured_gpu_energy_joules{"), std::string::npos);

    auto first = s.Put(path + "gpu-017", Report(1500, 34.5, "[0, 1, 2, 3]", "slurm-epilog"));
    ASSERT_EQ(first.status, 200) << first.text;
    EXPECT_EQ(first.body["job_id"], id);
    EXPECT_EQ(first.body["measured_gpu_energy"],
              json::parse(R"({"total_j": 1500, "node_count": 1, "gpu_count": 4, "sources": ["slurm-epilog"]})"));
    EXPECT_EQ(s.Get("/v1/jobs/" + id + "/measured-energy").body["nodes"],
              json::parse(R"([{"node": "gpu-017", "gpu_energy_j": 1500, "duration_s": 34.5, "gpus": [0, 1, 2, 3],
                              "source": "slurm-epilog"}])"));
    EXPECT_EQ(first.body["estimated_gpu_energy_steps"], 0);
    ASSERT_EQ(s.Put(path + "gpu-018", Report(1000, 34, "[0, 1]", "slurm-epilog")).status, 200);
    // The epilog on gpu-017 retried with what it read later: its report replaced, not added.
    auto again = s.Put(path + "gpu-017", Report(2500, 35, "[0, 1, 2, 3]", "slurm-epilog"));
    ASSERT_EQ(again.status, 200) << again.text;
    EXPECT_EQ(again.body["measured_gpu_energy"]["total_j"], 3500);
    EXPECT_EQ(again.body["measured_gpu_energy"]["node_count"], 2);
    const json nodes = s.Get("/v1/jobs/" + id + "/measured-energy").body["nodes"];
    ASSERT_EQ(nodes.size(), 2u);
    EXPECT_EQ(nodes[0]["gpu_energy_j"], 2500);
    EXPECT_EQ(nodes[0]["duration_s"], 35);

    job = s.Get("/v1/jobs/" + id);
    EXPECT_EQ(job.body["measured_gpu_energy"], again.body["measured_gpu_energy"]);
    auto list = s.Get("/v1/jobs");
    ASSERT_EQ(list.body["jobs"].size(), 1u);
    EXPECT_EQ(list.body["jobs"][0]["measured_gpu_energy_j"], 3500);
    EXPECT_NE(s.Get("/metrics").text.find("wattcut_job_measured_gpu_energy_joules{job_id=\"" + id + "\"} 3500\n"),
              std::string::npos);
    EXPECT_NE(s.Get("/").text.find("measured 3.500 kJ on 2 nodes (slurm-epilog)"), std::string::npos);
  }
  // A new server on the same folder (a restart) has every node's report.
  ServedServer restarted(temp.path());
  auto job = restarted.Get("/v1/jobs/" + id);
  ASSERT_EQ(job.status, 200) << job.text;
  EXPECT_EQ(job.body["measured_gpu_energy"]["total_j"], 3500);
  EXPECT_EQ(job.body["measured_gpu_energy"]["node_count"], 2);
  // The reports themselves, a page at a time.
  const json second = restarted.Get("/v1/jobs/" + id + "/measured-energy?offset=1&limit=1").body;
  EXPECT_EQ(second["node_count"], 2);
  ASSERT_EQ(second["nodes"].size(), 1u);
  EXPECT_EQ(second["nodes"][0], json::parse(R"({"node": "gpu-018", "gpu_energy_j": 1000, "duration_s": 34,
                                                 "gpus": [0, 1], "source": "slurm-epilog"})"));
  EXPECT_EQ(restarted.Get("/v1/jobs/" + id + "/measured-energy?limit=0").status, 422);
  EXPECT_EQ(restarted.Get("/v1/jobs/" + id + "/measured-energy?limit=1001").status, 422);
  EXPECT_NE(restarted.Get("/metrics").text.find("wattcut_job_measured_gpu_energy_joules{job_id=\"" + id + "\"} 3500\n"),
            std::string::npos);
}

// The stored detail of a job is bounded: reports listing more than 65,536 GPUs in all are refused
// (409), and every answer is a summary of a few hundred bytes whatever the reports hold. Before:
// 120 reports of 1,024 GPUs grew the server from 54 MB to 1 GB, and each answer was 4-5 MB.
TEST(JobMeasuredEnergy, AJobsReportsAreBoundedAndItsAnswersStaySmall) {
  TempDir temp("measured_energy_bound");
  ServedServer s(temp.path());
  const std::string id = RegisterJob(s);
  std::string gpus = "[";
  for (int g = 0; g < 1024; ++g) gpus += (g ? "," : "") + std::to_string(g);
  gpus += "]";
  const std::string path = "/v1/jobs/" + id + "/measured-energy/node-";
  for (int n = 0; n < 64; ++n) {
    auto put = s.Put(path + std::to_string(n), Report(10, 1, gpus, "slurm-epilog"));
    ASSERT_EQ(put.status, 200) << put.text;
    EXPECT_LT(put.text.size(), 400u) << "a summary, not every report";
  }
  auto over = s.Put(path + "64", Report(10, 1, gpus, "slurm-epilog"));
  EXPECT_EQ(over.status, 409) << over.text;
  EXPECT_NE(over.body.value("error", "").find("would list 66560 GPUs, more than the 65536 a job keeps"),
            std::string::npos)
      << over.text;
  // A node that reported already may report again (its old GPUs are replaced, not added).
  EXPECT_EQ(s.Put(path + "0", Report(20, 2, gpus, "slurm-epilog")).status, 200);
  auto job = s.Get("/v1/jobs/" + id);
  EXPECT_EQ(job.body["measured_gpu_energy"]["node_count"], 64);
  EXPECT_EQ(job.body["measured_gpu_energy"]["gpu_count"], 65536);
  EXPECT_LT(job.text.size(), 4096u);
  EXPECT_EQ(s.Get("/v1/jobs/" + id + "/measured-energy?offset=60&limit=10").body["nodes"].size(), 4u);
}

// Each bad request: its status and what the message says. Nothing is stored.
TEST(JobMeasuredEnergy, ABadReportIsRefusedNamingWhatWasWrong) {
  TempDir temp("measured_energy_bad");
  ServedServer s(temp.path());
  const std::string id = RegisterJob(s);
  const std::string path = "/v1/jobs/" + id + "/measured-energy/";
  const std::string good = Report(1, 1, "[0]", "slurm-epilog");
  const struct {
    const char* what;
    std::string node;
    std::string body;
    int status;
    std::string message;
  } cases[] = {
      {"malformed JSON", "n1", R"({"gpu_energy_j": )", 400, "malformed JSON"},
      {"empty body", "n1", "", 400, "request body is empty; expected JSON"},
      {"no energy", "n1", R"({"duration_s": 1, "gpus": []})", 422, "field 'gpu_energy_j' is required"},
      {"negative energy", "n1", R"({"gpu_energy_j": -5, "duration_s": 1, "gpus": []})", 422,
       "field 'gpu_energy_j': expected joules in [0, 1e+15], got -5"},
      {"GPU twice", "n1", R"({"gpu_energy_j": 5, "duration_s": 1, "gpus": [3, 3]})", 422,
       "field 'gpus[1]': GPU 3 is listed twice"},
      {"unknown field", "n1", R"({"gpu_energy_j": 5, "duration_s": 1, "gpus": [], "node": "n1"})", 422,
       "unknown field 'node'; expected only gpu_energy_j, duration_s, gpus, source"},
      {"a node that is not a host name", "node:1", good, 422,
       "node 'node:1': expected a host name, 1 to 253 characters of A-Z, a-z, 0-9, '.', '-' and '_'"},
      {"a node name too long", std::string(254, 'n'), good, 422, "': expected a host name"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    auto reply = s.Put(path + c.node, c.body);
    EXPECT_EQ(reply.status, c.status) << reply.text;
    ASSERT_TRUE(reply.body.is_object()) << reply.text;
    EXPECT_NE(reply.body.value("error", "").find(c.message), std::string::npos) << reply.text;
  }
  EXPECT_TRUE(s.Get("/v1/jobs/" + id).body["measured_gpu_energy"].is_null());
  // An unknown job, as every job endpoint answers it.
  auto unknown = s.Put("/v1/jobs/no-such-job/measured-energy/n1", good);
  EXPECT_EQ(unknown.status, 404) << unknown.text;
  EXPECT_EQ(unknown.body["error"], "unknown job 'no-such-job'");
  // Only PUT: a GET of the path is no endpoint.
  EXPECT_EQ(s.Get(path + "n1").status, 404);
}

// The report writes the job: a server listening beyond loopback without a token refuses it as
// it refuses a power target.
TEST(JobMeasuredEnergy, IsRefusedBeyondLoopbackWithoutATokenAsAPowerTargetIs) {
  TempDir temp("measured_energy_scope");
  ServedServer s(temp.path(), "0.0.0.0");
  const std::string id = RegisterJob(s);
  auto measured = s.Put("/v1/jobs/" + id + "/measured-energy/n1", Report(1, 1, "[0]", ""));
  auto target = s.Put("/v1/jobs/" + id + "/power_target", R"({"peak_power_per_gpu_w": 300})");
  EXPECT_EQ(measured.status, 403) << measured.text;
  EXPECT_EQ(target.status, 403) << target.text;
  EXPECT_EQ(measured.body["error"], target.body["error"]);
}

// The planner's estimate beside it: each step the ranks report after the first, at tp_degree x
// the sum over the pipelines of the energy of the point each runs.
TEST(JobMeasuredEnergy, ThePlannersEstimateCountsTheReportedStepsAtTheDeployedPointsEnergy) {
  TempDir temp("measured_energy_estimate");
  ServedServer s(temp.path());
  const std::string id = RegisterJob(s);
  ASSERT_EQ(s.Put("/v1/jobs/" + id + "/profile", json{{"csv", testing::SmallProfileCsv(2)}}.dump()).status, 202);
  json frontier;
  for (int naps = 0; naps < 60000; ++naps) {  // bounded: 60,000 naps of 1 ms
    frontier = s.Get("/v1/jobs/" + id + "/frontier").body;
    if (frontier["state"] != "computing") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_EQ(frontier["state"], "ready") << frontier.dump();
  // Every rank reports step 0, then step 10. The plan (the selected point) was deployed from
  // step 1: the first report only starts the count, step 0's target is not known to it, so
  // steps 1..9 are estimated, both pipelines at the selected point's energy.
  for (int step : {0, 10}) {
    for (int r = 0; r < 4; ++r) {
      auto d = s.Get("/v1/jobs/" + id + "/deployment?rank=" + std::to_string(r) + "&step=" + std::to_string(step));
      ASSERT_EQ(d.status, 200) << d.text;
      ASSERT_EQ(d.body["apply_from_step"], 1) << d.text;
      ASSERT_EQ(d.body["plan_index"], frontier["selected"]["index"]) << d.text;
    }
  }
  const double point_j = frontier["selected"]["energy_j"].get<double>();
  auto job = s.Get("/v1/jobs/" + id);
  EXPECT_EQ(job.body["estimated_gpu_energy_steps"], 9);
  EXPECT_DOUBLE_EQ(job.body["estimated_gpu_energy_j"].get<double>(), 9 * (2 * point_j) * 1);
  EXPECT_DOUBLE_EQ(s.Get("/v1/jobs").body["jobs"][0]["estimated_gpu_energy_j"].get<double>(), 9 * 2 * point_j);
  EXPECT_NE(s.Get("/").text.find("not measured (no node reported) &#183; planner's estimate "), std::string::npos);
  EXPECT_NE(s.Get("/").text.find(" over 9 steps<br/>"), std::string::npos);
  // A node's report answers with the estimate beside it.
  auto reported = s.Put("/v1/jobs/" + id + "/measured-energy/n1", Report(1, 1, "[0]", ""));
  ASSERT_EQ(reported.status, 200) << reported.text;
  EXPECT_EQ(reported.body["estimated_gpu_energy_steps"], 9);
  EXPECT_EQ(reported.body["estimated_gpu_energy_j"], job.body["estimated_gpu_energy_j"]);
}

}  // namespace
}  // namespace wattcut::server
