// The server against hostile or careless clients and operators (issue 18), each against the
// real binary: a second server on one data folder, request bodies of any Content-Type and
// encoding, trickling clients, junk methods and metrics cardinality, bearer scheme case, a
// listen host that only looks like loopback, planner settings beyond the planner's limits,
// corrupt stored jobs, a store that cannot write, and the frontier crash-loop breaker.
#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <poll.h>
#include <sqlite3.h>
#include <sys/socket.h>
#include <unistd.h>
#include <csignal>

#include <atomic>
#include <fstream>
#include <sstream>
#include <thread>

#include <sys/resource.h>

#include <chrono>

#include "tests/server/server_process.h"
#include "tests/server/test_profiles.h"
#include "wattcut/base/file_text_testing.h"
#include "wattcut/base/shared_data.h"
#include "wattcut/http/held_connections.h"

namespace wattcut::testing {
namespace {

using nlohmann::json;

// ---- helpers -------------------------------------------------------------------------

// A TCP connection to 127.0.0.1:port from the loopback address `from` (127.0.0.2 is a
// different client address than 127.0.0.1 for the server's per-client count).
int Connect(int port, const char* from = "127.0.0.1") {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in local{};
  local.sin_family = AF_INET;
  inet_pton(AF_INET, from, &local.sin_addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof(local)) != 0) {
    ::close(fd);
    return -1;
  }
  sockaddr_in server{};
  server.sin_family = AF_INET;
  server.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &server.sin_addr);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&server), sizeof(server)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool SendText(int fd, const std::string& text) {
  return ::send(fd, text.data(), text.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(text.size());
}

// Reads what the server sends until it closes the connection, at most `max_polls` waits of
// 100 ms without data.
std::string ReadUntilClosed(int fd, int max_polls = 100) {
  std::string out;
  char buffer[4096];
  for (int idle = 0; idle < max_polls;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) {
      ++idle;
      continue;
    }
    ssize_t got = ::recv(fd, buffer, sizeof(buffer), 0);
    if (got <= 0) break;
    out.append(buffer, static_cast<size_t>(got));
  }
  return out;
}

// One raw request on a fresh connection; the whole reply (the server closes it).
std::string RawExchange(int port, const std::string& request) {
  int fd = Connect(port);
  if (fd < 0) return "";
  SendText(fd, request);
  ::shutdown(fd, SHUT_WR);
  std::string reply = ReadUntilClosed(fd);
  ::close(fd);
  return reply;
}

int CountSeries(const std::string& metrics, const std::string& name) {
  std::istringstream in(metrics);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    if (line.rfind(name + "{", 0) == 0) ++n;
  }
  return n;
}

