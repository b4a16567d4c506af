// The bad-input corpus: every *.case below tests/bad_input (see bad_input_case.h) runs
// the real `wattcut` binary, or sends one request to a real `wattcut serve`, under a
// 2 GiB address-space limit and a CPU-time limit. Every case must end with a clear
// message: exit code 1 or 2 (or the case's), never a signal; the message names what the
// case says it must; nothing printed holds a raw control byte. A server must answer
// 4xx, and still answer /healthz after the case.
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "tests/bad_input/bad_input_case.h"
#include "tests/bad_input/bounded_process.h"
#include "wattcut/base/file_text_testing.h"

namespace wattcut::testing {
namespace {

const std::string kCorpus = WATTCUT_BAD_INPUT_CORPUS;

class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "wattcut-bad-input-XXXXXX").string();
    path_ = mkdtemp(pattern.data()) ? pattern : "";
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string Printable(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if ((c < 0x20 && c != '\n') || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

// One `wattcut serve` for every HTTP case, with the same bounds as a CLI case.
class CorpusServer {
 public:
  CorpusServer() {
    log_ = dir_.path() + "/server.log";
    std::filesystem::create_directories(dir_.path() + "/data");
    child_ = std::make_unique<BoundedChild>(
        std::vector<std::string>{WATTCUT_BINARY, "serve", "--listen", "127.0.0.1:0", "--data-dir",
                                 dir_.path() + "/data", "--http-threads", "16"},
        ResourceBounds{}, log_);
    const std::string marker = "listening on http://127.0.0.1:";
    for (int i = 0; i < 3000 && port_ == 0 && child_->Alive(); ++i) {
      const std::string text = ReadFileText(log_);
      const auto at = text.find(marker);
      if (at != std::string::npos && text.find('\n', at) != std::string::npos) {
        port_ = std::atoi(text.c_str() + at + marker.size());
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
  }
  int port() const { return port_; }
  BoundedChild& child() { return *child_; }
  std::string log() const { return ReadFileText(log_); }

 private:
  ScratchDir dir_;
  std::string log_;
  std::unique_ptr<BoundedChild> child_;
  int port_ = 0;
};

// Started by the first HTTP case; stopped (and its folder removed) when the test binary
// exits.
CorpusServer& Server() {
  static CorpusServer server;
  return server;
}

std::unique_ptr<httplib::Client> ClientFor(int port) {
  auto client = std::make_unique<httplib::Client>("127.0.0.1", port);
  client->set_read_timeout(std::chrono::seconds(60));
  return client;
}

// A fresh job for each HTTP case: 2 stages, 2 ranks, no planner settings.
std::string RegisterJob(httplib::Client& client) {
  const char* body =
      R"({"job_id": "", "pp_degree": 2, "dp_degree": 1, "tp_degree": 1, "world_size": 2, "job_metadata": "bad-input"})";
  auto res = client.Post("/register_job", body, "application/json");
  if (!res || res->status != 200) return "";
  std::string id = nlohmann::json::parse(res->body, nullptr, false).get<std::string>();
  std::string path;
  for (char c : id) path += c == '+' ? std::string("%2B") : std::string(1, c);
  return path;
}

void RunCliCase(const BadInputCase& c) {
  ScratchDir tmp;
  std::vector<std::string> argv{WATTCUT_BINARY};
  for (const auto& a : c.args) argv.push_back(Substitute(a, {{"corpus", kCorpus}, {"tmp", tmp.path()}}));
  const BoundedResult r = RunBounded(argv, ResourceBounds{});
  ASSERT_EQ(r.signal, 0) << r.Describe() << "\nstderr:\n" << Printable(r.err);
  if (c.exit_code) {
    EXPECT_EQ(r.exit_code, *c.exit_code) << Printable(r.err);
  } else {
    EXPECT_TRUE(r.exit_code == 1 || r.exit_code == 2) << r.Describe() << "\nstderr:\n" << Printable(r.err);
  }
  EXPECT_FALSE(r.err.empty()) << "no message on stderr";
  for (const auto& m : c.messages)
    EXPECT_NE(r.err.find(m), std::string::npos) << "expected '" << m << "' in:\n" << Printable(r.err);
  EXPECT_EQ(FindControlByte(r.err), std::string::npos) << "raw control byte in stderr:\n" << Printable(r.err);
  EXPECT_EQ(FindControlByte(r.out), std::string::npos) << "raw control byte in stdout:\n" << Printable(r.out);
}

void RunHttpCase(const BadInputCase& c) {
  CorpusServer& server = Server();
  ASSERT_NE(server.port(), 0) << "the server did not start:\n" << server.log();
  auto client = ClientFor(server.port());
  const std::string job = RegisterJob(*client);
  ASSERT_FALSE(job.empty()) << "could not register a job";
  const std::string target = Substitute(c.target, {{"job", job}});
  httplib::Request req;
  req.method = c.method;
  req.path = target;
  req.body = Substitute(c.body, {{"job", job}});
  if (!c.body.empty()) req.set_header("Content-Type", c.content_type);
  auto res = client->send(req);
  ASSERT_TRUE(res) << "no response: " << httplib::to_string(res.error()) << "\nserver log:\n" << server.log();
  if (c.status) {
    EXPECT_EQ(res->status, *c.status) << res->body;
  } else {
    EXPECT_GE(res->status, 400) << res->body;
    EXPECT_LT(res->status, 500) << res->body;
  }
  auto body = nlohmann::json::parse(res->body, nullptr, false);
  ASSERT_TRUE(body.is_object() && body.contains("error")) << "not a JSON error body: " << Printable(res->body);
  const std::string message = body["error"].get<std::string>();
  for (const auto& m : c.messages)
    EXPECT_NE(message.find(m), std::string::npos) << "expected '" << m << "' in: " << message;
  EXPECT_EQ(FindControlByte(message), std::string::npos) << "raw control byte in: " << Printable(message);
  // The server survived the case and still serves.
  ASSERT_TRUE(server.child().Alive()) << "the server died (signal " << server.child().end_signal() << "):\n"
                                      << server.log();
  auto health = client->Get("/healthz");
  ASSERT_TRUE(health) << "no answer from /healthz after the case";
  EXPECT_EQ(health->status, 200);
}

class BadInputCorpus : public ::testing::TestWithParam<std::string> {};

TEST_P(BadInputCorpus, EndsWithAClearError) {
  auto parsed = ReadBadInputCase(kCorpus, GetParam());
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  if (parsed->is_http()) {
    RunHttpCase(*parsed);
  } else {
    RunCliCase(*parsed);
  }
}

std::string CaseName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = std::filesystem::relative(info.param, kCorpus).replace_extension("").string();
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Cases, BadInputCorpus, ::testing::ValuesIn(ListBadInputCases(kCorpus)), CaseName);

// The corpus reader itself: a case file with a mistake is reported, not skipped.
TEST(BadInputCaseTest, RejectsUnknownKeysAndCasesWithoutACommand) {
  ScratchDir tmp;
  const std::string path = tmp.path() + "/x.case";
  std::ofstream(path) << "# comment\nargs: frontier\nexpect: 1\n";
  auto r = ReadBadInputCase(tmp.path(), path);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("x.case:3: unknown key 'expect'"), std::string::npos) << r.error().message;
  std::ofstream(path) << "message: x\n";
  r = ReadBadInputCase(tmp.path(), path);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("either 'args'"), std::string::npos);
}

TEST(BadInputCaseTest, ReadsACliAndAnHttpCase) {
  ScratchDir tmp;
  const std::string cli = tmp.path() + "/a/cli.case", http = tmp.path() + "/http.case";
  std::filesystem::create_directories(tmp.path() + "/a");
  std::ofstream(cli) << "args: frontier --out {tmp}/x\nexit: 2\nmessage: one\nmessage: two\n";
  std::ofstream(tmp.path() + "/b.json") << "{\"x\": 1}";
  std::ofstream(http) << "request: PUT /v1/jobs/{job}/planner\nbody-file: {corpus}/b.json\nstatus: 422\n";
  auto c = ReadBadInputCase(tmp.path(), cli);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->name, "a/cli");
  EXPECT_EQ(c->args, (std::vector<std::string>{"frontier", "--out", "{tmp}/x"}));
  EXPECT_EQ(c->exit_code, 2);
  EXPECT_EQ(c->messages.size(), 2u);
  auto h = ReadBadInputCase(tmp.path(), http);
  ASSERT_TRUE(h.ok()) << h.error().message;
  EXPECT_TRUE(h->is_http());
  EXPECT_EQ(h->method, "PUT");
  EXPECT_EQ(h->body, "{\"x\": 1}");
  EXPECT_EQ(h->status, 422);
  EXPECT_EQ(ListBadInputCases(tmp.path()), (std::vector<std::string>{cli, http}));
}

TEST(BoundedProcessTest, ReportsSignalsAndTheMemoryBound) {
  auto r = RunBounded({"/bin/sh", "-c", "kill -SEGV $$"}, ResourceBounds{});
  EXPECT_EQ(r.signal, SIGSEGV);
  EXPECT_EQ(r.Describe().rfind("signal 11", 0), 0u) << r.Describe();
  r = RunBounded({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"}, ResourceBounds{});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
  // Under a 64 MiB address space, a 256 MiB allocation fails: the bound is real.
  r = RunBounded({"/usr/bin/python3", "-c", "b = bytearray(256 << 20)"}, ResourceBounds{64u << 20, 60});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("MemoryError"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace wattcut::testing
