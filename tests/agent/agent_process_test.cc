// `wattcut agent` as a process on the fake NVML: leases against killed holders, a killed and
// restarted agent, ceilings that outlive their row client, the composition rule, tokens and
// scopes over TCP, the socket's mode, and bad input. Every wait is bounded; none is a time limit
// on the agent (the times measured are printed).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <poll.h>
#include <sys/resource.h>

#include "tests/agent/agent_process.h"
#include "wattcut/agent/reading_streams.h"
#include "wattcut/base/child_process_testing.h"
#include "wattcut/http/held_connections.h"

namespace wattcut::testing {
namespace {

using fake_nvml::ScopedFakeNvml;
using nlohmann::json;

const json kLockTo1200 = {{"min_mhz", 1200}, {"max_mhz", 1200}};

class AgentProcessTest : public ::testing::Test {
 protected:
  AgentProcessTest() : fake_(fake_nvml::State{{"gpu_count", "2"}}) {
    dir_ = std::filesystem::path(fake_.path()).parent_path() / "agent";
    std::filesystem::create_directories(dir_);
  }
  std::unique_ptr<AgentProcess> StartAgent(std::vector<std::string> args = {}) {
    auto agent = std::make_unique<AgentProcess>(dir_, std::move(args));
    EXPECT_TRUE(agent->running()) << agent->startup_output();
    return agent;
  }
  // A curl process that leases GPU `gpu` (ttl an hour: only its exit can end the lease), locks it
  // to 1200 MHz and stays alive reading the stream.
  ChildProcess StartHolder(const AgentProcess& agent, int gpu) {
    const std::string g = std::to_string(gpu);
    ChildProcess holder =
        StartChild(CurlHolder(agent.socket(), {"POST /v1/leases {\"gpus\":[" + g + "],\"ttl_s\":3600}",
                                               "PUT /v1/gpus/" + g + "/sm-clocks " + kLockTo1200.dump()}),
                   "time_s");
    EXPECT_GT(holder.pid, 0) << holder.output;
    EXPECT_EQ(LockedClocks(fake_, gpu), "1200-1200") << holder.output;
    return holder;
  }
  ScopedFakeNvml fake_;
  std::string dir_;
};

TEST_F(AgentProcessTest, ASigkilledLeaseHoldersGpuIsResetAtOnce) {
  auto agent = StartAgent();
  ChildProcess holder = StartHolder(*agent, 0);
  const auto killed = std::chrono::steady_clock::now();
  StopChild(holder.pid, SIGKILL);
  ASSERT_TRUE(WaitUntil([&] { return LockedClocks(fake_, 0) == "0-0"; })) << LockedClocks(fake_, 0);
  std::cout << "GPU 0 reset "
            << std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - killed).count()
            << " ms after its holder was SIGKILLed (lease ttl: 3600 s)\n";
  auto client = agent->UnixClient();
  EXPECT_TRUE(Call(*client, "GET", "/v1/state").body["gpus"][0]["lease"].is_null());
  // Every NVML call, the holder's lock included, came from the agent's process.
  EXPECT_GT(ExpectEveryCallFrom(fake_.Log(), agent->pid()), 0);
}

TEST_F(AgentProcessTest, ASecondHolderGetsAConflictNamingTheFirstOnesPid) {
  auto agent = StartAgent();
  ChildProcess holder = StartHolder(*agent, 0);
  auto client = agent->UnixClient();
  AgentReply refused = Call(*client, "POST", "/v1/leases", {{"gpus", {0}}});
  EXPECT_EQ(refused.status, 409) << refused.text;
  EXPECT_NE(refused.text.find("leased by pid " + std::to_string(holder.pid)), std::string::npos) << refused.text;
  EXPECT_EQ(Call(*client, "PUT", "/v1/gpus/0/sm-clocks", kLockTo1200).status, 403);
  StopChild(holder.pid, SIGKILL);
}

TEST_F(AgentProcessTest, AKilledAndRestartedAgentResetsEveryUnheldGpuAndKeepsItsCeilings) {
  auto agent = StartAgent();
  ChildProcess holder = StartHolder(*agent, 0);
  auto client = agent->UnixClient();  // as root: the row scope too
  ASSERT_EQ(Call(*client, "PUT", "/v1/gpus/1/ceiling", {{"mhz", 1005}, {"lease_s", 600}}).status, 200);
  EXPECT_EQ(LockedClocks(fake_, 1), "210-1005");
  agent->Kill();
  EXPECT_EQ(LockedClocks(fake_, 0), "1200-1200") << "a SIGKILLed agent undoes nothing";
  StopChild(holder.pid, SIGKILL);
  auto restarted = StartAgent();
  EXPECT_EQ(LockedClocks(fake_, 0), "0-0") << "nobody holds GPU 0 after the restart: reset";
  EXPECT_EQ(LockedClocks(fake_, 1), "210-1005") << "the ceiling's lease has not run out: still in force";
  auto again = restarted->UnixClient();
  json state = Call(*again, "GET", "/v1/state").body;
  EXPECT_EQ(state["gpus"][1]["ceiling"]["mhz"], 1005);
  EXPECT_GT(state["gpus"][1]["ceiling"]["expires_in_s"].get<double>(), 0);
}

TEST_F(AgentProcessTest, ACeilingOutlivesItsSigkilledRowClientUntilItsLeaseRunsOut) {
  const AgentTokenFile tokens = WriteTokenFile(dir_);
  auto agent = StartAgent({"--token-file", tokens.path});
  const std::string url = "http://127.0.0.1:" + std::to_string(agent->tcp_port());
  // The row client: one curl process over TCP with the row token, held alive by a stream.
  ChildProcess row =
      StartChild({"/usr/bin/curl", "-sS", "-H", "Authorization: Bearer " + tokens.row, "-X", "PUT",
                  url + "/v1/ceilings", "-d", R"({"mhz":1005,"lease_s":2,"reason":"brake"})", "-w", "\\n", "--next",
                  "-sSN", "-H", "Authorization: Bearer " + tokens.row, url + "/v1/readings/stream?interval_s=0.5"},
                 "time_s");
  ASSERT_GT(row.pid, 0) << row.output;
  EXPECT_EQ(LockedClocks(fake_, 0), "210-1005");
  StopChild(row.pid, SIGKILL);
  EXPECT_EQ(LockedClocks(fake_, 0), "210-1005") << "the row controller died: its ceilings stay";
  const auto killed = std::chrono::steady_clock::now();
  ASSERT_TRUE(WaitUntil([&] { return LockedClocks(fake_, 0) == "0-0" && LockedClocks(fake_, 1) == "0-0"; }));
  std::cout << "ceilings lifted " << std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count()
            << " s after the row client was killed (their lease: 2 s)\n";
}

TEST_F(AgentProcessTest, ATrainingLockUnderACeilingAndBack) {
  auto agent = StartAgent();
  auto client = agent->UnixClient();
  ASSERT_EQ(Call(*client, "POST", "/v1/leases", {{"gpus", {0}}}).status, 201);
  ASSERT_EQ(Call(*client, "PUT", "/v1/gpus/0/sm-clocks", {{"min_mhz", 1410}, {"max_mhz", 1410}}).status, 200);
  AgentReply capped = Call(*client, "PUT", "/v1/gpus/0/ceiling", {{"mhz", 1275}, {"lease_s", 60}});
  ASSERT_EQ(capped.status, 200) << capped.text;
  EXPECT_EQ(LockedClocks(fake_, 0), "1275-1275");
  EXPECT_EQ(capped.body["applied"], (json{{"min_mhz", 1275}, {"max_mhz", 1275}}));
  EXPECT_EQ(Call(*client, "GET", "/v1/readings").body["gpus"][0]["sm_clock_mhz"], 1275);
  ASSERT_EQ(Call(*client, "DELETE", "/v1/gpus/0/ceiling").status, 200);
  EXPECT_EQ(LockedClocks(fake_, 0), "1410-1410");
}

// The row controller's reading: the server part of the readings, with the GPUs counted, not listed.
TEST_F(AgentProcessTest, TheServerReadingIsTheReadingsServerPart) {
  auto agent = StartAgent();
  auto client = agent->UnixClient();
  AgentReply full = Call(*client, "GET", "/v1/readings");
  AgentReply server = Call(*client, "GET", "/v1/readings/server");
  ASSERT_EQ(full.status, 200) << full.text;
  ASSERT_EQ(server.status, 200) << server.text;
  EXPECT_FALSE(server.body.contains("gpus"));
  EXPECT_EQ(server.body["gpu_count"], full.body["gpus"].size());
  EXPECT_GT(server.body["time_s"].get<double>(), 1.6e9);
  ASSERT_TRUE(server.body["server"].is_object()) << server.text;
  for (const char* field : {"power_w", "gpu_power_w", "non_gpu_power_w", "source", "redfish_age_s"}) {
    EXPECT_TRUE(server.body["server"].contains(field)) << field;
  }
  EXPECT_EQ(server.body["server"]["source"], "model");
  EXPECT_DOUBLE_EQ(
      server.body["server"]["power_w"].get<double>(),
      server.body["server"]["gpu_power_w"].get<double>() + server.body["server"]["non_gpu_power_w"].get<double>());
  EXPECT_LT(server.text.size(), full.text.size());
}

TEST_F(AgentProcessTest, TokensAndScopesOverTcp) {
  const AgentTokenFile tokens = WriteTokenFile(dir_);
  auto agent = StartAgent({"--token-file", tokens.path});
  auto anonymous = agent->TcpClient();
  AgentReply no_token = Call(*anonymous, "GET", "/v1/gpus");
  EXPECT_EQ(no_token.status, 401) << no_token.text;
  EXPECT_EQ(Call(*agent->TcpClient("not-a-token-of-this-agent"), "GET", "/v1/gpus").status, 401);
  EXPECT_EQ(Call(*anonymous, "GET", "/healthz").status, 200);

  auto reader = agent->TcpClient(tokens.read);
  EXPECT_EQ(Call(*reader, "GET", "/v1/gpus").status, 200);
  AgentReply read_lease = Call(*reader, "POST", "/v1/leases", {{"gpus", {0}}});
  EXPECT_EQ(read_lease.status, 403) << read_lease.text;
  EXPECT_EQ(Call(*reader, "PUT", "/v1/ceilings", {{"mhz", 1005}, {"lease_s", 5}}).status, 403);

  auto trainer = agent->TcpClient(tokens.train);
  EXPECT_EQ(Call(*trainer, "PUT", "/v1/gpus/0/ceiling", {{"mhz", 1005}, {"lease_s", 5}}).status, 403)
      << "a train token cannot set ceilings";
  AgentReply long_lease = Call(*trainer, "POST", "/v1/leases", {{"gpus", {0}}, {"ttl_s", 600}});
  EXPECT_EQ(long_lease.status, 422) << "over TCP a lease lives on its connection: " << long_lease.text;
  ASSERT_EQ(Call(*trainer, "POST", "/v1/leases", {{"gpus", {0}}, {"ttl_s", 30}}).status, 201);
  ASSERT_EQ(Call(*trainer, "PUT", "/v1/gpus/0/sm-clocks", kLockTo1200).status, 200);
  EXPECT_EQ(LockedClocks(fake_, 0), "1200-1200");
  EXPECT_EQ(Call(*agent->TcpClient(tokens.train), "PUT", "/v1/gpus/0/sm-clocks", kLockTo1200).status, 403)
      << "the same token on another connection is another holder";
  trainer.reset();  // the connection closes: the lease ends with it
  ASSERT_TRUE(WaitUntil([&] { return LockedClocks(fake_, 0) == "0-0"; }));

  auto row = agent->TcpClient(tokens.row);
  EXPECT_EQ(Call(*row, "PUT", "/v1/ceilings", {{"mhz", 1005}, {"lease_s", 5}}).status, 200);
  EXPECT_EQ(Call(*row, "POST", "/v1/leases", {{"gpus", {1}}}).status, 403) << "a row token cannot lease";
  EXPECT_EQ(Call(*row, "GET", "/metrics").status, 200);
}

TEST_F(AgentProcessTest, WithoutATokenFileTcpServesLoopbackReadsOnly) {
  auto agent = StartAgent();
  auto client = agent->TcpClient();
  EXPECT_EQ(Call(*client, "GET", "/v1/readings").status, 200);
  EXPECT_EQ(Call(*client, "POST", "/v1/leases", {{"gpus", {0}}}).status, 403);
  EXPECT_EQ(Call(*client, "PUT", "/v1/ceilings", {{"mhz", 1005}, {"lease_s", 5}}).status, 403);
}

// Runs curl on the agent's socket as uid/gid 65534 (nobody); curl's exit status.
int CurlAsNobody(const std::string& socket, const std::string& path) {
  const std::string command =
      "setpriv --reuid 65534 --regid 65534 --clear-groups /usr/bin/curl -sS -o /dev/null "
      "--unix-socket " +
      socket + " http://agent" + path;
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST_F(AgentProcessTest, TheSocketsModeDecidesWhoConnects) {
  if (getuid() != 0) GTEST_SKIP() << "needs root to run a client as another user";
  // Other users may reach the socket's folder; the socket's own mode decides the rest.
  for (const std::filesystem::path& p : {std::filesystem::path(dir_).parent_path(), std::filesystem::path(dir_)}) {
    ::chmod(p.c_str(), 0755);
  }
  {
    auto agent = StartAgent({"--socket-mode", "0600"});
    struct stat st {};
    ASSERT_EQ(stat(agent->socket().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    EXPECT_EQ(CurlAsNobody(agent->socket(), "/v1/gpus"), 7) << "curl: could not connect (permission denied)";
  }
  auto agent = StartAgent({"--socket-mode", "0666"});
  EXPECT_EQ(CurlAsNobody(agent->socket(), "/v1/gpus"), 0);
  auto client = agent->UnixClient();
  ASSERT_EQ(CurlAsNobody(agent->socket(), "/v1/state"), 0);
  std::vector<std::string> as_nobody = {"/usr/bin/setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"};
  std::vector<std::string> curl = CurlHolder(agent->socket(), {"POST /v1/leases {\"gpus\":[0]}"});
  as_nobody.insert(as_nobody.end(), curl.begin(), curl.end());
  ChildProcess nobody = StartChild(as_nobody, "time_s");
  ASSERT_GT(nobody.pid, 0) << nobody.output;
  json lease = Call(*client, "GET", "/v1/state").body["gpus"][0]["lease"];
  EXPECT_EQ(lease["holder"]["uid"], 65534) << lease;
  AgentReply ceiling = Call(*client, "PUT", "/v1/gpus/0/ceiling", {{"mhz", 1005}, {"lease_s", 5}});
  EXPECT_EQ(ceiling.status, 200) << "root on the socket has the row scope";
  StopChild(nobody.pid, SIGKILL);
}

TEST_F(AgentProcessTest, BadInputGetsAClear4xxAndNvmlErrorsTheirName) {
  auto agent = StartAgent();
  auto client = agent->UnixClient();
  AgentReply no_gpu = Call(*client, "POST", "/v1/leases", {{"gpus", {7}}});
  EXPECT_EQ(no_gpu.status, 404) << no_gpu.text;
  EXPECT_EQ(no_gpu.body["error"], "GPU 7 does not exist (2 GPUs)");
  ASSERT_EQ(Call(*client, "POST", "/v1/leases", {{"gpus", {0, 1}}}).status, 201);
  AgentReply unknown = Call(*client, "PUT", "/v1/gpus/9/sm-clocks", kLockTo1200);
  EXPECT_EQ(unknown.status, 404) << unknown.text;
  AgentReply unsupported = Call(*client, "PUT", "/v1/gpus/0/sm-clocks", {{"min_mhz", 1201}});
  EXPECT_EQ(unsupported.status, 422) << unsupported.text;
  EXPECT_NE(unsupported.text.find("1201 MHz"), std::string::npos);
  auto raw = client->Request("PUT", "/v1/gpus/0/sm-clocks", "{\"min_mhz\": 12");
  ASSERT_TRUE(raw.ok());
  EXPECT_EQ(raw->status, 400) << raw->body;
  AgentReply misspelt = Call(*client, "PUT", "/v1/gpus/0/sm-clocks", {{"min_mhz", 1200}, {"max_Mhz", 1200}});
  EXPECT_EQ(misspelt.status, 422) << misspelt.text;
  EXPECT_EQ(Call(*client, "PUT", "/v1/gpus/zero/sm-clocks", kLockTo1200).status, 404);
  fake_.Set("gpu1.fail.nvmlDeviceSetGpuLockedClocks", "4");
  AgentReply nvml = Call(*client, "PUT", "/v1/gpus/1/sm-clocks", kLockTo1200);
  EXPECT_EQ(nvml.status, 500) << nvml.text;
  EXPECT_EQ(nvml.body["code"], "device_error");
  EXPECT_NE(nvml.text.find("NVML_ERROR_NO_PERMISSION"), std::string::npos) << nvml.text;
  EXPECT_EQ(Call(*client, "PUT", "/v1/gpus/0/sm-clocks", kLockTo1200).status, 200) << "GPU 0 is unaffected";
  EXPECT_EQ(LockedClocks(fake_, 0), "1200-1200");
}

// The agent's open descriptors (/proc/PID/fd) and its CPU seconds so far (/proc/PID/stat).
int OpenDescriptors(pid_t pid) {
  std::error_code error;
  int n = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", error);
       !error && it != std::filesystem::directory_iterator(); it.increment(error)) {
    ++n;
  }
  return n;
}

double CpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream fields(text.substr(text.rfind(')') + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && (fields >> field); ++i) {
    if (i == 14 || i == 15) ticks += std::stod(field);  // utime, stime
  }
  return ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// A forked child asks the agent for a lease it cannot have (GPU 7 of 2: 404) over the Unix socket
// and exits: the agent knows it by its socket's peer credentials. Raw system calls only (the
// parent has threads). The child's exit code: 0 when the answer was a 404.
pid_t AskForALeaseOnNoGpuAndExit(const std::string& socket_path) {
  const pid_t child = ::fork();
  if (child != 0) return child;
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un at{};
  at.sun_family = AF_UNIX;
  std::memcpy(at.sun_path, socket_path.c_str(), std::min(socket_path.size(), sizeof(at.sun_path) - 1));
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&at), sizeof(at)) != 0) ::_exit(2);
  static const char kRequest[] =
      "POST /v1/leases HTTP/1.1\r\nHost: agent\r\nContent-Type: application/json\r\nContent-Length: 12\r\n"
      "Connection: close\r\n\r\n{\"gpus\":[7]}";
  if (::write(fd, kRequest, sizeof(kRequest) - 1) != static_cast<ssize_t>(sizeof(kRequest) - 1)) ::_exit(3);
  char answer[64] = {};
  const ssize_t n = ::read(fd, answer, sizeof(answer) - 1);
  ::_exit(n > 12 && std::strncmp(answer + 9, "404", 3) == 0 ? 0 : 4);
}

// The agent watches a process for its exit only while it holds a lease: 2,000 refused leases
// from processes that then exit leave its descriptors where they were and its reaper idle (it
// used to keep each one's pidfd: one descriptor per client, and a reaper spinning on the readable
// ones, until the descriptor limit refused live clients). 2,000 is past the default limit of
// 1,024 descriptors; 10,000 cost 40 s of the suite for no case the smaller count misses.
TEST_F(AgentProcessTest, RefusedLeasesFromExitingProcessesLeaveNoDescriptorsAndNoSpinningBehind) {
  auto agent = StartAgent();
  ASSERT_EQ(Call(*agent->UnixClient(), "GET", "/healthz").status, 200);
  const int descriptors_before = OpenDescriptors(agent->pid());
  const double cpu_before_s = CpuSeconds(agent->pid());
  constexpr int kClients = 2000;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(5);  // the loop's bound, not a limit
  int asked = 0, refused_404 = 0;
  const auto started = std::chrono::steady_clock::now();
  for (; asked < kClients && std::chrono::steady_clock::now() < give_up; ++asked) {
    const pid_t child = AskForALeaseOnNoGpuAndExit(agent->socket());
    ASSERT_GT(child, 0);
    int status = 0;
    ::waitpid(child, &status, 0);
    refused_404 += WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 1 : 0;
  }
  const double soak_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_EQ(asked, kClients) << "the loop's bound of 5 minutes came first";
  EXPECT_EQ(refused_404, asked);
  // The last connections close on the agent's side after their answer: wait for them (bounded).
  EXPECT_TRUE(WaitUntil([&] { return OpenDescriptors(agent->pid()) <= descriptors_before; }))
      << OpenDescriptors(agent->pid()) << " descriptors, " << descriptors_before << " before";
  const double cpu_after_soak_s = CpuSeconds(agent->pid());
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const double idle_cpu_s = CpuSeconds(agent->pid()) - cpu_after_soak_s;
  std::cout << asked << " refused leases in " << soak_s << " s took the agent " << cpu_after_soak_s - cpu_before_s
            << " CPU s; descriptors " << descriptors_before << " -> " << OpenDescriptors(agent->pid())
            << "; CPU in the 2 idle seconds after: " << idle_cpu_s << " s\n";
  EXPECT_LT(idle_cpu_s, 0.5) << "the reaper spins";
  // A live process still gets its lease.
  auto client = agent->UnixClient();
  EXPECT_EQ(Call(*client, "POST", "/v1/leases", {{"gpus", {0}}}).status, 201);
}

// Sends `request` on a fresh connection to the Unix socket; what comes back until the agent
// closes it (at most 50 waits of 100 ms for a byte).
std::string RawUnixExchange(const std::string& socket_path, const std::string& request) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un at{};
  at.sun_family = AF_UNIX;
  std::strncpy(at.sun_path, socket_path.c_str(), sizeof(at.sun_path) - 1);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&at), sizeof(at)) != 0) return "";
  ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string out;
  char buffer[4096];
  for (int idle = 0; idle < 50;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) {
      ++idle;
      continue;
    }
    const ssize_t got = ::recv(fd, buffer, sizeof(buffer), 0);
    if (got <= 0) break;
    out.append(buffer, static_cast<size_t>(got));
  }
  ::close(fd);
  return out;
}

