#include "wattcut/http/token_file.h"

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "wattcut/base/printable_text.h"

namespace wattcut::http {

namespace {

constexpr size_t kWhereMaxChars = 256;

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// The line's blank-separated fields.
std::vector<std::string_view> Fields(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && IsBlank(line[i])) ++i;
    size_t begin = i;
    while (i < line.size() && !IsBlank(line[i])) ++i;
    if (i > begin) fields.push_back(line.substr(begin, i - begin));
  }
  return fields;
}

std::string_view Expected(TokenLineForm form) {
  return form == TokenLineForm::kScopeToken ? "'SCOPE TOKEN' (2 fields)" : "'TOKEN' or 'SCOPE TOKEN'";
}

}  // namespace

TokenLines::TokenLines(std::string_view text, std::string_view where, TokenLineForm form)
    : text_(text), where_(PrintableText(where, kWhereMaxChars)), form_(form) {}

Result<std::optional<TokenLine>> TokenLines::Next() {
  while (pos_ < text_.size()) {
    size_t end = text_.find('\n', pos_);
    if (end == std::string_view::npos) end = text_.size();
    std::string_view line = text_.substr(pos_, end - pos_);
    pos_ = end + 1;
    ++line_number_;
    const std::vector<std::string_view> fields = Fields(line);
    if (fields.empty() || fields.front().front() == '#') continue;

    const std::string at = where_ + ":" + std::to_string(line_number_) + ": ";
    if (fields.size() > 2) {
      const bool trailing_comment =
          std::any_of(fields.begin() + 1, fields.end(), [](std::string_view field) { return field.front() == '#'; });
      return Error{at + "expected " + std::string(Expected(form_)) + ", got " + std::to_string(fields.size()) +
                   " words" + (trailing_comment ? "; a comment takes a whole line starting with '#'" : "")};
    }
    const std::string_view token = fields.back();
    for (unsigned char c : token) {
      if (c < 0x21 || c > 0x7e) {
        return Error{at + "the token holds a byte outside printable ASCII; expected printable ASCII without blanks"};
      }
    }
    TokenLine found;
    if (fields.size() == 2) found.scope = std::string(fields.front());
    found.token = std::string(token);
    found.line = line_number_;
    return std::optional<TokenLine>(std::move(found));
  }
  return std::optional<TokenLine>();
}

Result<std::string> ReadTokenFile(const std::string& path, TokenPlace place, std::string_view what) {
  const std::string shown = PrintableText(path, kWhereMaxChars);
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error::NotFound("cannot read " + std::string(what) + " " + shown);
  // Up to one byte past the limit, a block at a time: a token file is a few lines, and every
  // client reads one, so no limit-sized buffer is allocated and zeroed for it.
  std::string text;
  char block[4096];
  while (text.size() <= kMaxTokenFileBytes) {
    in.read(block, sizeof(block));
    text.append(block, static_cast<size_t>(in.gcount()));
    if (!in) break;
  }
  if (in.bad()) return Error::IOError("cannot read " + std::string(what) + " " + shown);

  if (text.size() > kMaxTokenFileBytes) {
    return Error{shown + ": more than " + std::to_string(kMaxTokenFileBytes) +
                 " bytes (expected a token file of a few lines)"};
  }
  const std::string_view scanned =
      place == TokenPlace::kFirstLine ? std::string_view(text).substr(0, text.find('\n')) : std::string_view(text);
  TokenLines lines(scanned, path, TokenLineForm::kTokenOrScopeToken);
  auto first = lines.Next();
  if (!first.ok()) return first.error();
  if (!first->has_value()) {
    if (place == TokenPlace::kFirstLine) {
      return Error{shown + ":1: the first line holds no token (expected 'TOKEN' or 'SCOPE TOKEN' on it)"};
    }
    return Error{shown + ": no token in it (expected a line 'TOKEN' or 'SCOPE TOKEN')"};
  }
  return std::move((*first)->token);
}

}  // namespace wattcut::http
