// `wattcut agent --require-job-credential` as a process on the fake NVML, as a Slurm node runs it:
// root (the Slurm plugin) registers a job of another user and ends it; the job's processes, run as
// that user (uid 65534 through setpriv), lease GPUs with the job's credential only. Every wait is
// bounded; none is a time limit on the agent.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>

#include "tests/agent/agent_process.h"
#include "wattcut/base/child_process_testing.h"

namespace wattcut::testing {
namespace {

using fake_nvml::ScopedFakeNvml;
using nlohmann::json;

constexpr int kNobody = 65534;

// One request by curl as uid 65534 on the socket: "STATUS BODY".
std::string CurlAsNobody(const std::string& socket, const std::string& method, const std::string& path,
                         const std::string& body, const std::string& credential) {
  std::string command =
      "setpriv --reuid 65534 --regid 65534 --clear-groups /usr/bin/curl -sS -o - -w ' %{http_code}' "
      "--unix-socket " +
      socket + " -X " + method + " http://agent" + path;
  if (!body.empty()) command += " -d '" + body + "'";
  if (!credential.empty()) command += " -H 'Authorization: Bearer " + credential + "'";
  std::string out;
  if (FILE* pipe = ::popen(command.c_str(), "r")) {
    std::array<char, 4096> buffer{};
    size_t n = 0;
    while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) out.append(buffer.data(), n);
    ::pclose(pipe);
  }
  // curl wrote the body, then " STATUS": moved to the front.
  const size_t space = out.rfind(' ');
  if (space == std::string::npos) return out;
  return out.substr(space + 1) + " " + out.substr(0, space);
}

class AgentJobsTest : public ::testing::Test {
 protected:
  AgentJobsTest() : fake_(fake_nvml::State{{"gpu_count", "4"}}) {
    dir_ = std::filesystem::path(fake_.path()).parent_path() / "agent";
    std::filesystem::create_directories(dir_);
    // Other users may reach the socket's folder (the socket is 0666: the credential decides).
    for (const std::filesystem::path& p : {std::filesystem::path(dir_).parent_path(), std::filesystem::path(dir_)}) {
      ::chmod(p.c_str(), 0755);
    }
  }
  std::unique_ptr<AgentProcess> StartAgent() {
    auto agent = std::make_unique<AgentProcess>(
        dir_, std::vector<std::string>{"--require-job-credential", "--socket-mode", "0666"});
    EXPECT_TRUE(agent->running()) << agent->startup_output();
    return agent;
  }
  ScopedFakeNvml fake_;
  std::string dir_;
};

TEST_F(AgentJobsTest, AJobsCredentialGivesItsOwnerItsGpusUntilTheJobEnds) {
  if (getuid() != 0) GTEST_SKIP() << "needs root: root registers the job, and its processes run as another user";
  auto agent = StartAgent();
  auto root = agent->UnixClient();
  AgentReply job = Call(*root, "PUT", "/v1/jobs/4242", {{"uid", kNobody}, {"gpus", {2, 3}}});
  ASSERT_EQ(job.status, 201) << job.text;
  const std::string credential = job.body["credential"];
  EXPECT_EQ(credential.size(), 64u);
  AgentReply again = Call(*root, "PUT", "/v1/jobs/4242", {{"uid", kNobody}, {"gpus", {2}}});
  ASSERT_EQ(again.status, 200) << again.text;
  EXPECT_EQ(again.body["credential"], credential) << "a second task of the job gets the same credential";

  // Without the credential, the job's user reads but leases nothing.
  EXPECT_EQ(CurlAsNobody(agent->socket(), "GET", "/v1/gpus", "", "").substr(0, 3), "200");
  const std::string bare = CurlAsNobody(agent->socket(), "POST", "/v1/leases", R"({"gpus":[2]})", "");
  EXPECT_EQ(bare.substr(0, 3), "403") << bare;
  EXPECT_NE(bare.find("present your job's credential"), std::string::npos) << bare;
  // With it: the job's GPUs only.
  const std::string other = CurlAsNobody(agent->socket(), "POST", "/v1/leases", R"({"gpus":[1]})", credential);
  EXPECT_EQ(other.substr(0, 3), "403") << other;
  EXPECT_NE(other.find("GPU 1 is not one of job 4242's GPUs (2-3)"), std::string::npos) << other;
  // Only root registers or ends jobs; the list shows no credential.
  EXPECT_EQ(CurlAsNobody(agent->socket(), "DELETE", "/v1/jobs/4242", "", credential).substr(0, 3), "403");
  const std::string listed = CurlAsNobody(agent->socket(), "GET", "/v1/jobs", "", "");
  EXPECT_EQ(listed.substr(0, 3), "200") << listed;
  EXPECT_EQ(listed.find(credential), std::string::npos) << listed;
  // Over TCP a credential is refused: it is bound to the job's uid, which only the socket knows.
  auto tcp = agent->TcpClient(credential);
  AgentReply over_tcp = Call(*tcp, "GET", "/v1/gpus");
  EXPECT_EQ(over_tcp.status, 401) << over_tcp.text;

  // A task of the job holds GPU 2 at 1200 MHz, as the job's user.
  std::vector<std::string> as_nobody = {"/usr/bin/setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"};
  std::vector<std::string> curl = CurlHolder(
      agent->socket(),
      {R"(POST /v1/leases {"gpus":[2],"ttl_s":3600})", R"(PUT /v1/gpus/2/sm-clocks {"min_mhz":1200,"max_mhz":1200})"},
      {"Authorization: Bearer " + credential});
  as_nobody.insert(as_nobody.end(), curl.begin(), curl.end());
  ChildProcess task = StartChild(as_nobody, "time_s");
  ASSERT_GT(task.pid, 0) << task.output;
  EXPECT_EQ(LockedClocks(fake_, 2), "1200-1200") << task.output;
  json lease = Call(*root, "GET", "/v1/state").body["gpus"][2]["lease"];
  EXPECT_EQ(lease["holder"]["job"], "4242") << lease;

  // The agent restarts (SIGKILL) in the middle of the job: the job and its credential survive.
  agent->Kill();
  StopChild(task.pid, SIGKILL);
  agent = StartAgent();
  root = agent->UnixClient();
  AgentReply jobs = Call(*root, "GET", "/v1/jobs");
  ASSERT_EQ(jobs.body["jobs"].size(), 1u) << jobs.text;
  EXPECT_EQ(jobs.body["jobs"][0]["job"], "4242");
  task = StartChild(as_nobody, "time_s");
  ASSERT_GT(task.pid, 0) << task.output;
  EXPECT_EQ(LockedClocks(fake_, 2), "1200-1200") << task.output;

  // What the job's GPUs used so far, for anyone who reads (the plugin writes it at the batch script's end).
  const std::string so_far = CurlAsNobody(agent->socket(), "GET", "/v1/jobs/4242", "", "");
  EXPECT_EQ(so_far.substr(0, 3), "200") << so_far;
  EXPECT_NE(so_far.find("\"gpu_energy_j\":"), std::string::npos) << so_far;
  EXPECT_EQ(so_far.find(credential), std::string::npos) << so_far;

  // The job ends (its epilog) while its task still runs: the lease ends, the GPU is reset, and the
  // credential stops working, saying why.
  AgentReply ended = Call(*root, "DELETE", "/v1/jobs/4242");
  ASSERT_EQ(ended.status, 200) << ended.text;
  EXPECT_EQ(ended.body["leases_ended"], 1);
  EXPECT_EQ(ended.body["reset_gpus"], json({2, 3}));
  EXPECT_TRUE(ended.body["gpu_energy_j"].is_number()) << ended.text;
  EXPECT_EQ(LockedClocks(fake_, 2), "0-0");
  EXPECT_TRUE(Call(*root, "GET", "/v1/state").body["gpus"][2]["lease"].is_null());
  const std::string late = CurlAsNobody(agent->socket(), "POST", "/v1/leases", R"({"gpus":[2]})", credential);
  EXPECT_EQ(late.substr(0, 3), "401") << late;
  EXPECT_NE(late.find("the credential of job 4242 stopped working when the job ended"), std::string::npos) << late;
  EXPECT_EQ(Call(*root, "DELETE", "/v1/jobs/4242").status, 404);
  EXPECT_EQ(Call(*root, "GET", "/v1/jobs/4242").status, 404);
  StopChild(task.pid, SIGKILL);
}

TEST_F(AgentJobsTest, BadJobRequestsAreRefusedNamingTheField) {
  auto agent = StartAgent();
  auto root = agent->UnixClient();
  if (getuid() != 0) {
    EXPECT_EQ(Call(*root, "PUT", "/v1/jobs/1", {{"uid", 1}}).status, 403);
    return;
  }
  AgentReply no_uid = Call(*root, "PUT", "/v1/jobs/1", json::object());
  EXPECT_EQ(no_uid.status, 422);
  EXPECT_NE(no_uid.text.find("'uid' is required"), std::string::npos) << no_uid.text;
  AgentReply bad_gpu = Call(*root, "PUT", "/v1/jobs/1", {{"uid", 1}, {"gpus", {7}}});
  EXPECT_EQ(bad_gpu.status, 404) << bad_gpu.text;
  EXPECT_NE(bad_gpu.text.find("GPU 7 does not exist"), std::string::npos) << bad_gpu.text;
  AgentReply unknown = Call(*root, "PUT", "/v1/jobs/1", {{"uid", 1}, {"gpu", {1}}});
  EXPECT_EQ(unknown.status, 422) << unknown.text;
  AgentReply bad_id = Call(*root, "PUT", "/v1/jobs/a%20b", {{"uid", 1}});
  EXPECT_EQ(bad_id.status, 422) << bad_id.text;
  AgentReply owner = Call(*root, "PUT", "/v1/jobs/1", {{"uid", 1}});
  ASSERT_EQ(owner.status, 201) << owner.text;
  AgentReply stolen = Call(*root, "PUT", "/v1/jobs/1", {{"uid", 2}});
  EXPECT_EQ(stolen.status, 409) << stolen.text;
  EXPECT_EQ(Call(*root, "DELETE", "/v1/jobs/2").status, 404);
}

}  // namespace
}  // namespace wattcut::testing