// How long `call` took, in milliseconds.
template <typename Call>
double MillisecondsOf(Call&& call) {
  const auto started = std::chrono::steady_clock::now();
  call();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
}

// 256 idle connections and 256 partial requests on each listener (a local user needs no token to
// open them) cost the agent descriptors, not threads: a training rank's setter, its lease renewal
// and a row controller's reading are answered meanwhile, on both listeners. (With a thread per
// connection, 32 idle connections stopped a listener for a minute.)
TEST_F(AgentProcessTest, IdleAndPartialConnectionsDoNotStopTheSettersRenewalsAndReadings) {
  rlimit files{};
  ::getrlimit(RLIMIT_NOFILE, &files);
  files.rlim_cur = std::max<rlim_t>(files.rlim_cur, std::min<rlim_t>(files.rlim_max, 8192));
  ::setrlimit(RLIMIT_NOFILE, &files);  // the agent inherits it
  const AgentTokenFile tokens = WriteTokenFile(dir_);
  auto agent = StartAgent({"--token-file", tokens.path});
  constexpr int kIdle = 256, kPartial = 256;
  auto held_unix = http::testing::HeldConnections::OnUnixSocket(agent->socket(), kIdle, kPartial);
  auto held_tcp = http::testing::HeldConnections::OnTcp(agent->tcp_port(), kIdle, kPartial);
  ASSERT_EQ(held_unix.opened(), size_t{kIdle + kPartial});
  ASSERT_EQ(held_tcp.opened(), size_t{kIdle + kPartial});

  auto rank = agent->UnixClient();
  AgentReply lease;
  const double lease_ms = MillisecondsOf([&] { lease = Call(*rank, "POST", "/v1/leases", {{"gpus", {0}}}); });
  ASSERT_EQ(lease.status, 201) << lease.text;
  const std::string id = std::to_string(lease.body["id"].get<uint64_t>());
  AgentReply set, renewed, reading, tcp_lease, tcp_set;
  const double set_ms = MillisecondsOf([&] { set = Call(*rank, "PUT", "/v1/gpus/0/sm-clocks", kLockTo1200); });
  const double renew_ms = MillisecondsOf([&] { renewed = Call(*rank, "POST", "/v1/leases/" + id + "/renew"); });
  auto row = agent->TcpClient(tokens.row);
  const double reading_ms = MillisecondsOf([&] { reading = Call(*row, "GET", "/v1/readings/server"); });
  auto trainer = agent->TcpClient(tokens.train);
  const double tcp_set_ms = MillisecondsOf([&] {
    tcp_lease = Call(*trainer, "POST", "/v1/leases", {{"gpus", {1}}, {"ttl_s", 30}});
    tcp_set = Call(*trainer, "PUT", "/v1/gpus/1/sm-clocks", kLockTo1200);
  });
  EXPECT_EQ(set.status, 200) << set.text;
  EXPECT_EQ(renewed.status, 200) << renewed.text;
  EXPECT_EQ(reading.status, 200) << reading.text;
  EXPECT_EQ(tcp_lease.status, 201) << tcp_lease.text;
  EXPECT_EQ(tcp_set.status, 200) << tcp_set.text;
  EXPECT_EQ(LockedClocks(fake_, 0), "1200-1200");
  EXPECT_EQ(LockedClocks(fake_, 1), "1200-1200");
  std::cout << "with " << kIdle << " idle and " << kPartial << " partial connections on each listener: lease "
            << lease_ms << " ms, setter " << set_ms << " ms, renewal " << renew_ms << " ms (Unix socket); row reading "
            << reading_ms << " ms, lease and setter " << tcp_set_ms
            << " ms (TCP); still open: " << held_unix.still_open() << " + " << held_tcp.still_open() << "\n";
  EXPECT_EQ(held_unix.still_open() + held_tcp.still_open(), size_t{2 * (kIdle + kPartial)})
      << "the held connections were not cut to make room (their timeouts are 30 s and 60 s)";
}

