// AgentBackend's side of the agent protocol (docs/agent.md), against a scripted agent on a real
// Unix socket: what it asks for and when (one lease per GPU before its first setter, renewals, a
// release at the end), how it takes a lease the agent forgot again, and how every refusal and
// malformed answer becomes an error value. (The backend against the real agent: tests/agent.)
#include "wattcut/gpu/agent_backend.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "wattcut/http/test_http_server.h"

namespace wattcut {
namespace {

using http::BoundedHttpServer;
using http::testing::TempSocketDir;
using http::testing::TestHttpServer;
using nlohmann::json;

// A scripted agent of two GPUs: it answers the protocol's requests from a little state, records
// every request ("PUT /v1/gpus/0/sm-clocks {...}") and can be told to forget its leases (a restart).
class ScriptedAgent {
 public:
  std::vector<std::string> Requests() {
    std::lock_guard lock(mutex_);
    return requests_;
  }
  // The requests other than discovery and readings.
  std::vector<std::string> Changes() {
    std::vector<std::string> changes;
    for (const std::string& request : Requests()) {
      if (request.rfind("GET ", 0) != 0) changes.push_back(request);
    }
    return changes;
  }
  void ForgetLeases() {
    std::lock_guard lock(mutex_);
    leases_.clear();
  }
  int api_version = 1;
  std::atomic<bool> energy_counter_broken{false};
  // With hold_renewals, a renewal waits at renewal_gate (the test opens it); renewal_held says one does.
  std::atomic<bool> hold_renewals{false};
  std::atomic<bool> renewal_held{false};
  http::testing::Gate renewal_gate;

  TestHttpServer::Routes Routes() {
    return [this](BoundedHttpServer& server) {
      server.Get("/v1/agent", [this](const httplib::Request& req, httplib::Response& res) {
        Note(req);
        Json(res, 200, {{"api_version", api_version}, {"backend", "simulated"}, {"gpu_count", 2}});
      });
      server.Get("/v1/gpus", [this](const httplib::Request& req, httplib::Response& res) {
        Note(req);
        json gpus = json::array();
        for (int i = 0; i < 2; ++i) {
          gpus.push_back({{"index", i},
                          {"uuid", "GPU-SCRIPTED-" + std::to_string(i)},
                          {"name", "Scripted GPU"},
                          {"sm_clocks_mhz", {210, 1410, 1200}},
                          {"memory_clocks_mhz", {1593, 1215}},
                          {"power_limit_w", {{"min", 100}, {"max", 400}, {"default", 400}}},
                          {"energy_counter", true}});
        }
        Json(res, 200, {{"gpus", gpus}});
      });
      server.Get("/v1/readings", [this](const httplib::Request& req, httplib::Response& res) {
        Note(req);
        json gpus = json::array();
        for (int i = 0; i < 2; ++i) {
          json reading{{"index", i},           {"power_w", 61.25 + i},   {"energy_mj", 123456 + i},
                       {"sm_clock_mhz", 1410}, {"power_limit_w", 400.0}, {"errors", json::object()}};
          if (energy_counter_broken) {
            reading["energy_mj"] = nullptr;
            reading["errors"]["energy_mj"] = "NVML_ERROR_NOT_SUPPORTED";
          }
          gpus.push_back(reading);
        }
        Json(res, 200, {{"time_s", 1.5}, {"gpus", gpus}});
      });
      server.Post("/v1/leases", [this](const httplib::Request& req, httplib::Response& res) {
        Note(req);
        json body = json::parse(req.body);
        std::lock_guard lock(mutex_);
        for (int gpu : body["gpus"]) {
          for (const auto& [id, gpus] : leases_) {
            if (std::find(gpus.begin(), gpus.end(), gpu) != gpus.end()) {
              Json(res, 409,
                   {{"error", "GPU " + std::to_string(gpu) + " is leased by pid 4242 (uid 1000)"},
                    {"code", "conflict"}});
              return;
            }
          }
        }
        const uint64_t id = next_lease_id_++;
        leases_[id] = body["gpus"].get<std::vector<int>>();
        Json(res, 201, {{"id", id}, {"gpus", body["gpus"]}, {"ttl_s", body["ttl_s"]}});
      });
      server.Post(R"(/v1/leases/(\d+)/renew)", [this](const httplib::Request& req, httplib::Response& res) {
        Note(req);
        if (hold_renewals) {
          renewal_held = true;
          renewal_gate.Wait();
          renewal_held = false;
        }
        std::lock_guard lock(mutex_);
        if (leases_.count(std::stoull(req.matches[1])) == 0) {
          Json(res, 404, {{"error", "no lease " + std::string(req.matches[1])}, {"code", "not_found"}});
          return;
        }
        Json(res, 200, {{"id", std::stoull(req.matches[1])}});
      });
      server.Delete(R"(/v1/leases/(\d+))", [this](const httplib::Request& req, httplib::Response& res) {
        Note(req);
        std::lock_guard lock(mutex_);
        leases_.erase(std::stoull(req.matches[1]));
        Json(res, 200, {{"released", json::array()}});
      });
      auto setter = [this](const httplib::Request& req, httplib::Response& res) {
        Note(req);
        const int gpu = std::stoi(req.matches[1]);
        if (req.matches[2] == "sm-clocks" && req.method == "PUT" && json::parse(req.body)["min_mhz"] == 1234) {
          Json(res, 422,
               {{"error", "min_mhz: 1234 MHz is not a supported clock of GPU 0"}, {"code", "invalid_argument"}});
          return;
        }
        if (req.matches[2] == "power-limit" && req.method == "PUT" && json::parse(req.body)["watts"] == 111) {
          res.status = 502;
          res.set_content("<html>bad gateway</html>", "text/html");
          return;
        }
        if (req.matches[2] == "memory-clocks" && req.method == "PUT" && json::parse(req.body)["min_mhz"] == 1215) {
          Json(res, 500,
               {{"error", "GPU 0: nvmlDeviceSetMemoryLockedClocks: NVML_ERROR_NO_PERMISSION"},
                {"code", "some_future_code"}});
          return;
        }
        std::lock_guard lock(mutex_);
        for (const auto& [id, gpus] : leases_) {
          if (std::find(gpus.begin(), gpus.end(), gpu) != gpus.end()) {
            Json(res, 200, {{"gpu", gpu}});
            return;
          }
        }
        Json(res, 403,
             {{"error",
               "GPU " + std::to_string(gpu) + " is not leased by this process: lease it first: POST /v1/leases"},
              {"code", "permission_denied"}});
      };
      const std::string setters = R"(/v1/gpus/(\d+)/(sm-clocks|memory-clocks|power-limit))";
      server.Put(setters, setter);
      server.Delete(setters, setter);
    };
  }

