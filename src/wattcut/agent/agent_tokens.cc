#include "wattcut/agent/agent_tokens.h"

#include <algorithm>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "wattcut/base/printable_text.h"
#include "wattcut/http/bearer_token.h"
#include "wattcut/http/token_file.h"

namespace wattcut::agent {

namespace {

// A secret file is a few lines; anything this large is the wrong file.
constexpr size_t kMaxSecretFileBytes = 1 << 20;

std::string ModeText(mode_t mode) {
  char buffer[16];
  std::snprintf(buffer, sizeof(buffer), "%04o", static_cast<unsigned>(mode & 07777));
  return buffer;
}

}  // namespace

std::string_view AgentScopeName(AgentScope scope) {
  switch (scope) {
    case AgentScope::kRead:
      return "read";
    case AgentScope::kTrain:
      return "train";
    case AgentScope::kRow:
      return "row";
  }
  return "read";
}

std::optional<AgentScope> AgentScopeFromName(std::string_view name) {
  for (AgentScope scope : {AgentScope::kRead, AgentScope::kTrain, AgentScope::kRow}) {
    if (name == AgentScopeName(scope)) return scope;
  }
  return std::nullopt;
}

bool ScopeAllows(AgentScope held, AgentScope needed) { return held == needed || needed == AgentScope::kRead; }

Result<std::string> ReadSecretFile(const std::string& path, std::string_view what_name) {
  const std::string shown = PrintableText(path, 256);
  const std::string what(what_name);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error::IOError("cannot open " + what + " " + shown + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int saved = errno;
    ::close(fd);
    return Error::IOError("cannot stat " + what + " " + shown + ": " + std::strerror(saved));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Error{what + " " + shown + " is not a regular file"};
  }
  if ((st.st_mode & 077) != 0) {
    ::close(fd);
    return Error{what + " " + shown + " is accessible by group or others (mode " + ModeText(st.st_mode) +
                 "); its secrets would be readable by other users: chmod 600 " + shown};
  }
  std::string text;
  char buffer[4096];
  while (text.size() <= kMaxSecretFileBytes) {
    ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int saved = errno;
      ::close(fd);
      return Error::IOError("cannot read " + what + " " + shown + ": " + std::strerror(saved));
    }
    if (n == 0) break;
    text.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  if (text.size() > kMaxSecretFileBytes) {
    return Error{what + " " + shown + " has more than " + std::to_string(kMaxSecretFileBytes) + " bytes"};
  }
  return text;
}

Result<AgentTokens> AgentTokens::ReadFile(const std::string& path) {
  auto text = ReadSecretFile(path, "token file");
  if (!text) return text.error();
  return Parse(*text, path);
}

Result<AgentTokens> AgentTokens::Parse(std::string_view text, const std::string& path_for_messages) {
  http::TokenLines lines(text, path_for_messages, http::TokenLineForm::kScopeToken);
  AgentTokens tokens;
  for (;;) {
    auto next = lines.Next();
    if (!next.ok()) return next.error();
    if (!next->has_value()) break;
    const http::TokenLine& line = **next;
    const std::string at = lines.where() + ":" + std::to_string(line.line) + ": ";

    const bool one_field = line.scope.empty();
    const std::string_view first = one_field ? line.token : line.scope;
    auto scope = AgentScopeFromName(first);
    if (!scope) {
      // No error ever holds secret text: the field is shown only when it reads as a mistyped
      // scope word (a few lowercase letters: a token has at least kMinTokenChars characters),
      // never when it may be a token or a part of one (a line without its scope).
      const bool a_word =
          first.size() <= 16 && std::all_of(first.begin(), first.end(), [](char c) { return c >= 'a' && c <= 'z'; });
      const std::string what = a_word      ? "unknown scope '" + std::string(first) + "'"
                               : one_field ? "one field and no scope (not shown: it may be a token)"
                                           : "an unknown scope (not shown: it may be a token)";
      return Error{at + what + "; expected 'SCOPE TOKEN' with SCOPE one of read, train, row"};
    }
    if (one_field) {
      return Error{at + "scope '" + std::string(first) + "' without a token; expected 'SCOPE TOKEN'"};
    }
    const std::string& token = line.token;
    if (token.size() < kMinTokenChars) {
      return Error{at + "the token has " + std::to_string(token.size()) + " characters; expected at least " +
                   std::to_string(kMinTokenChars) + " (for example `openssl rand -hex 32`)"};
    }
    for (const Entry& earlier : tokens.entries_) {
      if (earlier.token == token) {
        return Error{at + "the same token as line " + std::to_string(earlier.line) + "; each token appears once"};
      }
    }
    tokens.entries_.push_back({token, *scope, line.line});
  }
  if (tokens.entries_.empty()) {
    return Error{lines.where() +
                 ": no token; expected one 'SCOPE TOKEN' line per token (SCOPE one of read, train, row)"};
  }
  return tokens;
}

std::optional<AgentTokens::Match> AgentTokens::Find(std::string_view presented) const {
  // Every token is compared, and the match is kept without a branch on the comparison, so the
  // time depends only on the tokens' lengths.
  size_t matched_plus_one = 0;
  for (size_t i = 0; i < entries_.size(); ++i) {
    size_t equal = http::ConstantTimeEquals(presented, entries_[i].token) ? 1 : 0;
    matched_plus_one |= (i + 1) & (0 - equal);
  }
  if (matched_plus_one == 0) return std::nullopt;
  const Entry& entry = entries_[matched_plus_one - 1];
  return Match{entry.scope, entry.line};
}

}  // namespace wattcut::agent
