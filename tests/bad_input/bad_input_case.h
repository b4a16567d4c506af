// One case of the bad-input corpus (tests/bad_input/**/*.case), read from a small
// "key: value" file:
//
//   # what the case is about (comment lines start with '#')
//   args: frontier --profile {corpus}/profile_csv/nul_byte.csv --out {tmp}/out
//   exit: 1                     (optional; default: 1 or 2)
//   message: nul_byte.csv:2     (optional, repeatable: each must appear in the error)
//
// or, for the planning server:
//
//   request: PUT /v1/jobs/{job}/planner
//   content-type: text/plain    (optional; default application/json)
//   body: {"num_microbatches": -1}     or     body-file: {corpus}/http/bodies/x.json
//   status: 422                 (optional; default any 4xx)
//   message: num_microbatches
//
// Arguments are split on spaces (no quoting); {corpus} is this folder, {tmp} a fresh
// folder per case, {job} a job registered on the server before the case runs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "wattcut/base/result.h"

namespace wattcut::testing {

struct BadInputCase {
  std::string name;  // path below the corpus folder, without ".case"
  std::string path;
  // CLI case: the arguments after the binary.
  std::vector<std::string> args;
  std::optional<int> exit_code;
  // HTTP case.
  std::string method, target, content_type = "application/json", body;
  std::optional<int> status;
  std::vector<std::string> messages;

  bool is_http() const { return !method.empty(); }
};

// Parses one case file; errors name the file and line. Placeholders are left as they
// are, except {corpus} in body-file, which is read.
Result<BadInputCase> ReadBadInputCase(const std::string& corpus_dir, const std::string& path);

// Every *.case below `corpus_dir`, sorted by name.
std::vector<std::string> ListBadInputCases(const std::string& corpus_dir);

// `text` with every "{key}" replaced by its value.
std::string Substitute(std::string text, const std::vector<std::pair<std::string, std::string>>& values);

// Bytes a terminal would act on: C0 controls other than tab and newline, and DEL.
// Returns the offset of the first one, or npos.
size_t FindControlByte(const std::string& text);

}  // namespace wattcut::testing
