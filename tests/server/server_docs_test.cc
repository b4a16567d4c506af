// docs/server.md's endpoint section, run: every curl line of its code blocks, with the real
// curl and jq, in order, as one bash script against a real server (the docs' host and port
// substituted, profile.csv the shipped GPT-3 profile). Each call must exit 0 with the status
// the server answers for its route; a doc line that is never run fails the test too.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "tests/server/server_process.h"
#include "wattcut/base/file_text_testing.h"
#include "wattcut/base/shared_data.h"

namespace wattcut::testing {
namespace {

// The status each documented call gets when the docs' sequence is followed.
int ExpectedStatus(const std::string& method, const std::string& path) {
  struct Route {
    const char* method;
    const char* path;
    int status;
  };
  static const Route kRoutes[] = {
      {"PUT", R"(/v1/jobs/[^/]+/profile)", 202},
      {"POST", R"(/v1/jobs/[^/]+/frontier)", 202},
      {"", R"(/(register_job|register_rank/[^/]+|schedule/[^/]+|result/[^/]+))", 200},
      {"", R"(/v1/jobs(/[^/]+(/(planner|rank_profiles|frontier(/points)?|plan|stragglers|power_target|schedule))?)?)",
       200},
      {"GET", R"(/(healthz|metrics|openapi\.yaml)?)", 200},
  };
  for (const Route& r : kRoutes) {
    if ((*r.method == 0 || method == r.method) && std::regex_match(path, std::regex(r.path))) {
      return r.status;
    }
  }
  return -1;  // not a documented route
}

TEST(ServerDocs, EveryCurlLineOfTheEndpointSectionWorks) {
  ASSERT_EQ(std::system("command -v curl >/dev/null && command -v jq >/dev/null"), 0)
      << "this test runs the docs' commands with curl and jq (scripts/install-deps.sh installs "
         "them)";
  ServerProcess server;
  ASSERT_TRUE(server.running()) << server.startup_output();
  ScopedTempDir work("docs");
  std::filesystem::copy_file(SharedDataPath("perseus-sosp24/stage_profile/gpt3-175b+a100_sxm_bf16.csv"),
                             work.path() + "/profile.csv");

  // Every fenced block that runs curl, each curl call tagged with its line in the docs.
  std::istringstream docs(ReadFileText(std::string(WATTCUT_SOURCE_DIR) + "/docs/server.md"));
  const std::regex call(R"((^\s*|\$\(|\buntil\s+|\bdo\s+|;\s*|&&\s*|\|\s*)curl\b)");
  std::string script, block, line;
  std::set<int> doc_lines;
  std::set<int> block_lines;
  bool in_block = false;
  for (int number = 1; std::getline(docs, line); ++number) {
    if (line.rfind("```", 0) == 0) {
      if (in_block && block.find("curl") != std::string::npos) {
        script += block;
        doc_lines.insert(block_lines.begin(), block_lines.end());
      }
      in_block = !in_block;
      block.clear();
      block_lines.clear();
      continue;
    }
    if (!in_block) continue;
    std::string tagged;
    auto begin = std::sregex_iterator(line.begin(), line.end(), call);
    size_t at = 0;
    for (auto it = begin; it != std::sregex_iterator(); ++it) {
      size_t curl_at = static_cast<size_t>(it->position(0) + it->length(0)) - 4;
      tagged += line.substr(at, curl_at - at) + "__doc_line=" + std::to_string(number) + " ";
      at = curl_at;
      block_lines.insert(number);
    }
    tagged += line.substr(at);
    block += tagged + "\n";
  }
  ASSERT_GE(doc_lines.size(), 20u) << "the docs' curl lines were not found";
  script = std::regex_replace(script, std::regex(R"(127\.0\.0\.1:7787)"), "127.0.0.1:" + std::to_string(server.port()));

  const std::string log = work.path() + "/curl.log";
  std::string prelude =
      "set -u\n"
      "__curl_log='" +
      log +
      "'\n"
      "curl() {  # the real curl, logging its exit code, status, method and URL\n"
      "  local out; out=$(mktemp)\n"
      "  command curl --max-time 60 -w '%{stderr}%{http_code} %{method} %{url_effective}' "
      "\"$@\" 2>\"$out\"\n"
      "  local rc=$?\n"
      "  printf '%s %s %s\\n' \"${__doc_line:-0}\" \"$rc\" \"$(tr '\\n' ' ' < \"$out\")\" >> "
      "\"$__curl_log\"\n"
      "  rm -f \"$out\"\n"
      "  return $rc\n"
      "}\n";
  std::ofstream(work.path() + "/docs.sh") << prelude << script << "wait\n";
  std::string command = "cd '" + work.path() + "' && timeout 300 bash docs.sh > docs.out 2>&1";
  int shell = std::system(command.c_str());
  EXPECT_EQ(shell, 0) << ReadFileText(work.path() + "/docs.out") << "\nscript:\n"
                      << ReadFileText(work.path() + "/docs.sh");

  std::istringstream entries(ReadFileText(log));
  std::map<int, int> calls_per_line;
  std::string entry;
  int calls = 0;
  while (std::getline(entries, entry)) {
    ++calls;
    if (std::getenv("WATTCUT_DOCS_TEST_VERBOSE")) std::cerr << entry << "\n";
    std::istringstream fields(entry);
    int doc_line = 0, rc = -1, status = 0;
    std::string method, url;
    fields >> doc_line >> rc >> status >> method >> url;
    ++calls_per_line[doc_line];
    std::string path = url.substr(url.find('/', url.find("//") + 2));
    path = path.substr(0, path.find('?'));
    EXPECT_EQ(rc, 0) << "docs/server.md line " << doc_line << ": " << entry;
    EXPECT_EQ(status, ExpectedStatus(method, path)) << "docs/server.md line " << doc_line << ": " << entry;
  }
  for (int doc_line : doc_lines) {
    EXPECT_GT(calls_per_line[doc_line], 0) << "docs/server.md line " << doc_line << " never ran";
  }
  EXPECT_EQ(calls_per_line.count(0), 0u) << "a curl call not on a documented line";
  // The loops run 16 registrations and 16 schedule fetches.
  EXPECT_GE(calls, static_cast<int>(doc_lines.size()) + 28);
}

}  // namespace
}  // namespace wattcut::testing