// Direct access to a stopped server's SQLite store, as an operator (or a disk) would.
class StoreFile {
 public:
  explicit StoreFile(const std::string& data_dir) { sqlite3_open((data_dir + "/wattcut.db").c_str(), &db_); }
  ~StoreFile() { sqlite3_close(db_); }
  std::string Text(const std::string& sql_with_one_param, const std::string& param) {
    sqlite3_stmt* stmt = nullptr;
    sqlite3_prepare_v2(db_, sql_with_one_param.c_str(), -1, &stmt, nullptr);
    sqlite3_bind_text(stmt, 1, param.c_str(), -1, SQLITE_TRANSIENT);
    std::string out;
    if (sqlite3_step(stmt) == SQLITE_ROW) {
      out = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    }
    sqlite3_finalize(stmt);
    return out;
  }
  bool Exec(const std::string& sql_with_two_params, const std::string& a, const std::string& b) {
    sqlite3_stmt* stmt = nullptr;
    sqlite3_prepare_v2(db_, sql_with_two_params.c_str(), -1, &stmt, nullptr);
    sqlite3_bind_text(stmt, 1, a.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(stmt, 2, b.c_str(), -1, SQLITE_TRANSIENT);
    bool ok = sqlite3_step(stmt) == SQLITE_DONE && sqlite3_changes(db_) == 1;
    sqlite3_finalize(stmt);
    return ok;
  }

 private:
  sqlite3* db_ = nullptr;
};

json JobJson(int pp, int dp, int microbatches) {
  json planner = {{"p2p_power_w", TestPlannerOptions(microbatches).p2p_power_w}};
  if (microbatches > 0) planner["num_microbatches"] = microbatches;
  return {{"pp_degree", pp}, {"dp_degree", dp}, {"tp_degree", 1}, {"world_size", pp * dp}, {"planner", planner}};
}

// Undoes EncodeJobIdForPath ("%2B" -> "+").
std::string JobIdOfPath(const std::string& path) {
  std::string id;
  for (size_t i = 0; i < path.size(); ++i) {
    if (path.compare(i, 3, "%2B") == 0) {
      id += '+';
      i += 2;
    } else {
      id += path[i];
    }
  }
  return id;
}

// Registers a pp x dp job with all of its ranks; returns its path-encoded id.
std::string RegisterJob(httplib::Client& c, int pp, int dp, int microbatches) {
  auto job = Post(c, "/register_job", JobJson(pp, dp, microbatches));
  EXPECT_EQ(job.status, 200) << job.text;
  std::string path = EncodeJobIdForPath(job.body.get<std::string>());
  for (int r = 0; r < pp * dp; ++r) {
    json info = {{"rank", r},
                 {"dp_rank", r / pp},
                 {"pp_rank", r % pp},
                 {"tp_rank", 0},
                 {"available_frequencies", TestFrequencies(210)}};  // all of an A100's
    EXPECT_EQ(Post(c, "/register_rank/" + path, info).status, 200);
  }
  return path;
}

// ---- one server per data folder ------------------------------------------------------

TEST(ServerHardening, SecondServerOnOneDataDirIsRefusedWithTheHoldersPid) {
  ScopedTempDir dir("lock");
  auto first = std::make_unique<ServerProcess>(std::vector<std::string>{}, dir.path());
  ASSERT_TRUE(first->running()) << first->startup_output();
  auto c = first->Client();
  std::string job = RegisterJob(*c, 2, 1, 4);

  ServerProcess second({}, dir.path());
  EXPECT_FALSE(second.running());
  EXPECT_NE(second.startup_output().find("in use by another wattcut serve (pid " + std::to_string(first->pid()) + ","),
            std::string::npos)
      << second.startup_output();
  // The first one still serves.
  EXPECT_EQ(Get(*c, "/v1/jobs/" + job).status, 200);

  // SIGKILL leaves the lock file behind, but not the lock: a new server starts.
  first->Kill();
  ServerProcess third({}, dir.path());
  ASSERT_TRUE(third.running()) << third.startup_output();
  EXPECT_EQ(Get(*third.Client(), "/v1/jobs/" + job).status, 200);
}

// ---- request bodies ------------------------------------------------------------------

TEST(ServerHardening, BodiesAreReadWhateverTheirContentTypeUpToTheLimit) {
  ServerProcess server({"--max-body-bytes", "65536"});
  ASSERT_TRUE(server.running()) << server.startup_output();
  auto c = server.Client();
  // The shipped 33 KB profile, sent as `curl --data-binary` sends it (form-urlencoded).
  std::string csv = ReadFileText(SharedDataPath("perseus-sosp24/stage_profile/gpt3-175b+a100_sxm_bf16.csv"));
  ASSERT_GT(csv.size(), 30000u);
  std::string job = RegisterJob(*c, 8, 1, 4);
  std::string body = json{{"csv", csv}}.dump();
  for (const char* type : {"application/x-www-form-urlencoded", "text/plain"}) {
    auto reply = c->Put("/v1/jobs/" + job + "/profile", body, type);
    ASSERT_TRUE(reply) << type;
    EXPECT_EQ(reply->status, 202) << type << ": " << reply->body;
  }

  // Chunked: accepted within the limit, a 413 beyond it (not read to the end).
  auto chunked = [&](const std::string& path, std::string text) {
    auto shared = std::make_shared<std::string>(std::move(text));
    return c->Post(
        path,
        [shared](size_t offset, httplib::DataSink& sink) {
          if (offset < shared->size()) {
            sink.write(shared->data() + offset, std::min<size_t>(8192, shared->size() - offset));
          } else {
            sink.done();
          }
          return true;
        },
        "application/json");
  };
  auto small = chunked("/register_job", JobJson(1, 1, 2).dump());
  ASSERT_TRUE(small);
  EXPECT_EQ(small->status, 200) << small->body;
  // The server answers without reading the rest, drains what comes for 200 ms and closes: a client
  // still sending after that (a loaded machine) fails its write instead of reading the answer.
  // cpp-httplib's client sends without MSG_NOSIGNAL, so that write would be a SIGPIPE that ends
  // the test process: it is ignored here, as a client program ignores it.
  ::signal(SIGPIPE, SIG_IGN);
  auto large = chunked("/register_job", std::string(1 << 20, ' '));
  if (large) {
    EXPECT_EQ(large->status, 413) << large->body;
  } else {
    EXPECT_EQ(large.error(), httplib::Error::Write) << "refused while the client still sent";
  }
  auto unknown = chunked("/no/such/route", std::string(1 << 20, ' '));
  if (unknown) {
    EXPECT_EQ(unknown->status, 404) << unknown->body;
  } else {
    EXPECT_EQ(unknown.error(), httplib::Error::Write) << "refused while the client still sent";
  }

  // A gzip body that inflates beyond the limit is cut at the limit.
  auto zipped = server.Client();
  zipped->set_compress(true);
  auto bomb = zipped->Post("/register_job", std::string(4 << 20, ' '), "application/json");
  ASSERT_TRUE(bomb);
  EXPECT_EQ(bomb->status, 413) << bomb->body;

  // A declared length beyond the limit is refused before any of it is read.
  std::string refused =
      RawExchange(server.port(), "POST /register_job HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000000\r\n\r\n");
  EXPECT_EQ(refused.rfind("HTTP/1.1 413", 0), 0u) << refused;

  // Multipart is refused (415), and the server is unharmed by all of the above.
  httplib::MultipartFormDataItems items = {{"csv", csv, "p.csv", "text/csv"}};
  auto multipart = c->Put("/v1/jobs/" + job + "/profile", items);
  ASSERT_TRUE(multipart);
  EXPECT_EQ(multipart->status, 415) << multipart->body;
  EXPECT_EQ(Get(*server.Client(), "/healthz").status, 200);
  // A POST without any body is an empty body (RFC 7230 3.3.3), not a wait for one.
  std::string empty = RawExchange(server.port(), "POST /v1/jobs/" + job +
                                                     "/frontier HTTP/1.1\r\nHost: x\r\n"
                                                     "Connection: close\r\n\r\n");
  EXPECT_EQ(empty.rfind("HTTP/1.1 202", 0), 0u) << empty;
}

// ---- slow clients --------------------------------------------------------------------

// `count` clients that each send a request line and then one header line every 100 ms, at
// most `max_lines` of them; records per client whether the server closed the connection
// before that, and the status line it sent (if any).
struct Tricklers {
  struct Client {
    int fd = -1;
    int lines_sent = 0;
    bool cut = false;
    std::string reply;
  };
  std::vector<Client> clients;
  std::atomic<bool> all_sending{false};

