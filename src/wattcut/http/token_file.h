// Token files: the bearer token a service requires or a client presents (`wattcut serve
// --token-file`, `wattcut polca control --token-file`, `wattcut gpu --agent-token-file`), and the
// node agent's tokens with their scopes (agent/agent_tokens.h). Every one has the same lines:
//
//   # a comment: a line whose first field starts with '#'
//   TOKEN
//   SCOPE TOKEN
//
// Fields are separated by spaces or tabs (the '\r' of a CRLF file is a blank too); a line without
// fields is blank. A token is printable ASCII without blanks: an HTTP header carries it.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "wattcut/base/result.h"

namespace wattcut::http {

// A token file is a few lines; one this large is the wrong file.
inline constexpr size_t kMaxTokenFileBytes = 1 << 20;

// What a file's token lines are expected to be, as messages say it.
enum class TokenLineForm {
  kTokenOrScopeToken,  // 'TOKEN' or 'SCOPE TOKEN': a file of one token
  kScopeToken,         // 'SCOPE TOKEN': the agent's tokens (a line of one field is still returned, for
                       // the caller to say whether it lacks its scope or its token)
};

// A line of a token file that holds a token.
struct TokenLine {
  std::string scope;  // empty on a line of one field
  std::string token;
  int line = 0;  // the line's number in the file, from 1
};

// The lines of a token file's text that hold a token, one at a time, past comment and blank lines.
class TokenLines {
 public:
  // `where` names the file in messages ("agent.tokens:3: ..."), made printable.
  TokenLines(std::string_view text, std::string_view where, TokenLineForm form);

  // The next line that holds a token; nullopt after the last line. Refused, naming where:line and
  // what was expected: a line of more than two fields, a token holding a byte outside printable
  // ASCII. Messages never quote a token.
  Result<std::optional<TokenLine>> Next();

  // The file as messages name it.
  const std::string& where() const { return where_; }

 private:
  std::string_view text_;
  size_t pos_ = 0;
  int line_number_ = 0;
  std::string where_;
  TokenLineForm form_;
};

// Where a file of one token holds it.
enum class TokenPlace {
  kFirstLine,           // on its first line, the rest ignored (`wattcut serve --token-file`,
                        // `wattcut polca control --token-file`): a blank first line holds no token
  kFirstLineWithToken,  // on its first line that is neither blank nor a comment (`wattcut gpu
                        // --agent-token-file`: the agent's own token file can be given as it is)
};

// The token of a file of one token: the TOKEN of its line at `place`. Fails on a file that cannot
// be read ("cannot read " + what + " " + path), one larger than kMaxTokenFileBytes, a malformed line
// before or at the token (TokenLines::Next), and a file without a token where `place` says.
Result<std::string> ReadTokenFile(const std::string& path, TokenPlace place = TokenPlace::kFirstLine,
                                  std::string_view what = "token file");

}  // namespace wattcut::http
