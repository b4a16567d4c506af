// RowAgentClient and RowAgents against real node agents (agent::AgentService on simulated GPUs, TCP
// on 127.0.0.1 with a token file), and against small httplib servers that answer what no agent
// would (malformed answers, an answer that never comes).
#include "wattcut/row_control/row_agent_client.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "wattcut/agent/agent_service.h"
#include "wattcut/gpu/simulated_backend.h"
#include "wattcut/row_control/loopback_timeouts_testing.h"

namespace wattcut::row_control {
namespace {

using ::testing::HasSubstr;
using testing::LoopbackTimeouts;

constexpr const char* kRowToken = "row-token-0123456789abcdef";
constexpr const char* kReadToken = "read-token-0123456789abcdef";
constexpr const char* kTrainToken = "train-token-0123456789abcde";

RowAgents::Clock::time_point Later(double s) {
  return RowAgents::Clock::now() +
         std::chrono::duration_cast<RowAgents::Clock::duration>(std::chrono::duration<double>(s));
}

class TempFolder {
 public:
  TempFolder() : path_((std::filesystem::temp_directory_path() / "wcrowagent-XXXXXX").string()) {
    if (::mkdtemp(path_.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed";
  }
  ~TempFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// One server's agent: AgentService on `gpus` simulated GPUs, TCP on 127.0.0.1 with a token file
// holding a row, a read and a train token; the server's non-GPU power is a fixed 1,700 W.
class LoopbackAgent {
 public:
  explicit LoopbackAgent(const TempFolder& folder, int gpus = 2) {
    token_file_ = folder.path() + "/agent-" + std::to_string(reinterpret_cast<uintptr_t>(this)) + ".tokens";
    std::ofstream(token_file_) << "row " << kRowToken << "\nread " << kReadToken << "\ntrain " << kTrainToken << "\n";
    ::chmod(token_file_.c_str(), 0600);
    auto simulated = SimulatedBackend::Create("a100-sxm", gpus);
    if (!simulated.ok()) {
      ADD_FAILURE() << simulated.error().message;
      return;
    }
    agent::AgentServiceOptions options;
    options.socket_path = "";
    options.tcp_host = "127.0.0.1";
    options.tcp_port = 0;
    options.token_file = token_file_;
    options.hostname = "node-under-test";
    options.non_gpu_power = agent::NonGpuPowerModel(1700, 0);
    options.node.log = [](const std::string&) {};
    options.http_threads = 4;
    auto started = agent::AgentService::Start(std::move(options), std::move(*simulated));
    if (!started.ok()) {
      ADD_FAILURE() << started.error().message;
      return;
    }
    service_ = std::move(*started);
  }

  agent::AgentService& service() { return *service_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(service_->tcp_port()); }
  RowServer Server(const std::string& name, polca::Priority priority = polca::Priority::kLow) const {
    return RowServer{name, url(), priority, 1, ""};
  }
  void Stop() { service_.reset(); }
  // The agent's own view of each GPU's ceiling (mhz 0: none).
  std::vector<int> CeilingsMhz() {
    std::vector<int> mhz;
    for (const agent::GpuControl& control : service_->node().Controls()) {
      mhz.push_back(control.ceiling ? control.ceiling->mhz : 0);
    }
    return mhz;
  }

 private:
  std::string token_file_;
  std::unique_ptr<agent::AgentService> service_;
};

// A port on 127.0.0.1 where nothing listens (bound for a moment, then closed).
int ClosedPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  socklen_t length = sizeof(address);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

// An httplib server on 127.0.0.1 answering every GET with `body` (as an agent would not), or, while
// `hold` is set, holding each answer until released (at most 30 s).
class OddAgent {
 public:
  explicit OddAgent(std::string body) : body_(std::move(body)) {
    server_.Get(R"(/.*)", [this](const httplib::Request&, httplib::Response& res) {
      std::unique_lock<std::mutex> lock(mu_);
      ++requests_;
      arrived_.notify_all();
      released_.wait_for(lock, std::chrono::seconds(30), [this] { return !hold_; });
      res.set_content(body_, "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~OddAgent() {
    Release();
    server_.stop();
    thread_.join();
  }
  void Hold() {
    std::lock_guard<std::mutex> lock(mu_);
    hold_ = true;
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    hold_ = false;
    released_.notify_all();
  }
  // Waits (at most 30 s) until `count` requests have arrived.
  bool WaitForRequests(int count) {
    std::unique_lock<std::mutex> lock(mu_);
    return arrived_.wait_for(lock, std::chrono::seconds(30), [&] { return requests_ >= count; });
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  std::string body_;
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::mutex mu_;
  std::condition_variable arrived_;
  std::condition_variable released_;
  bool hold_ = false;
  int requests_ = 0;
};

std::unique_ptr<RowAgentClient> Client(const RowServer& server, const std::string& token = kRowToken) {
  auto client = RowAgentClient::Create(server, token, LoopbackTimeouts());
  EXPECT_TRUE(client.ok()) << client.error().message;
  return client.ok() ? std::move(*client) : nullptr;
}

TEST(AgentTimeouts, FollowTheTelemetryPeriod) {
  AgentTimeouts one = AgentTimeouts::ForPeriod(1.0);
  EXPECT_DOUBLE_EQ(one.connect_timeout_s, 0.25);
  EXPECT_DOUBLE_EQ(one.request_timeout_s, 0.5);
  AgentTimeouts fast = AgentTimeouts::ForPeriod(0.01);
  EXPECT_DOUBLE_EQ(fast.connect_timeout_s, 0.05);
  EXPECT_DOUBLE_EQ(fast.request_timeout_s, 0.05);
  AgentTimeouts slow = AgentTimeouts::ForPeriod(60);
  EXPECT_DOUBLE_EQ(slow.connect_timeout_s, 2.0);
  EXPECT_DOUBLE_EQ(slow.request_timeout_s, 5.0);
}

TEST(RowAgentClient, ChecksAnAgentWithTheRowToken) {
  TempFolder folder;
  LoopbackAgent agent(folder);
  auto client = Client(agent.Server("gpu-a01"));
  ASSERT_NE(client, nullptr);
  auto identity = client->Check();
  ASSERT_TRUE(identity.ok()) << identity.error().message;
  EXPECT_EQ(identity->hostname, "node-under-test");
  EXPECT_EQ(identity->gpu_count, 2);
  // The scope probe changed nothing.
  EXPECT_EQ(agent.CeilingsMhz(), (std::vector<int>{0, 0}));
}

TEST(RowAgentClient, CheckNamesTheServerForAWrongTokenAMissingScopeAndNoAgent) {
  TempFolder folder;
  LoopbackAgent agent(folder);
  auto wrong = Client(agent.Server("gpu-a01"), "not-a-token-of-this-agent");
  auto wrong_check = wrong->Check();
  ASSERT_FALSE(wrong_check.ok());
  EXPECT_EQ(wrong_check.error().code, ErrorCode::kPermissionDenied);
  EXPECT_THAT(wrong_check.error().message, HasSubstr("server gpu-a01 (" + agent.url() + "): GET /v1/agent: "));
  EXPECT_THAT(wrong_check.error().message, HasSubstr("the agent refused the row's token (HTTP 401"));

  for (const char* token : {kReadToken, kTrainToken}) {
    auto unscoped = Client(agent.Server("gpu-a01"), token);
    auto unscoped_check = unscoped->Check();
    ASSERT_FALSE(unscoped_check.ok()) << token;
    EXPECT_EQ(unscoped_check.error().code, ErrorCode::kPermissionDenied);
    EXPECT_THAT(unscoped_check.error().message, HasSubstr("server gpu-a01 (" + agent.url() + "): PUT /v1/ceilings: "));
    EXPECT_THAT(unscoped_check.error().message, HasSubstr("the token lacks the 'row' scope (HTTP 403"));
  }

  const std::string nowhere = "http://127.0.0.1:" + std::to_string(ClosedPort());
  auto unreachable = Client(RowServer{"gpu-a02", nowhere, polca::Priority::kHigh, 2, ""});
  auto unreachable_check = unreachable->Check();
  ASSERT_FALSE(unreachable_check.ok());
  EXPECT_EQ(unreachable_check.error().code, ErrorCode::kUnavailable);
  EXPECT_THAT(unreachable_check.error().message, HasSubstr("server gpu-a02 (" + nowhere + "): GET /v1/agent: "));

  EXPECT_FALSE(RowAgentClient::Create(agent.Server("gpu-a01"), "", LoopbackTimeouts()).ok());
}

TEST(RowAgentClient, ReadsTheServersPower) {
  TempFolder folder;
  LoopbackAgent agent(folder, 4);
  auto client = Client(agent.Server("gpu-a01"));
  auto sample = client->ReadPower();
  ASSERT_TRUE(sample.ok()) << sample.error().message;
  EXPECT_EQ(sample->gpu_count, 4);
  EXPECT_EQ(sample->source, "model");
  // GPUs' power plus the fixed 1,700 W of the rest of the server.
  EXPECT_GT(sample->power_w, 1700.0);
  EXPECT_GT(sample->agent_time_s, 0.0);
}

TEST(RowAgentClient, SetsReadsAndClearsCeilings) {
  TempFolder folder;
  LoopbackAgent agent(folder);
  auto client = Client(agent.Server("gpu-a01"));
  auto none = client->ReadCeilings();
  ASSERT_TRUE(none.ok()) << none.error().message;
  EXPECT_EQ(none->gpu_count, 2);
  EXPECT_TRUE(none->ceilings.empty());

  Status set = client->SetCeilings(1200, 30, "low-priority");
  ASSERT_TRUE(set.ok()) << set.error().message;
  EXPECT_EQ(agent.CeilingsMhz(), (std::vector<int>{1200, 1200}));
  auto ceilings = client->ReadCeilings();
  ASSERT_TRUE(ceilings.ok()) << ceilings.error().message;
  ASSERT_EQ(ceilings->ceilings.size(), 2u);
  for (int gpu = 0; gpu < 2; ++gpu) {
    const GpuCeiling& ceiling = ceilings->ceilings[gpu];
    EXPECT_EQ(ceiling.gpu, gpu);
    EXPECT_EQ(ceiling.mhz, 1200);
    EXPECT_EQ(ceiling.reason, "low-priority");
    EXPECT_GT(ceiling.expires_in_s, 0.0);
    EXPECT_LE(ceiling.expires_in_s, 30.0);
  }

  Status cleared = client->ClearCeilings();
  ASSERT_TRUE(cleared.ok()) << cleared.error().message;
  EXPECT_EQ(agent.CeilingsMhz(), (std::vector<int>{0, 0}));
  auto after = client->ReadCeilings();
  ASSERT_TRUE(after.ok()) << after.error().message;
  EXPECT_TRUE(after->ceilings.empty());

  // The agent's refusal comes back with its code, named.
  Status refused = client->SetCeilings(1200, 0, "low-priority");
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.error().message, HasSubstr("server gpu-a01 (" + agent.url() + "): PUT /v1/ceilings: HTTP 4"));
  EXPECT_THAT(refused.error().message, HasSubstr("lease_s"));
}

TEST(RowAgentClient, AMalformedAnswerNamesTheServerAndTheField) {
  struct Case {
    const char* body;
    const char* expected;
  };
  for (const Case& c : {
           Case{"not json", "the answer is not JSON"},
           Case{"[1]", "the answer is not a JSON object"},
           Case{R"({"time_s":1,"gpu_count":0})", "field 'server' is missing"},
           Case{R"({"time_s":1,"gpu_count":0,"server":{"source":"model"}})", "field 'server.power_w' is missing"},
           Case{R"({"time_s":1,"gpu_count":0,"server":{"power_w":"9","source":"model"}})",
                "field 'server.power_w': expected a number, got \"9\""},
           Case{R"({"time_s":1,"gpu_count":0,"server":{"power_w":-5,"source":"model"}})",
                "field 'server.power_w': expected a finite number >= 0"},
           Case{R"({"time_s":1,"gpu_count":0,"server":{"power_w":5,"source":null}})", "field 'server.source'"},
           Case{R"({"time_s":1,"gpu_count":-1,"server":{"power_w":5,"source":"model"}})",
                "field 'gpu_count': expected an integer >= 0"},
           Case{R"({"time_s":1,"server":{"power_w":5,"source":"model"}})", "field 'gpu_count' is missing"},
           Case{R"({"gpu_count":0,"server":{"power_w":5,"source":"model"}})", "field 'time_s' is missing"},
           Case{R"({"time_s":1,"gpu_count":0,"server":[1]})", "field 'server': expected an object, got [1]"},
           Case{R"({"time_s":1,"gpu_count":0,"server":{"power_w":{"w":1},"source":"model"}})",
                "field 'server.power_w': expected a number, got {\"w\":1}"},
       }) {
    OddAgent odd(c.body);
    auto client = Client(RowServer{"gpu-b07", odd.url(), polca::Priority::kHigh, 7, ""});
    auto sample = client->ReadPower();
    ASSERT_FALSE(sample.ok()) << c.body;
    EXPECT_EQ(sample.error().code, ErrorCode::kMalformed) << c.body;
    EXPECT_THAT(sample.error().message, HasSubstr("server gpu-b07 (" + odd.url() + "): GET /v1/readings/server: "));
    EXPECT_THAT(sample.error().message, HasSubstr(c.expected)) << c.body;
  }
  for (const Case& c : {
           Case{R"({"gpus":[{"gpu":0}]})", "field 'gpus[0].ceiling' is missing"},
           Case{R"({"gpus":[{"ceiling":null}]})", "field 'gpus[0].gpu' is missing"},
           Case{R"({"gpus":[{"gpu":0,"ceiling":{"mhz":0,"reason":"brake","expires_in_s":3}}]})",
                "field 'gpus[0].ceiling.mhz': expected an integer >= 1"},
           Case{R"({"gpus":[{"gpu":0,"ceiling":{"mhz":900,"expires_in_s":3}}]})",
                "field 'gpus[0].ceiling.reason' is missing"},
           Case{R"({"gpus":[{"gpu":0,"ceiling":7}]})", "expected an object or null"},
       }) {
    OddAgent odd(c.body);
    auto client = Client(RowServer{"gpu-b07", odd.url(), polca::Priority::kHigh, 7, ""});
    auto ceilings = client->ReadCeilings();
    ASSERT_FALSE(ceilings.ok()) << c.body;
    EXPECT_THAT(ceilings.error().message, HasSubstr("server gpu-b07 (" + odd.url() + "): GET /v1/state: "));
    EXPECT_THAT(ceilings.error().message, HasSubstr(c.expected)) << c.body;
  }
}

// The server reading is taken from its own fields: the same names elsewhere, and fields it does not
// know, are not taken for them.
TEST(RowAgentClient, ReadsTheFieldsOfTheServerReadingOnly) {
  OddAgent odd(R"({"extra":{"time_s":"x","gpu_count":"y"},"gpu_count":3,)"
               R"("server":{"gpu_power_w":1.5,"nested":{"power_w":"no","source":3},"power_w":4200.5,)"
               R"("source":"redfish","redfish_age_s":null},"time_s":1700000000.25,"power_w":"top"})");
  auto client = Client(RowServer{"gpu-c01", odd.url(), polca::Priority::kLow, 1, ""});
  auto sample = client->ReadPower();
  ASSERT_TRUE(sample.ok()) << sample.error().message;
  EXPECT_DOUBLE_EQ(sample->power_w, 4200.5);
  EXPECT_EQ(sample->source, "redfish");
  EXPECT_EQ(sample->gpu_count, 3);
  EXPECT_DOUBLE_EQ(sample->agent_time_s, 1700000000.25);

  OddAgent empty("");
  auto none = Client(RowServer{"gpu-c02", empty.url(), polca::Priority::kLow, 2, ""})->ReadPower();
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(none.error().message, HasSubstr("the answer is not JSON"));
  OddAgent truncated(R"({"time_s":1,"gpu_count":0,"server":{"power_w":5,"source":"model"})");
  auto cut = Client(RowServer{"gpu-c03", truncated.url(), polca::Priority::kLow, 3, ""})->ReadPower();
  ASSERT_FALSE(cut.ok());
  EXPECT_THAT(cut.error().message, HasSubstr("the answer is not JSON"));
}

TEST(RowAgents, ReadsAndCommandsEveryServerAndNamesTheOnesThatFail) {
  TempFolder folder;
  std::vector<std::unique_ptr<LoopbackAgent>> agents;
  std::vector<RowServer> row;
  for (int i = 0; i < 4; ++i) {
    agents.push_back(std::make_unique<LoopbackAgent>(folder, 1 + i % 2));
    row.push_back(
        agents.back()->Server("s" + std::to_string(i), i % 2 ? polca::Priority::kHigh : polca::Priority::kLow));
  }
  const std::string nowhere = "http://127.0.0.1:" + std::to_string(ClosedPort());
  row.push_back(RowServer{"s-dead", nowhere, polca::Priority::kLow, 5, ""});
  auto made = RowAgents::Create(row, kRowToken, LoopbackTimeouts());
  ASSERT_TRUE(made.ok()) << made.error().message;
  RowAgents& all = **made;
  EXPECT_EQ(all.size(), 5u);

  auto checked = all.CheckAll(Later(60));
  ASSERT_FALSE(checked.ok());
  EXPECT_THAT(checked.error().message, HasSubstr("1 of the row's 5 agents cannot be used"));
  EXPECT_THAT(checked.error().message, HasSubstr("server s-dead (" + nowhere + "): GET /v1/agent"));

  for (int round = 0; round < 3; ++round) {
    std::vector<Result<ServerPowerSample>> samples = all.ReadAll(Later(60));
    ASSERT_EQ(samples.size(), 5u);
    for (int i = 0; i < 4; ++i) {
      ASSERT_TRUE(samples[i].ok()) << samples[i].error().message;
      EXPECT_EQ(samples[i]->gpu_count, 1 + i % 2);
    }
    ASSERT_FALSE(samples[4].ok());
    EXPECT_EQ(samples[4].error().code, ErrorCode::kUnavailable);
    EXPECT_THAT(samples[4].error().message, HasSubstr("server s-dead"));
    EXPECT_EQ(samples[0]->gpu_power, "power_usage");
  }
  // In-band control reads NVML's instant power (the simulated GPUs have the field).
  all.ReadInstantGpuPower(true);
  std::vector<Result<ServerPowerSample>> instant = all.ReadAll(Later(60));
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(instant[i].ok()) << instant[i].error().message;
    EXPECT_EQ(instant[i]->gpu_power, "instant");
  }
  all.ReadInstantGpuPower(false);

  // Two commands for server 0 run in order (the clear wins); one for the dead server fails; an
  // index outside the row is refused unsent.
  std::vector<AgentCommand> commands = {
      {0, AgentCommand::Kind::kSetCeilings, 1200, 30, "low-priority"},
      {2, AgentCommand::Kind::kSetCeilings, 1005, 30, "low-priority"},
      {1, AgentCommand::Kind::kSetCeilings, 900, 30, "brake"},
      {4, AgentCommand::Kind::kSetCeilings, 900, 30, "brake"},
      {0, AgentCommand::Kind::kClearCeilings, 0, 0, ""},
      {9, AgentCommand::Kind::kClearCeilings, 0, 0, ""},
  };
  std::vector<Status> sent = all.SendAll(commands, Later(60));
  ASSERT_EQ(sent.size(), commands.size());
  for (size_t c : {0, 1, 2, 4}) EXPECT_TRUE(sent[c].ok()) << c << ": " << sent[c].error().message;
  ASSERT_FALSE(sent[3].ok());
  EXPECT_THAT(sent[3].error().message, HasSubstr("server s-dead (" + nowhere + "): PUT /v1/ceilings"));
  ASSERT_FALSE(sent[5].ok());
  EXPECT_THAT(sent[5].error().message, HasSubstr("names server 9 of a row of 5"));
  EXPECT_EQ(agents[0]->CeilingsMhz(), (std::vector<int>{0}));
  EXPECT_EQ(agents[1]->CeilingsMhz(), (std::vector<int>{900, 900}));
  EXPECT_EQ(agents[2]->CeilingsMhz(), (std::vector<int>{1005}));
  EXPECT_EQ(agents[3]->CeilingsMhz(), (std::vector<int>{0, 0}));

  std::vector<Result<AgentCeilings>> ceilings = all.ReadAllCeilings(Later(60));
  ASSERT_EQ(ceilings.size(), 5u);
  ASSERT_TRUE(ceilings[1].ok()) << ceilings[1].error().message;
  ASSERT_EQ(ceilings[1]->ceilings.size(), 2u);
  EXPECT_EQ(ceilings[1]->ceilings[1].reason, "brake");
  ASSERT_TRUE(ceilings[0].ok());
  EXPECT_TRUE(ceilings[0]->ceilings.empty());
  EXPECT_FALSE(ceilings[4].ok());

  // An agent stopped between periods is an error for that server only; the others read on.
  agents[2]->Stop();
  std::vector<Result<ServerPowerSample>> after = all.ReadAll(Later(60));
  EXPECT_TRUE(after[0].ok());
  EXPECT_TRUE(after[1].ok());
  ASSERT_FALSE(after[2].ok());
  EXPECT_THAT(after[2].error().message, HasSubstr("server s2"));
  EXPECT_TRUE(after[3].ok());
}

TEST(RowAgents, AnAgentThatDoesNotAnswerIsStaleByTheDeadlineAndNothingOfTheCallIsLeftRunning) {
  TempFolder folder;
  LoopbackAgent agent(folder);
  OddAgent slow(R"({"time_s":1,"gpu_count":0,"server":{"power_w":500,"source":"model"}})");
  std::vector<RowServer> row = {agent.Server("fast"), RowServer{"slow", slow.url(), polca::Priority::kLow, 2, ""}};
  auto made = RowAgents::Create(row, kRowToken, LoopbackTimeouts());
  ASSERT_TRUE(made.ok()) << made.error().message;
  RowAgents& all = **made;

  slow.Hold();
  // The held answer misses the deadline; the other server is read (a loaded machine may need
  // another try for that).
  int asked = 0;
  for (int attempt = 0; attempt < 5; ++attempt) {
    std::vector<Result<ServerPowerSample>> first = all.ReadAll(Later(2));
    ++asked;
    ASSERT_EQ(first.size(), 2u);
    ASSERT_FALSE(first[1].ok());
    EXPECT_EQ(first[1].error().code, ErrorCode::kDeadlineExceeded);
    EXPECT_THAT(first[1].error().message, HasSubstr("server slow (" + slow.url() + "): GET /v1/readings/server: "));
    EXPECT_THAT(first[1].error().message, HasSubstr("no answer by the deadline"));
    if (first[0].ok()) break;
  }
  ASSERT_TRUE(slow.WaitForRequests(asked));

  // Its request was abandoned with the call: the next call asks it again at once, on a new
  // connection, and does not wait behind the first.
  std::vector<Result<ServerPowerSample>> second = all.ReadAll(Later(2));
  EXPECT_TRUE(second[0].ok()) << second[0].error().message;
  ASSERT_FALSE(second[1].ok());
  EXPECT_EQ(second[1].error().code, ErrorCode::kDeadlineExceeded);
  ASSERT_TRUE(slow.WaitForRequests(asked + 1));

  // Once it answers, it is read again.
  slow.Release();
  std::vector<Result<ServerPowerSample>> again = all.ReadAll(Later(60));
  ASSERT_TRUE(again[1].ok()) << again[1].error().message;
  EXPECT_DOUBLE_EQ(again[1]->power_w, 500);
}

}  // namespace
}  // namespace wattcut::row_control