  void Run(int port, int count, const char* from, int max_lines) {
    clients.resize(static_cast<size_t>(count));
    for (Client& t : clients) {
      t.fd = Connect(port, from);
      if (t.fd >= 0) SendText(t.fd, "GET /healthz HTTP/1.1\r\nHost: x\r\n");
    }
    for (int line = 0; line < max_lines; ++line) {
      bool any_open = false;
      for (Client& t : clients) {
        if (t.fd < 0 || t.cut) continue;
        pollfd p{t.fd, POLLIN, 0};
        char buffer[4096];
        if (::poll(&p, 1, 0) > 0) {
          ssize_t got = ::recv(t.fd, buffer, sizeof(buffer), 0);
          if (got > 0) t.reply.append(buffer, static_cast<size_t>(got));
          t.cut = true;  // the server answered or closed before the request was whole
          continue;
        }
        if (!SendText(t.fd, "X-Trickle: " + std::to_string(line) + "\r\n")) {
          t.cut = true;
          continue;
        }
        ++t.lines_sent;
        any_open = true;
      }
      all_sending = true;
      if (!any_open) break;
      usleep(100000);
    }
    for (Client& t : clients) {
      if (t.fd >= 0) ::close(t.fd);
    }
  }
};

// Tricklers holding every HTTP thread are cut at the whole-request deadline, and the
// request that waited behind them is answered.
TEST(ServerHardening, TricklersHoldingEveryThreadAreCutAtTheRequestDeadline) {
  ServerProcess server({"--http-threads", "6", "--request-timeout", "1"});
  ASSERT_TRUE(server.running()) << server.startup_output();
  constexpr int kTricklers = 8, kMaxLines = 150;  // 15 s of trickling at most
  Tricklers tricklers;
  std::thread trickle([&] { tricklers.Run(server.port(), kTricklers, "127.0.0.1", kMaxLines); });
  for (int i = 0; i < 1000 && !tricklers.all_sending; ++i) usleep(10000);
  auto c = server.Client();
  auto health = Get(*c, "/healthz");
  trickle.join();
  EXPECT_EQ(health.status, 200) << health.text;
  for (const auto& t : tricklers.clients) {
    EXPECT_TRUE(t.cut) << "a trickler sent " << t.lines_sent << " header lines unhindered";
    EXPECT_LT(t.lines_sent, kMaxLines);
    if (!t.reply.empty()) {
      EXPECT_EQ(t.reply.rfind("HTTP/1.1 408", 0), 0u) << t.reply;
    }
  }
  auto metrics = Get(*c, "/metrics").text;
  EXPECT_NE(metrics.find("wattcut_http_connections_cut_total{reason=\"request_timeout\"} " +
                         std::to_string(kTricklers) + "\n"),
            std::string::npos)
      << metrics;
}

// One client address may hold only so many connections: the rest are refused at once, so
// the pool keeps threads for everyone else.
TEST(ServerHardening, ConnectionsBeyondTheClientLimitAreRefusedAtOnce) {
  ServerProcess server({"--http-threads", "6", "--request-timeout", "2", "--max-connections-per-client", "4",
                        "--limit-loopback-clients"});
  ASSERT_TRUE(server.running()) << server.startup_output();
  constexpr int kTricklers = 8, kMaxLines = 150;
  Tricklers tricklers;
  // The tricklers come from 127.0.0.2; the health check below from 127.0.0.1.
  std::thread trickle([&] { tricklers.Run(server.port(), kTricklers, "127.0.0.2", kMaxLines); });
  for (int i = 0; i < 1000 && !tricklers.all_sending; ++i) usleep(10000);
  auto health = Get(*server.Client(), "/healthz");
  trickle.join();
  EXPECT_EQ(health.status, 200) << health.text;
  int refused = 0, timed_out = 0;
  for (const auto& t : tricklers.clients) {
    EXPECT_TRUE(t.cut) << "a trickler sent " << t.lines_sent << " header lines unhindered";
    if (t.reply.rfind("HTTP/1.1 503", 0) == 0) {
      ++refused;
      EXPECT_NE(t.reply.find("too many connections from 127.0.0.2 (limit 4"), std::string::npos) << t.reply;
    } else {
      ++timed_out;
    }
  }
  EXPECT_EQ(refused, kTricklers - 4);
  EXPECT_EQ(timed_out, 4);
}

// 256 idle connections and 256 partial requests (no token needed to open them) cost the server
// descriptors, not threads: with 40 workers, a training rank's registration and deployment poll
// and a row controller's read of its power target are answered meanwhile. (With a thread per
// connection, 40 such connections stopped the server until their timeouts.)
TEST(ServerHardening, IdleAndPartialConnectionsDoNotStopARanksCallsOrARowControllersReads) {
  rlimit files{};
  ::getrlimit(RLIMIT_NOFILE, &files);
  files.rlim_cur = std::max<rlim_t>(files.rlim_cur, std::min<rlim_t>(files.rlim_max, 8192));
  ::setrlimit(RLIMIT_NOFILE, &files);  // the server inherits it
  ServerProcess server({"--http-threads", "40", "--max-long-polls", "8"});
  ASSERT_TRUE(server.running()) << server.startup_output();
  constexpr int kIdle = 256, kPartial = 256;
  auto held = http::testing::HeldConnections::OnTcp(server.port(), kIdle, kPartial);
  ASSERT_EQ(held.opened(), size_t{kIdle + kPartial});
  auto c = server.Client();
  auto timed = [](auto&& call) {
    const auto started = std::chrono::steady_clock::now();
    auto reply = call();
    return std::make_pair(
        reply, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count());
  };
  auto [job, job_ms] = timed([&] {
    return Post(*c, "/register_job", {{"pp_degree", 1}, {"dp_degree", 1}, {"tp_degree", 1}, {"world_size", 1}});
  });
  ASSERT_EQ(job.status, 200) << job.text;
  const std::string id = job.body.get<std::string>();
  auto [rank, rank_ms] = timed([&] {
    return Post(*c, "/register_rank/" + id,
                {{"rank", 0}, {"dp_rank", 0}, {"pp_rank", 0}, {"tp_rank", 0}, {"available_frequencies", {1410, 1005}}});
  });
  auto [poll, poll_ms] = timed([&] { return Get(*c, "/v1/jobs/" + id + "/deployment?rank=0&step=1&version=0"); });
  auto [target, target_ms] = timed([&] { return Get(*c, "/v1/jobs/" + id + "/power_target"); });
  EXPECT_EQ(rank.status, 200) << rank.text;
  EXPECT_EQ(poll.status, 200) << poll.text;
  EXPECT_EQ(target.status, 200) << target.text;
  std::cout << "with " << kIdle << " idle and " << kPartial << " partial connections: register_job " << job_ms
            << " ms, register_rank " << rank_ms << " ms, deployment poll " << poll_ms << " ms, power target read "
            << target_ms << " ms; still open: " << held.still_open() << "\n";
  // (The server closes an idle connection after its 5 s keep-alive: not asserted here.)
}

// ---- metrics cardinality -------------------------------------------------------------

TEST(ServerHardening, NoRequestAddsMetricSeriesBeyondAFixedSet) {
  ScopedTempDir dir("cardinality");
  std::string token_file = dir.path() + "/token";
  std::ofstream(token_file) << "tok\n";
  for (bool with_token : {false, true}) {
    ServerProcess server(with_token ? std::vector<std::string>{"--token-file", token_file}
                                    : std::vector<std::string>{});
    ASSERT_TRUE(server.running()) << server.startup_output();
    auto c = server.Client();
    if (with_token) c->set_bearer_token_auth("tok");
    ASSERT_EQ(Get(*c, "/healthz").status, 200);
    int before = CountSeries(Get(*c, "/metrics").text, "wattcut_http_requests_total");
    // Junk methods, junk paths, methods no route serves, with and without bodies.
    for (int i = 0; i < 200; ++i) {
      RawExchange(server.port(), "JUNK" + std::to_string(i) + " /x HTTP/1.1\r\nHost: x\r\n\r\n");
    }
    for (int i = 0; i < 100; ++i) {
      const char* methods[] = {"GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE"};
      RawExchange(server.port(), std::string(methods[i % 7]) + " /junk/" + std::to_string(i) +
                                     " HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}");
    }
    std::string metrics = Get(*c, "/metrics").text;
    int after = CountSeries(metrics, "wattcut_http_requests_total");
    EXPECT_EQ(metrics.find("JUNK"), std::string::npos);
    // At most one series per (endpoint label, method label, status) the server can produce:
    // here unmatched/unauthorized x 8 method labels x a few statuses.
    EXPECT_LE(after - before, 24) << metrics;
  }
}

// ---- authentication and listening ----------------------------------------------------

TEST(ServerHardening, BearerSchemeIsCaseInsensitive) {
  ScopedTempDir dir("scheme");
  std::string token_file = dir.path() + "/token";
  std::ofstream(token_file) << "s3cret\n";
  ServerProcess server({"--token-file", token_file});
  ASSERT_TRUE(server.running()) << server.startup_output();
  auto c = server.Client();
  for (const char* header : {"Bearer s3cret", "bearer s3cret", "BEARER s3cret", "Bearer  s3cret"}) {
    auto reply = c->Get("/v1/jobs", {{"Authorization", header}});
    ASSERT_TRUE(reply);
    EXPECT_EQ(reply->status, 200) << header;
  }
  for (const char* header : {"bearer S3CRET", "Basic s3cret", "bearers3cret"}) {
    auto reply = c->Get("/v1/jobs", {{"Authorization", header}});
    ASSERT_TRUE(reply);
    EXPECT_EQ(reply->status, 401) << header;
  }
}

// Only numeric loopback addresses and "localhost" count as loopback. "127.1" binds
// 127.0.0.1 without any name lookup, yet is not a dotted-quad loopback address, so the
// server treats it as a name: beyond loopback, frequency changes refused without a token.
TEST(ServerHardening, ListenHostThatOnlyLooksLikeLoopbackIsNotTrusted) {
  LaunchOptions launch;
  launch.listen = "127.1:0";
  ServerProcess named({}, "", launch);
  ASSERT_TRUE(named.running()) << named.startup_output();
  EXPECT_NE(named.startup_output().find("beyond loopback"), std::string::npos) << named.startup_output();
  auto reply = Put(*named.Client(), "/v1/jobs/any/planner", {{"num_microbatches", 4}});
  EXPECT_EQ(reply.status, 403) << reply.text;

  ServerProcess numeric;
  ASSERT_TRUE(numeric.running());
  EXPECT_EQ(numeric.startup_output().find("beyond loopback"), std::string::npos);
  EXPECT_EQ(Put(*numeric.Client(), "/v1/jobs/any/planner", {{"num_microbatches", 4}}).status, 404);
}

// ---- planner limits ------------------------------------------------------------------

// Issue 54: PUT .../planner with docs/server.md's own body set the job's p2p_power_w, given at
// registration, back to 0. A field left out keeps the job's value; a field given is checked.
TEST(ServerHardening, PuttingSomePlannerSettingsKeepsTheOthers) {
  ServerProcess server;
  ASSERT_TRUE(server.running()) << server.startup_output();
  auto c = server.Client();
  json body = JobJson(2, 1, 4);
  body["planner"]["p2p_power_w"] = 83.64;
  auto job = Post(*c, "/register_job", body);
  ASSERT_EQ(job.status, 200) << job.text;
  const std::string path = EncodeJobIdForPath(job.body.get<std::string>());
  auto put = Put(*c, "/v1/jobs/" + path + "/planner", {{"num_microbatches", 8}, {"unit_time_s", 0.002}});
  ASSERT_EQ(put.status, 200) << put.text;
  EXPECT_DOUBLE_EQ(put.body["planner"].value("p2p_power_w", -1.0), 83.64) << put.text;
  EXPECT_EQ(put.body["planner"].value("num_microbatches", 0), 8);
  const json stored = Get(*c, "/v1/jobs/" + path).body;
  EXPECT_DOUBLE_EQ(stored["planner"].value("p2p_power_w", -1.0), 83.64) << stored.dump();
  EXPECT_DOUBLE_EQ(stored["planner"].value("unit_time_s", -1.0), 0.002);
  // Set explicitly, it changes; a bad field is refused and nothing changes.
  EXPECT_EQ(Put(*c, "/v1/jobs/" + path + "/planner", {{"p2p_power_w", 0}}).status, 200);
  EXPECT_EQ(Put(*c, "/v1/jobs/" + path + "/planner", {{"noise_factor", 7}, {"num_microbatches", 2}}).status, 422);
  const json after = Get(*c, "/v1/jobs/" + path).body;
  EXPECT_DOUBLE_EQ(after["planner"].value("p2p_power_w", -1.0), 0);
  EXPECT_EQ(after["planner"].value("num_microbatches", 0), 8);
}

TEST(ServerHardening, PlannerSettingsBeyondThePlannersLimitsAreRefusedBeforeAnyWork) {
  ServerProcess server;
  ASSERT_TRUE(server.running()) << server.startup_output();
  auto c = server.Client();
  std::string job = RegisterJob(*c, 2, 1, 4);
  // 30,000 microbatches crashed the planner (issue 18): now a 422 at PUT time.
  auto planner = Put(*c, "/v1/jobs/" + job + "/planner", {{"num_microbatches", 30000}});
  EXPECT_EQ(planner.status, 422) << planner.text;
  EXPECT_NE(planner.text.find("num_microbatches"), std::string::npos) << planner.text;
  auto upload =
      Put(*c, "/v1/jobs/" + job + "/profile", {{"csv", TestProfileCsv(2)}, {"planner", {{"num_microbatches", 30000}}}});
  EXPECT_EQ(upload.status, 422) << upload.text;
  auto stages = Post(*c, "/register_job", JobJson(5000, 1, 4));
  EXPECT_EQ(stages.status, 422) << stages.text;
  EXPECT_NE(stages.text.find("pp_degree"), std::string::npos) << stages.text;
  // Each within its bound, but 2 x 1024 x 16384 computations are beyond the planner's.
  auto product = Post(*c, "/register_job", JobJson(1024, 1, 16384));
  EXPECT_EQ(product.status, 422) << product.text;
  EXPECT_NE(product.text.find("computations"), std::string::npos) << product.text;
  // Nothing was started, the job keeps its settings, the server is fine.
  EXPECT_EQ(Get(*c, "/v1/jobs/" + job + "/frontier").body.value("state", ""), "none");
  EXPECT_EQ(Get(*c, "/v1/jobs/" + job).body["planner"]["num_microbatches"], 4);
  EXPECT_EQ(Get(*c, "/healthz").status, 200);
}

// ---- stored state ----------------------------------------------------------------------

TEST(ServerHardening, CorruptStoredJobIsQuarantinedAndTheOthersStart) {
  ScopedTempDir dir("quarantine");
  std::string bad_id, good_path;
  {
    ServerProcess server({}, dir.path());
    ASSERT_TRUE(server.running()) << server.startup_output();
    auto c = server.Client();
    auto bad = Post(*c, "/register_job", JobJson(2, 1, 4));
    bad_id = bad.body.get<std::string>();
    good_path = RegisterJob(*c, 2, 1, 4);
    ASSERT_EQ(Put(*c, "/v1/jobs/" + good_path + "/profile", {{"csv", TestProfileCsv(2)}}).status, 202);
    ASSERT_EQ(server.Stop(), 0);
  }
  const std::string corrupt = "{\"round\": 3, \"selection\": {\"poi";  // cut short on disk
  {
    StoreFile store(dir.path());
    ASSERT_TRUE(store.Exec("UPDATE jobs SET state_json=? WHERE job_id=?", corrupt, bad_id));
  }
  ServerProcess server({}, dir.path());
  ASSERT_TRUE(server.running()) << server.startup_output();
  EXPECT_NE(server.startup_output().find("job " + bad_id + " quarantined"), std::string::npos)
      << server.startup_output();
  auto c = server.Client();
  auto list = Get(*c, "/v1/jobs");
  ASSERT_EQ(list.status, 200);
  ASSERT_EQ(list.body["jobs"].size(), 1u) << list.text;
  ASSERT_EQ(list.body["quarantined"].size(), 1u) << list.text;
  EXPECT_EQ(list.body["quarantined"][0]["job_id"], bad_id);
  EXPECT_NE(list.body["quarantined"][0]["error"].get<std::string>().find("JSON"), std::string::npos);
  auto health = Get(*c, "/healthz");
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(health.body["quarantined_jobs"], 1);
  std::string bad_path = EncodeJobIdForPath(bad_id);
  auto get_bad = Get(*c, "/v1/jobs/" + bad_path);
  EXPECT_EQ(get_bad.status, 409);
  EXPECT_NE(get_bad.text.find("quarantined"), std::string::npos);
  // The good job plans and serves.
  ASSERT_EQ(WaitForFrontier(*c, good_path).value("state", ""), "ready");
  EXPECT_EQ(Get(*c, "/v1/jobs/" + good_path + "/schedule?rank=0").body.value("mode", ""), "plan");
  ASSERT_EQ(server.Stop(), 0);
  {
    // Nothing the user stored was changed.
    StoreFile store(dir.path());
    EXPECT_EQ(store.Text("SELECT state_json FROM jobs WHERE job_id=?", bad_id), corrupt);
  }
  // Deleting it through the API removes its rows.
  ServerProcess again({}, dir.path());
  ASSERT_TRUE(again.running());
  auto c2 = again.Client();
  EXPECT_EQ(Delete(*c2, "/v1/jobs/" + bad_path).status, 200);
  EXPECT_EQ(Get(*c2, "/v1/jobs").body["quarantined"].size(), 0u);
  EXPECT_EQ(Get(*c2, "/v1/jobs/" + bad_path).status, 404);
}

// A store that cannot write makes /healthz answer 503. The disk is "full" through the
// server's RLIMIT_FSIZE, which binds root too: once the WAL cannot grow, no write commits.
TEST(ServerHardening, HealthzAnswers503WhileTheStoreCannotWrite) {
  LaunchOptions launch;
  launch.file_size_limit_bytes = 1 << 20;
  ServerProcess server({}, "", launch);
  ASSERT_TRUE(server.running()) << server.startup_output();
  auto c = server.Client();
  ASSERT_EQ(Get(*c, "/healthz").status, 200);
  // Jobs with a 65 KB profile each, until a write is refused (about 16 fill 1 MiB).
  std::string csv = TestProfileCsv(8, 210);
  std::string job;
  int refused_at = -1;
  for (int i = 0; i < 100 && refused_at < 0; ++i) {
    auto registered = Post(*c, "/register_job", JobJson(8, 1, 4));
    ASSERT_NE(registered.status, 0) << "the server died at job " << i;
    if (registered.status != 200) {
      EXPECT_EQ(registered.status, 503) << registered.text;
      refused_at = i;
      break;
    }
    job = EncodeJobIdForPath(registered.body.get<std::string>());
    auto upload = Put(*c, "/v1/jobs/" + job + "/profile", {{"csv", csv}});
    ASSERT_NE(upload.status, 0) << "the server died at upload " << i;
    if (upload.status != 202) {
      EXPECT_EQ(upload.status, 503) << upload.text;
      EXPECT_NE(upload.text.find("could not persist"), std::string::npos) << upload.text;
      refused_at = i;
    }
  }
  ASSERT_GE(refused_at, 0) << "the store never filled up";
  HttpReply health;
  for (int i = 0; i < 100; ++i) {  // the answer is cached for a second
    health = Get(*c, "/healthz");
    if (health.status != 200) break;
    usleep(50000);
  }
  EXPECT_EQ(health.status, 503) << health.text;
  EXPECT_NE(health.text.find("store cannot write"), std::string::npos) << health.text;
  // Reads still work.
  EXPECT_EQ(Get(*c, "/v1/jobs/" + job).status, 200);
}

// The crash-loop breaker: a job whose frontier computation was interrupted twice in a row
// (as the server's stored state records it) is not computed at start-up; the other jobs
// are, and serve.
TEST(ServerHardening, FrontierInterruptedTwiceIsNotComputedAgainAtStartup) {
  ScopedTempDir dir("crashloop");
  std::string blocked, retried;
  {
    ServerProcess server({}, dir.path());
    ASSERT_TRUE(server.running()) << server.startup_output();
    auto c = server.Client();
    blocked = RegisterJob(*c, 2, 1, 4);
    retried = RegisterJob(*c, 2, 1, 4);
    for (const std::string& job : {blocked, retried}) {
      ASSERT_EQ(Put(*c, "/v1/jobs/" + job + "/profile", {{"csv", TestProfileCsv(2)}}).status, 202);
      ASSERT_EQ(WaitForFrontier(*c, job).value("state", ""), "ready");
      EXPECT_EQ(Get(*c, "/v1/jobs/" + job).body["state"]["frontier_attempts"], 0);
    }
    ASSERT_EQ(server.Stop(), 0);
  }
  {
    // What two starts without an end leave in the store (the server writes the count when
    // a computation starts and clears it when it ends).
    StoreFile store(dir.path());
    for (auto [path, attempts] : {std::pair{blocked, 2}, std::pair{retried, 1}}) {
      std::string job_id = JobIdOfPath(path);
      json state = json::parse(store.Text("SELECT state_json FROM jobs WHERE job_id=?", job_id));
      state["frontier_attempts"] = attempts;
      ASSERT_TRUE(store.Exec("UPDATE jobs SET state_json=? WHERE job_id=?", state.dump(), job_id));
    }
  }
  ServerProcess server({}, dir.path());
  ASSERT_TRUE(server.running()) << server.startup_output();
  auto c = server.Client();
  json status = WaitForFrontier(*c, retried);
  EXPECT_EQ(status.value("state", ""), "ready") << status.dump();
  EXPECT_EQ(Get(*c, "/v1/jobs/" + retried).body["state"]["frontier_attempts"], 0);
  json stopped = Get(*c, "/v1/jobs/" + blocked + "/frontier").body;
  EXPECT_EQ(stopped.value("state", ""), "failed") << stopped.dump();
  EXPECT_NE(stopped.value("error", "").find("interrupted 2 times in a row"), std::string::npos) << stopped.dump();
  EXPECT_NE(stopped.value("error", "").find("/frontier"), std::string::npos) << stopped.dump();
  // Its ranks still train, at their highest clocks; only one frontier was computed.
  EXPECT_EQ(Get(*c, "/v1/jobs/" + blocked + "/schedule?rank=0").body.value("mode", ""), "all_max");
  EXPECT_NE(Get(*c, "/metrics").text.find("wattcut_frontier_computations_total{outcome=\"ok\"} 1\n"),
            std::string::npos);
  // The documented retry computes it, and clears the count.
  EXPECT_EQ(Post(*c, "/v1/jobs/" + blocked + "/frontier", json::object()).status, 202);
  EXPECT_EQ(WaitForFrontier(*c, blocked).value("state", ""), "ready");
  EXPECT_EQ(Get(*c, "/v1/jobs/" + blocked).body["state"]["frontier_attempts"], 0);
}

// ---- memory ----------------------------------------------------------------------------

// A profile of `stages` x 2 instructions x `freqs` measurements (times falling and energies
// rising with the frequency, as measured profiles do).
std::string LargeProfileCsv(int stages, int freqs) {
  std::string csv = "stage,instruction,frequency,time,energy\n";
  char line[128];
  for (int s = 0; s < stages; ++s) {
    for (const char* kind : {"forward", "backward"}) {
      for (int f = 1; f <= freqs; ++f) {
        double jitter = 1 + 0.01 * ((f * 7919 + s * 104729) % 1000) / 1000.0;
        std::snprintf(line, sizeof(line), "%d,%s,%d,%.9f,%.9f\n", s, kind, f, 0.01 * (1 + 2000.0 / f) * jitter,
                      5.0 * (0.5 + f / double(freqs)) * jitter);
        csv += line;
      }
    }
  }
  return csv;
}

// Large uploads leave no memory behind once handled: issue 18 measured 0.89 -> 2.42 GB after
// six uploads of a 14 MB profile (about 300 MB kept per upload in the handling thread's
// malloc arena). The job keeps its parsed profile (~6 MB here), nothing else.
TEST(ServerHardening, LargeUploadsLeaveNoMemoryBehind) {
  ServerProcess server({"--sync", "normal"});
  ASSERT_TRUE(server.running()) << server.startup_output();
  auto c = server.Client();
  // No ranks registered: any frequency of the profile is accepted.
  auto registered = Post(*c, "/register_job", JobJson(4, 1, 4));
  ASSERT_EQ(registered.status, 200);
  std::string job = EncodeJobIdForPath(registered.body.get<std::string>());
  // 200,000 rows, 8 MB: half the profile, to keep the test quick.
  const std::string body = json{{"csv", LargeProfileCsv(4, 25000)}}.dump();
  ASSERT_GT(body.size(), size_t{7} << 20);
  auto upload = [&] {
    // A new connection each time, as curl makes: each lands on some thread of the pool.
    auto reply = server.Client()->Put("/v1/jobs/" + job + "/profile", body, "application/json");
    ASSERT_TRUE(reply);
    ASSERT_EQ(reply->status, 202) << reply->body;
    ASSERT_EQ(WaitForFrontier(*c, job).value("state", ""), "ready");
  };
  const uint64_t before = ResidentBytes(server.pid());
  ASSERT_GT(before, 0u);
  constexpr int kUploads = 6;
  for (int i = 0; i < kUploads; ++i) upload();
  const uint64_t after_all = ResidentBytes(server.pid());
  // Measured (2-core VM, 8 MB profile): 19 MB before, 54 MB after the first upload, 80 MB
  // after six; before the fix 184 MB and 949 MB (each thread's arena kept its peak). The
  // bound is well above the first and far below the second.
  EXPECT_LT(after_all, before + (uint64_t{200} << 20)) << "resident memory before " << (before >> 20) << " MB, after "
                                                       << kUploads << " uploads: " << (after_all >> 20) << " MB";
}

// The same, end to end: the server is SIGKILLed twice while it computes a large frontier
// (about 20 s on the 2-core VM: 16 stages, 128 microbatches, 0.1 ms units); the third start
// does not compute it again, and the other job is planned and served.
TEST(ServerHardening, FrontierKilledTwiceWhileComputingIsNotComputedAThirdTime) {
  ScopedTempDir dir("crashloop_kill");
  const json slow_planner = {
      {"num_microbatches", 128}, {"unit_time_s", 0.0001}, {"p2p_power_w", TestPlannerOptions(128).p2p_power_w}};
  auto server = std::make_unique<ServerProcess>(std::vector<std::string>{}, dir.path());
  ASSERT_TRUE(server->running()) << server->startup_output();
  auto c = server->Client();
  std::string small = RegisterJob(*c, 2, 1, 4);
  ASSERT_EQ(Put(*c, "/v1/jobs/" + small + "/profile", {{"csv", TestProfileCsv(2)}}).status, 202);
  ASSERT_EQ(WaitForFrontier(*c, small).value("state", ""), "ready");
  auto registered = Post(*c, "/register_job", JobJson(16, 1, 128));
  ASSERT_EQ(registered.status, 200);
  std::string large = EncodeJobIdForPath(registered.body.get<std::string>());
  ASSERT_EQ(
      Put(*c, "/v1/jobs/" + large + "/profile", {{"csv", TestProfileCsv(16, 855)}, {"planner", slow_planner}}).status,
      202);
  for (int kill = 1; kill <= 2; ++kill) {
    // The start of the computation is in the store before the work: wait for it, then kill.
    int attempts = 0;
    for (int i = 0; i < 3000 && attempts < kill; ++i) {
      attempts = Get(*c, "/v1/jobs/" + large).body["state"].value("frontier_attempts", 0);
      if (attempts < kill) usleep(10000);
    }
    ASSERT_EQ(attempts, kill);
    ASSERT_EQ(Get(*c, "/v1/jobs/" + large + "/frontier").body.value("state", ""), "computing")
        << "the computation ended before the kill: make it larger";
    server->Kill();
    server = std::make_unique<ServerProcess>(std::vector<std::string>{}, dir.path());
    ASSERT_TRUE(server->running()) << server->startup_output();
    c = server->Client();
  }
  json stopped = Get(*c, "/v1/jobs/" + large + "/frontier").body;
  EXPECT_EQ(stopped.value("state", ""), "failed") << stopped.dump();
  EXPECT_NE(stopped.value("error", "").find("interrupted 2 times in a row"), std::string::npos) << stopped.dump();
  EXPECT_EQ(Get(*c, "/v1/jobs/" + large).body["state"].value("frontier_attempts", 0), 2);
  EXPECT_EQ(WaitForFrontier(*c, small).value("state", ""), "ready");
  EXPECT_EQ(Get(*c, "/v1/jobs/" + small + "/schedule?rank=1").body.value("mode", ""), "plan");
}

// ---- messages --------------------------------------------------------------------------

TEST(ServerHardening, ErrorMessagesCarryNoControlBytesFromRequests) {
  ServerProcess server;
  ASSERT_TRUE(server.running()) << server.startup_output();
  auto c = server.Client();
  std::string job = RegisterJob(*c, 2, 1, 4);
  std::vector<HttpReply> replies = {
      Get(*c, "/v1/jobs/%1B%5B2Jjob%00"),
      Get(*c, "/v1/jobs/" + job + "/schedule?rank=%1B%5B31m"),
      Put(*c, "/v1/jobs/" + job + "/planner", {{"schedule", "\x1b[2J\x07"}}),
      Post(*c, "/v1/jobs/" + job + "/rank_profiles",
           {{"rank", 0}, {"dp_rank", 0}, {"pp_rank", 0}, {"tp_rank", 0}, {"forward_time", {{"\x1b]0;x\x07", 1.0}}}}),
      Get(*c, "/no/such/\x1b[2J"),
  };
  for (const HttpReply& reply : replies) {
    ASSERT_GE(reply.status, 400) << reply.text;
    ASSERT_TRUE(reply.body.contains("error")) << reply.text;
    std::string message = reply.body["error"].get<std::string>();
    for (char ch : message) {
      EXPECT_FALSE(static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) << "control byte in: " << json(message).dump();
    }
  }
}

}  // namespace
}  // namespace wattcut::testing