 private:
  void Note(const httplib::Request& req) {
    std::lock_guard lock(mutex_);
    requests_.push_back(req.method + " " + req.path + (req.body.empty() ? "" : " " + req.body));
  }
  static void Json(httplib::Response& res, int status, const json& body) {
    res.status = status;
    res.set_content(body.dump(), "application/json");
  }

  std::mutex mutex_;
  std::vector<std::string> requests_;
  std::map<uint64_t, std::vector<int>> leases_;
  uint64_t next_lease_id_ = 1;
};

struct Served {
  TempSocketDir dir;
  ScriptedAgent agent;
  std::unique_ptr<TestHttpServer> server;
  std::vector<std::string> log;
  std::mutex log_mutex;

  Served() { server = TestHttpServer::OnUnixSocket(dir.Socket("agent.sock"), agent.Routes()); }

  Result<std::unique_ptr<AgentBackend>> Open(int ttl_s = 10) {
    AgentBackendOptions options;
    options.endpoint.unix_socket = dir.Socket("agent.sock");
    options.lease_ttl_s = ttl_s;
    options.log = [this](const std::string& line) {
      std::lock_guard lock(log_mutex);
      log.push_back(line);
    };
    return AgentBackend::Open(std::move(options));
  }
};

TEST(AgentBackend, DiscoveryIsReadOnceAndReadingsEachTime) {
  Served served;
  auto backend = served.Open();
  ASSERT_TRUE(backend.ok()) << backend.error().message;
  AgentBackend& b = **backend;
  EXPECT_EQ(b.name(), "agent(unix:" + served.dir.Socket("agent.sock") + ")");
  EXPECT_EQ(b.agent_backend_name(), "simulated");
  EXPECT_EQ(*b.DeviceCount(), 2);
  EXPECT_EQ(b.Info(1)->uuid, "GPU-SCRIPTED-1");
  EXPECT_EQ(b.Info(1)->index, 1);
  EXPECT_EQ(*b.SupportedMemoryClocksMhz(0), (std::vector<int>{1593, 1215}));
  EXPECT_EQ(*SupportedSmClocksMhz(b, 0), (std::vector<int>{1410, 1200, 210}));  // highest first
  auto other_memory = b.SupportedGraphicsClocksMhz(0, 1215);
  ASSERT_FALSE(other_memory.ok());
  EXPECT_EQ(other_memory.error().message,
            "GPU 0: the agent lists SM clocks at the highest memory clock (1593 MHz) only, not at 1215 MHz");
  EXPECT_EQ(b.PowerLimits(0)->default_mw, 400000);
  EXPECT_EQ(b.PowerLimits(0)->min_mw, 100000);
  EXPECT_EQ(*b.PowerUsageMw(1), 62250);
  EXPECT_EQ(*b.TotalEnergyMj(1), 123457);
  EXPECT_EQ(*b.SmClockMhz(0), 1410);
  EXPECT_EQ(*b.PowerLimitMw(0), 400000);
  EXPECT_EQ(b.Info(2).error().message, "GPU 2 does not exist (2 GPUs)");
  EXPECT_EQ(b.LockGpuClocks(5, 1200, 1200).error().message, "GPU 5 does not exist (2 GPUs)");
  // Readings only: no lease was taken.
  EXPECT_TRUE(served.agent.Changes().empty());
  EXPECT_EQ(served.agent.Requests().front(), "GET /v1/agent");

  served.agent.energy_counter_broken = true;
  auto energy = b.TotalEnergyMj(0);
  ASSERT_FALSE(energy.ok());
  EXPECT_EQ(energy.error().code, ErrorCode::kDeviceError);
  EXPECT_EQ(energy.error().message, "GPU 0: the agent could not read energy_mj: NVML_ERROR_NOT_SUPPORTED");
}

TEST(AgentBackend, TheFirstSetterLeasesTheGpuAndTheEndReleasesIt) {
  Served served;
  {
    auto backend = served.Open();
    ASSERT_TRUE(backend.ok()) << backend.error().message;
    AgentBackend& b = **backend;
    ASSERT_TRUE(b.LockGpuClocks(0, 1200, 1200).ok());
    ASSERT_TRUE(b.LockGpuClocks(0, 1410, 1410).ok());
    ASSERT_TRUE(b.LockMemoryClocks(0, 1593, 1593).ok());
    ASSERT_TRUE(b.SetPowerLimitMw(0, 300000).ok());
    ASSERT_TRUE(ResetPowerLimit(b, 0).ok());  // the default: the holder's limit is lifted
    ASSERT_TRUE(b.ResetMemoryClocks(0).ok());
    ASSERT_TRUE(b.ResetGpuClocks(0).ok());
    EXPECT_EQ(b.leased_gpus(), (std::vector<int>{0}));
  }
  EXPECT_EQ(served.agent.Changes(), (std::vector<std::string>{
                                        R"(POST /v1/leases {"gpus":[0],"ttl_s":10})",
                                        R"(PUT /v1/gpus/0/sm-clocks {"max_mhz":1200,"min_mhz":1200})",
                                        R"(PUT /v1/gpus/0/sm-clocks {"max_mhz":1410,"min_mhz":1410})",
                                        R"(PUT /v1/gpus/0/memory-clocks {"max_mhz":1593,"min_mhz":1593})",
                                        R"(PUT /v1/gpus/0/power-limit {"watts":300.0})",
                                        "DELETE /v1/gpus/0/power-limit",
                                        "DELETE /v1/gpus/0/memory-clocks",
                                        "DELETE /v1/gpus/0/sm-clocks",
                                        "DELETE /v1/leases/1",
                                    }));
}

TEST(AgentBackend, LeaseGpusTakesSeveralUpFrontAndAConflictNamesTheHolder) {
  Served served;
  auto first = served.Open();
  auto second = served.Open();
  ASSERT_TRUE(first.ok() && second.ok());
  ASSERT_TRUE((*first)->LeaseGpus({1, 0, 1}).ok());
  ASSERT_TRUE((*first)->LeaseGpus({0}).ok());  // held already: no request
  EXPECT_EQ((*first)->leased_gpus(), (std::vector<int>{0, 1}));
  Status taken = (*second)->LeaseGpus({1});
  ASSERT_FALSE(taken.ok());
  EXPECT_EQ(taken.error().code, ErrorCode::kConflict);
  EXPECT_EQ(taken.error().message, "GPU 1 is leased by pid 4242 (uid 1000)");
  Status lock = (*second)->LockGpuClocks(0, 1200, 1200);
  ASSERT_FALSE(lock.ok());
  EXPECT_EQ(lock.error().message, "GPU 0 is leased by pid 4242 (uid 1000)");
  EXPECT_TRUE((*second)->leased_gpus().empty());
  EXPECT_EQ((*first)->LeaseGpus({7}).error().message, "GPU 7 does not exist (2 GPUs)");
  ASSERT_TRUE((*first)->ReleaseLeases().ok());
  EXPECT_TRUE((*first)->leased_gpus().empty());
  ASSERT_TRUE((*second)->LockGpuClocks(0, 1200, 1200).ok());  // free now
}

// Polls `done` every 10 ms, at most 10 s (the renewals below come every second).
template <typename Done>
bool Eventually(Done done) {
  for (int i = 0; i < 1000; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return done();
}

size_t Count(const std::vector<std::string>& requests, const std::string& prefix) {
  return static_cast<size_t>(
      std::count_if(requests.begin(), requests.end(), [&](const std::string& r) { return r.rfind(prefix, 0) == 0; }));
}

TEST(AgentBackend, ASetterRefusedForALeaseTheAgentForgotTakesItAgainSetsWhatItHadAndRetries) {
  Served served;
  auto backend = served.Open();
  ASSERT_TRUE(backend.ok());
  AgentBackend& b = **backend;
  ASSERT_TRUE(b.LockMemoryClocks(0, 1593, 1593).ok());
  ASSERT_TRUE(b.LockGpuClocks(0, 1200, 1200).ok());
  served.agent.ForgetLeases();  // the agent restarted
  ASSERT_TRUE(b.LockGpuClocks(0, 1410, 1410).ok());
  EXPECT_EQ(b.leases_retaken(), 1u);
  EXPECT_EQ(served.agent.Changes(), (std::vector<std::string>{
                                        R"(POST /v1/leases {"gpus":[0],"ttl_s":10})",
                                        R"(PUT /v1/gpus/0/memory-clocks {"max_mhz":1593,"min_mhz":1593})",
                                        R"(PUT /v1/gpus/0/sm-clocks {"max_mhz":1200,"min_mhz":1200})",
                                        R"(PUT /v1/gpus/0/sm-clocks {"max_mhz":1410,"min_mhz":1410})",  // 403
                                        R"(POST /v1/leases {"gpus":[0],"ttl_s":10})",
                                        R"(PUT /v1/gpus/0/memory-clocks {"max_mhz":1593,"min_mhz":1593})",
                                        R"(PUT /v1/gpus/0/sm-clocks {"max_mhz":1200,"min_mhz":1200})",
                                        R"(PUT /v1/gpus/0/sm-clocks {"max_mhz":1410,"min_mhz":1410})",
                                    }));
  std::lock_guard lock(served.log_mutex);
  ASSERT_EQ(served.log.size(), 1u);
  EXPECT_EQ(served.log[0], "agent unix:" + served.dir.Socket("agent.sock") +
                               ": lease 1 of GPU(s) 0 was refused (GPU 0 is not leased by this process: lease it "
                               "first: POST /v1/leases): leased them again (lease 2) and set them again");
}

TEST(AgentBackend, LeasesAreRenewedAndOneTheAgentForgotIsTakenAgainWithItsSettings) {
  Served served;
  auto backend = served.Open(/*ttl_s=*/3);  // renewed every second
  ASSERT_TRUE(backend.ok());
  AgentBackend& b = **backend;
  ASSERT_TRUE(b.LeaseGpus({0, 1}).ok());
  ASSERT_TRUE(b.LockGpuClocks(1, 1200, 1200).ok());
  ASSERT_TRUE(Eventually([&] { return Count(served.agent.Requests(), "POST /v1/leases/1/renew") >= 1; }));
  served.agent.ForgetLeases();
  ASSERT_TRUE(Eventually([&] { return b.leases_retaken() == 1; }));
  const std::vector<std::string> changes = served.agent.Changes();
  EXPECT_EQ(Count(changes, R"(POST /v1/leases {"gpus":[0,1],"ttl_s":3})"), 2u);
  EXPECT_EQ(Count(changes, R"(PUT /v1/gpus/1/sm-clocks {"max_mhz":1200,"min_mhz":1200})"), 2u);
  EXPECT_EQ(Count(changes, "PUT /v1/gpus/0/"), 0u);  // nothing was set on GPU 0
  ASSERT_TRUE(Eventually([&] { return Count(served.agent.Requests(), "POST /v1/leases/2/renew") >= 1; }));
  EXPECT_EQ(b.leased_gpus(), (std::vector<int>{0, 1}));
}

// A setter goes ahead while a renewal waits for a slow agent: the renewal holds no lock a setter
// needs, and on the socket asks on its own connection (issue 30, point 6).
TEST(AgentBackend, ASetterDoesNotWaitBehindARenewal) {
  Served served;
  served.agent.hold_renewals = true;
  auto backend = served.Open(/*ttl_s=*/3);  // renewed every second
  ASSERT_TRUE(backend.ok());
  AgentBackend& b = **backend;
  ASSERT_TRUE(b.LeaseGpus({0}).ok());
  ASSERT_TRUE(Eventually([&] { return served.agent.renewal_held.load(); }));
  ASSERT_TRUE(b.LockGpuClocks(0, 1200, 1200).ok());
  ASSERT_TRUE(b.ResetGpuClocks(0).ok());
  EXPECT_TRUE(served.agent.renewal_held) << "the setters came back while the renewal was still held";
  served.agent.hold_renewals = false;
  served.agent.renewal_gate.Open();
}

TEST(AgentBackend, AnAgentsRefusalKeepsItsCodeAndMessage) {
  Served served;
  auto backend = served.Open();
  ASSERT_TRUE(backend.ok());
  AgentBackend& b = **backend;
  Status unsupported = b.LockGpuClocks(0, 1234, 1234);
  ASSERT_FALSE(unsupported.ok());
  EXPECT_EQ(unsupported.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(unsupported.error().message, "min_mhz: 1234 MHz is not a supported clock of GPU 0");
  Status unknown_code = b.LockMemoryClocks(0, 1215, 1215);  // a code this wattcut does not know: from the status
  ASSERT_FALSE(unknown_code.ok());
  EXPECT_EQ(unknown_code.error().code, ErrorCode::kDeviceError);
  EXPECT_EQ(unknown_code.error().message, "GPU 0: nvmlDeviceSetMemoryLockedClocks: NVML_ERROR_NO_PERMISSION");
  Status not_json = b.SetPowerLimitMw(0, 111000);
  ASSERT_FALSE(not_json.ok());
  EXPECT_EQ(not_json.error().code, ErrorCode::kDeviceError);
  EXPECT_EQ(not_json.error().message, "unix:" + served.dir.Socket("agent.sock") +
                                          ": PUT /v1/gpus/0/power-limit answered HTTP 502: '<html>bad gateway</html>'");
}

TEST(AgentBackend, AnAgentThatCannotBeReachedIsUnavailable) {
  TempSocketDir dir;
  AgentBackendOptions options;
  options.endpoint.unix_socket = dir.Socket("agent.sock");
  auto absent = AgentBackend::Open(options);
  ASSERT_FALSE(absent.ok());
  EXPECT_EQ(absent.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(absent.error().message,
            "cannot reach unix:" + dir.Socket("agent.sock") + ": no socket file there (is the agent running?)");

  auto served = std::make_unique<Served>();
  auto backend = served->Open();
  ASSERT_TRUE(backend.ok());
  const std::string socket = served->dir.Socket("agent.sock");
  served->server.reset();  // the agent stops
  auto reading = (*backend)->PowerUsageMw(0);
  ASSERT_FALSE(reading.ok());
  EXPECT_EQ(reading.error().code, ErrorCode::kUnavailable);
  Status lock = (*backend)->LockGpuClocks(0, 1200, 1200);
  ASSERT_FALSE(lock.ok());
  EXPECT_EQ(lock.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(lock.error().message.rfind("cannot reach unix:" + socket + ": ", 0), 0u) << lock.error().message;
}

TEST(AgentBackend, AnotherApiVersionOrAnotherServiceIsRefusedAtOpen) {
  Served served;
  served.agent.api_version = 2;
  auto newer = served.Open();
  ASSERT_FALSE(newer.ok());
  EXPECT_EQ(newer.error().message, "the agent at unix:" + served.dir.Socket("agent.sock") +
                                       " speaks API version 2; this wattcut speaks version 1");

  TempSocketDir dir;
  auto other = TestHttpServer::OnUnixSocket(dir.Socket(), [](BoundedHttpServer& server) {
    server.Get("/v1/agent", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(R"({"status":"ok"})", "application/json");
    });
  });
  AgentBackendOptions options;
  options.endpoint.unix_socket = dir.Socket();
  auto refused = AgentBackend::Open(options);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kMalformed);
  EXPECT_EQ(refused.error().message, "the agent at unix:" + dir.Socket() +
                                         " answered GET /v1/agent with no api_version (is it a wattcut agent?)");
  options.lease_ttl_s = 0;
  EXPECT_EQ(AgentBackend::Open(options).error().message, "agent lease ttl 0 s: expected 1 to 3600 s");
}

TEST(AgentEndpoint, ASocketPathOrAUrlAndATokenFile) {
  EXPECT_EQ(AgentEndpoint("/run/wattcut/agent.sock")->unix_socket, "/run/wattcut/agent.sock");
  EXPECT_EQ(AgentEndpoint("unix:/tmp/a.sock")->unix_socket, "/tmp/a.sock");
  EXPECT_EQ(AgentEndpoint("http://10.0.0.5:7788")->base_url, "http://10.0.0.5:7788");
  EXPECT_EQ(AgentEndpoint("ftp://x").error().message,
            "agent 'ftp://x': expected a socket path or an http:// or https:// URL");
  EXPECT_FALSE(AgentEndpoint("").ok());
  EXPECT_FALSE(AgentEndpoint("unix:").ok());

  TempSocketDir dir;
  const std::string bare = dir.path() + "/bare", scoped = dir.path() + "/scoped", empty = dir.path() + "/empty",
                    bad = dir.path() + "/bad";
  std::ofstream(bare) << "3f9c0a\n";
  std::ofstream(scoped) << "# the row controller's\n\ntrain  77aa \n";
  std::ofstream(empty) << "# nothing\n";
  std::ofstream(bad) << "train 77aa extra\n";
  EXPECT_EQ(AgentEndpoint("http://h:1", bare)->bearer_token, "3f9c0a");
  EXPECT_EQ(AgentEndpoint("http://h:1", scoped)->bearer_token, "77aa");
  EXPECT_EQ(AgentEndpoint("http://h:1", empty).error().message,
            empty + ": no token in it (expected a line 'TOKEN' or 'SCOPE TOKEN')");
  EXPECT_EQ(AgentEndpoint("http://h:1", bad).error().message,
            bad + ":1: expected 'TOKEN' or 'SCOPE TOKEN', got 3 words");
  EXPECT_EQ(AgentEndpoint("http://h:1", dir.path() + "/absent").error().message,
            "cannot read the agent token file " + dir.path() + "/absent");
}

TEST(AgentEndpoint, AJobsCredentialFromTheEnvironmentGoesOnTheSocketOnly) {
  ::setenv(kAgentCredentialVariable, "job-credential-0123456789abcdef", 1);
  EXPECT_EQ(AgentEndpoint("/run/wattcut/agent.sock")->bearer_token, "job-credential-0123456789abcdef");
  EXPECT_EQ(AgentEndpoint("http://10.0.0.5:7788")->bearer_token, "")
      << "over TCP a job's credential is refused: it is not sent";
  TempSocketDir dir;
  std::ofstream(dir.path() + "/token") << "train 77aa\n";
  EXPECT_EQ(AgentEndpoint("/run/wattcut/agent.sock", dir.path() + "/token")->bearer_token, "77aa")
      << "a token file named wins";
  ::unsetenv(kAgentCredentialVariable);
  EXPECT_EQ(AgentEndpoint("/run/wattcut/agent.sock")->bearer_token, "");
}

}  // namespace
}  // namespace wattcut