// A connection to the Unix socket that asked for a readings stream, and what came back of it.
int OpenStream(const std::string& socket_path, std::string& first) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un at{};
  at.sun_family = AF_UNIX;
  std::strncpy(at.sun_path, socket_path.c_str(), sizeof(at.sun_path) - 1);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&at), sizeof(at)) != 0) return -1;
  const std::string request = "GET /v1/readings/stream?interval_s=1 HTTP/1.1\r\nHost: a\r\n\r\n";
  ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  // The answer's head, and its body when it has a length (a refusal); a stream's head may come
  // in one segment and its first line in another. At most 100 waits of 100 ms.
  char buffer[4096];
  for (int waits = 0; waits < 100; ++waits) {
    const size_t head_end = first.find("\r\n\r\n");
    if (head_end != std::string::npos) {
      const size_t length_at = first.find("Content-Length: ");
      if (length_at == std::string::npos || length_at > head_end) break;  // a stream: its head is enough
      if (first.size() >= head_end + 4 + std::stoul(first.substr(length_at + 16))) break;
    }
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    const ssize_t got = ::recv(fd, buffer, sizeof(buffer), 0);
    if (got <= 0) break;
    first.append(buffer, static_cast<size_t>(got));
  }
  return fd;
}

// Streams hold no worker (the listener's stream thread writes them): past kMaxReadingStreams (256,
// a bound on their memory) the next is a 503, and the other requests are answered meanwhile.
TEST_F(AgentProcessTest, ReadingsStreamsAreBoundedAndHoldNoWorker) {
  auto agent = StartAgent();
  std::vector<int> streams;
  for (int i = 0; i < agent::kMaxReadingStreams; ++i) {
    std::string first;
    streams.push_back(OpenStream(agent->socket(), first));
    ASSERT_EQ(first.rfind("HTTP/1.1 200", 0), 0u) << i << ": " << first;
  }
  std::string refused;
  const int one_more = OpenStream(agent->socket(), refused);
  EXPECT_EQ(refused.rfind("HTTP/1.1 503", 0), 0u) << refused;
  EXPECT_NE(refused.find(std::to_string(agent::kMaxReadingStreams) + " readings streams are open on this listener"),
            std::string::npos)
      << refused;
  EXPECT_EQ(Call(*agent->UnixClient(), "GET", "/v1/gpus").status, 200) << "the other routes have their workers";
  ::close(one_more);
  ::close(streams.back());
  streams.pop_back();
  // The reactor sees the closed stream's client go and its slot is given back.
  std::string again;
  EXPECT_TRUE(WaitUntil(
      [&] {
        again.clear();
        const int fd = OpenStream(agent->socket(), again);
        const bool ok = again.rfind("HTTP/1.1 200", 0) == 0;
        if (ok) {
          streams.push_back(fd);
        } else {
          ::close(fd);
        }
        return ok;
      },
      10))
      << again;
  for (int fd : streams) ::close(fd);
}

