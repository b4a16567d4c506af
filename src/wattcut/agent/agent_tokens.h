// The node agent's bearer tokens (`wattcut agent --token-file FILE`) and the scopes they grant.
//
// The file holds one `SCOPE TOKEN` line per token; `#` starts a comment line, blank lines are
// allowed (the lines of every token file: http/token_file.h):
//
//   # the row controller of row 12
//   row   3f9c0d51a7e2b8c46f1d9e03a5b7c2e8
//   read  9d2e6b1f0c8a4e7d3b5f9a1c6e2d8b40
//
// Scopes: `read` (discovery, readings, state, metrics), `train` (leases, clock locks, power
// limits) and `row` (ceilings). `train` and `row` include `read`; neither includes the other.
// A token has at least 16 characters, printable ASCII without blanks (an HTTP header carries it).
// A file that group or others can access is refused, as ssh refuses such a private key.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wattcut/base/result.h"

namespace wattcut::agent {

enum class AgentScope { kRead, kTrain, kRow };

// "read", "train", "row".
std::string_view AgentScopeName(AgentScope scope);
// The scope of a name above; nullopt for any other text.
std::optional<AgentScope> AgentScopeFromName(std::string_view name);

// Whether a caller holding `held` may do what needs `needed`: the same scope, or `read` under
// `train` or `row`.
bool ScopeAllows(AgentScope held, AgentScope needed);

inline constexpr size_t kMinTokenChars = 16;

// The text of a file that holds secrets (`what`: "token file", "Redfish auth file"): refused when it
// cannot be opened, is not a regular file, is larger than 1 MiB, or is accessible by group or others
// ("chmod 600 FILE", as ssh refuses such a private key). A symbolic link is followed (Kubernetes
// mounts secrets so): the mode checked is the target's.
Result<std::string> ReadSecretFile(const std::string& path, std::string_view what);

class AgentTokens {
 public:
  struct Match {
    AgentScope scope = AgentScope::kRead;
    int line = 0;  // the token's line in the file, for logs ("token of line 3")
  };

  // Reads FILE (ReadSecretFile) and parses it.
  static Result<AgentTokens> ReadFile(const std::string& path);

  // Parses the text of a token file; messages name `path_for_messages`:line and what was
  // expected. Refused: an unknown scope, a line without a token, a line with more than two
  // fields, a token shorter than kMinTokenChars or holding a byte outside printable ASCII,
  // the same token twice, and a file without any token. Messages never quote a token.
  static Result<AgentTokens> Parse(std::string_view text, const std::string& path_for_messages);

  // The token equal to `presented`: compared in constant time against every token of the file
  // (no early exit on a match, so the time does not tell which line matched, or whether one did).
  std::optional<Match> Find(std::string_view presented) const;

  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    std::string token;
    AgentScope scope = AgentScope::kRead;
    int line = 0;
  };
  std::vector<Entry> entries_;
};

}  // namespace wattcut::agent