// SIGKILL mid-stream: the stream's reader sees its connection end (it does not hang), and the
// restarted agent streams again.
TEST_F(AgentProcessTest, AStreamsReaderSeesAKilledAgentGoAndTheRestartedOneStreamsAgain) {
  auto agent = StartAgent();
  std::string first;
  const int fd = OpenStream(agent->socket(), first);
  ASSERT_EQ(first.rfind("HTTP/1.1 200", 0), 0u) << first;
  agent->Kill();
  bool ended = false;
  char buffer[4096];
  for (int waits = 0; waits < 100 && !ended; ++waits) {  // at most 100 waits of 100 ms
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    ended = ::recv(fd, buffer, sizeof buffer, 0) <= 0;
  }
  EXPECT_TRUE(ended) << "the reader of a killed agent's stream sees it end";
  ::close(fd);
  agent.reset();
  agent = StartAgent();
  std::string again;
  const int fd_again = OpenStream(agent->socket(), again);
  EXPECT_EQ(again.rfind("HTTP/1.1 200", 0), 0u) << again;
  ::close(fd_again);
}

// A request that may carry a body but says no length has an empty body (RFC 9112 6.3), answered
// at once with a JSON error, not after a 5 s read timeout with an empty 400; two different
// Content-Length headers and a NUL in a header are refused before any handler.
TEST_F(AgentProcessTest, RequestsWithoutALengthOrFramedWronglyAreAnsweredAtOnceWithAJsonError) {
  auto agent = StartAgent();
  auto client = agent->UnixClient();
  auto renew = client->Request("POST", "/v1/leases/2/renew");  // libcurl sends no Content-Length for an empty POST
  ASSERT_TRUE(renew.ok()) << renew.error().message;
  EXPECT_EQ(renew->status, 404) << renew->body;  // no lease 2: the route ran, with an empty body
  EXPECT_TRUE(nlohmann::json::parse(renew->body, nullptr, false).contains("error")) << renew->body;

  const std::string no_length =
      RawUnixExchange(agent->socket(), "POST /v1/leases/2/renew HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(no_length.rfind("HTTP/1.1 404", 0), 0u) << no_length;
  EXPECT_NE(no_length.find("{\"code\""), std::string::npos) << no_length;
  const std::string two_lengths = RawUnixExchange(
      agent->socket(), "POST /v1/leases HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 12\r\n\r\n{\"gpus\":[0]}");
  EXPECT_EQ(two_lengths.rfind("HTTP/1.1 400", 0), 0u) << two_lengths;
  EXPECT_NE(two_lengths.find("two different Content-Length headers"), std::string::npos) << two_lengths;
  const std::string nul =
      RawUnixExchange(agent->socket(), std::string("GET /v1/gpus HTTP/1.1\r\nAuthorization: Bearer x\0\r\n\r\n", 51));
  EXPECT_EQ(nul.rfind("HTTP/1.1 400", 0), 0u) << nul;
  EXPECT_NE(nul.find("control byte"), std::string::npos) << nul;
  // The errors httplib makes on its own have a JSON body too.
  const std::string unknown = RawUnixExchange(agent->socket(), "GET /nope HTTP/1.1\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(unknown.rfind("HTTP/1.1 404", 0), 0u) << unknown;
  EXPECT_NE(unknown.find("{\"error\":\"no such endpoint: GET /nope\"}"), std::string::npos) << unknown;
  const std::string garbage = RawUnixExchange(agent->socket(), "NOT A REQUEST LINE\r\n\r\n");
  EXPECT_EQ(garbage.rfind("HTTP/1.1 400", 0), 0u) << garbage;
  EXPECT_NE(garbage.find("{\"error\":\"bad request"), std::string::npos) << garbage;
  EXPECT_NE(garbage.find("Connection: close"), std::string::npos) << "not kept for the keep-alive timeout: " << garbage;
}

TEST_F(AgentProcessTest, ASecondAgentOnTheSameSocketIsRefused) {
  auto agent = StartAgent();
  AgentProcess second(dir_);
  EXPECT_FALSE(second.running());
  EXPECT_NE(second.startup_output().find("another process listens on"), std::string::npos) << second.startup_output();
  EXPECT_EQ(Call(*agent->UnixClient(), "GET", "/healthz").status, 200) << "the first one still serves";
}

TEST_F(AgentProcessTest, StoppingEndsEveryLeaseAndLeavesNoSocketBehind) {
  auto agent = StartAgent();
  {
    auto client = agent->UnixClient();
    ASSERT_EQ(Call(*client, "POST", "/v1/leases", {{"gpus", {0}}}).status, 201);
    ASSERT_EQ(Call(*client, "PUT", "/v1/gpus/0/sm-clocks", kLockTo1200).status, 200);
  }
  EXPECT_EQ(agent->Stop(), 0);
  EXPECT_EQ(LockedClocks(fake_, 0), "0-0");
  EXPECT_FALSE(std::filesystem::exists(agent->socket()));
}

}  // namespace
}  // namespace wattcut::testing
