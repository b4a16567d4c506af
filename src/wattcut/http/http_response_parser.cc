#include "wattcut/http/http_response_parser.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "wattcut/base/printable_text.h"

namespace wattcut::http {

namespace {

constexpr size_t kMaxHeadBytes = 64 * 1024;
constexpr size_t kMaxChunkLineBytes = 1024;

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

bool ContainsToken(std::string_view list, std::string_view token) {
  while (!list.empty()) {
    const size_t comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
    if (EqualsIgnoringCase(item, token)) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

std::string_view Trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) text.remove_suffix(1);
  return text;
}

}  // namespace

HttpResponseParser::HttpResponseParser(size_t max_body_bytes, bool head_request)
    : max_body_bytes_(max_body_bytes), head_request_(head_request) {}

void HttpResponseParser::Fail(std::string problem) {
  state_ = State::kMalformed;
  problem_ = std::move(problem);
}

bool HttpResponseParser::Append(std::string_view bytes) {
  if (bytes.size() > max_body_bytes_ - body_.size()) {
    state_ = State::kTooLarge;
    return false;
  }
  body_.append(bytes);
  return true;
}

bool HttpResponseParser::ParseHead(std::string_view head) {
  // Status line: HTTP/1.x SP 3DIGIT [SP reason]
  const size_t line_end = head.find("\r\n");
  const std::string_view status_line = head.substr(0, line_end);
  if (status_line.size() < 12 || status_line.substr(0, 7) != "HTTP/1." || status_line[8] != ' ') {
    Fail("not an HTTP/1.x status line: '" + PrintableText(std::string(status_line), 80) + "'");
    return false;
  }
  const std::string_view code = status_line.substr(9, 3);
  if (!std::all_of(code.begin(), code.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
      (status_line.size() > 12 && status_line[12] != ' ')) {
    Fail("not an HTTP/1.x status line: '" + PrintableText(std::string(status_line), 80) + "'");
    return false;
  }
  status_ = (code[0] - '0') * 100 + (code[1] - '0') * 10 + (code[2] - '0');
  keep_alive_ = status_line[7] == '1';  // HTTP/1.1 keeps the connection unless told otherwise

  bool chunked = false;
  bool has_length = false;
  size_t length = 0;
  std::string_view rest = line_end == std::string_view::npos ? std::string_view() : head.substr(line_end + 2);
  while (!rest.empty()) {
    const size_t end = rest.find("\r\n");
    const std::string_view line = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 2);
    if (line.empty()) continue;
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) {
      Fail("a header line without a name: '" + PrintableText(std::string(line), 80) + "'");
      return false;
    }
    const std::string_view name = line.substr(0, colon);
    const std::string_view value = Trimmed(line.substr(colon + 1));
    if (EqualsIgnoringCase(name, "Content-Length")) {
      size_t parsed = 0;
      auto [end_of_number, error] = std::from_chars(value.data(), value.data() + value.size(), parsed);
      if (error != std::errc() || end_of_number != value.data() + value.size() || value.empty() ||
          (has_length && parsed != length)) {
        Fail("Content-Length: expected one non-negative integer, got '" + PrintableText(std::string(value), 40) + "'");
        return false;
      }
      has_length = true;
      length = parsed;
    } else if (EqualsIgnoringCase(name, "Transfer-Encoding")) {
      chunked = ContainsToken(value, "chunked");
    } else if (EqualsIgnoringCase(name, "Content-Type")) {
      content_type_ = std::string(value);
    } else if (EqualsIgnoringCase(name, "Connection")) {
      if (ContainsToken(value, "close")) keep_alive_ = false;
      if (ContainsToken(value, "keep-alive")) keep_alive_ = true;
    }
  }
  const bool no_body = head_request_ || status_ == 204 || status_ == 304 || (status_ >= 100 && status_ < 200);
  if (no_body) {
    phase_ = Phase::kDone;
  } else if (chunked) {
    phase_ = Phase::kChunkSize;
  } else if (has_length) {
    if (length > max_body_bytes_) {
      state_ = State::kTooLarge;
      return false;
    }
    remaining_ = length;
    phase_ = length == 0 ? Phase::kDone : Phase::kBodyLength;
    body_.reserve(length);
  } else {
    phase_ = Phase::kBodyToEnd;
    keep_alive_ = false;
  }
  return true;
}

size_t HttpResponseParser::Feed(std::string_view bytes) {
  size_t used = 0;
  if (!bytes.empty()) started_ = true;
  while (state_ == State::kIncomplete && used < bytes.size()) {
    std::string_view input = bytes.substr(used);
    switch (phase_) {
      case Phase::kHead: {
        // The head may end in this input; look from a little before the new bytes.
        const size_t from = pending_.size() >= 3 ? pending_.size() - 3 : 0;
        pending_.append(input);
        const size_t end = pending_.find("\r\n\r\n", from);
        if (end == std::string::npos) {
          if (pending_.size() > kMaxHeadBytes) {
            Fail("the header is longer than " + std::to_string(kMaxHeadBytes) + " bytes");
            return used;
          }
          return bytes.size();
        }
        const size_t head_bytes_here = end + 4 - (pending_.size() - input.size());
        used += head_bytes_here;
        const std::string head = pending_.substr(0, end + 2);
        pending_.clear();
        if (!ParseHead(head)) return used;
        break;
      }
      case Phase::kBodyLength: {
        const size_t take = std::min(remaining_, input.size());
        if (!Append(input.substr(0, take))) return used;
        used += take;
        remaining_ -= take;
        if (remaining_ == 0) phase_ = Phase::kDone;
        break;
      }
      case Phase::kBodyToEnd:
        if (!Append(input)) return used;
        used = bytes.size();
        break;
      case Phase::kChunkSize:
      case Phase::kTrailer:
      case Phase::kChunkDataEnd: {
        const size_t end = input.find('\n');
        const size_t take = end == std::string_view::npos ? input.size() : end + 1;
        pending_.append(input.substr(0, take));
        used += take;
        if (pending_.size() > kMaxChunkLineBytes) {
          Fail("a chunk line is longer than " + std::to_string(kMaxChunkLineBytes) + " bytes");
          return used;
        }
        if (end == std::string_view::npos) break;
        const std::string_view line = Trimmed(std::string_view(pending_).substr(0, pending_.size() - 1));
        if (phase_ == Phase::kChunkDataEnd) {
          if (!line.empty()) {
            Fail("a chunk does not end with CRLF");
            return used;
          }
          phase_ = Phase::kChunkSize;
        } else if (phase_ == Phase::kTrailer) {
          if (line.empty()) phase_ = Phase::kDone;
        } else {
          const std::string_view size_text = line.substr(0, line.find(';'));
          size_t size = 0;
          auto [end_of_number, error] =
              std::from_chars(size_text.data(), size_text.data() + size_text.size(), size, 16);
          if (error != std::errc() || end_of_number != size_text.data() + size_text.size() || size_text.empty()) {
            Fail("a chunk size is not a hexadecimal number: '" + PrintableText(std::string(line), 40) + "'");
            return used;
          }
          if (size > max_body_bytes_ - body_.size()) {
            state_ = State::kTooLarge;
            return used;
          }
          remaining_ = size;
          phase_ = size == 0 ? Phase::kTrailer : Phase::kChunkData;
        }
        pending_.clear();
        break;
      }
      case Phase::kChunkData: {
        const size_t take = std::min(remaining_, input.size());
        if (!Append(input.substr(0, take))) return used;
        used += take;
        remaining_ -= take;
        if (remaining_ == 0) phase_ = Phase::kChunkDataEnd;
        break;
      }
      case Phase::kDone:
        break;
    }
    if (phase_ == Phase::kDone) state_ = State::kComplete;
  }
  if (state_ == State::kIncomplete && phase_ == Phase::kDone) state_ = State::kComplete;
  return used;
}

void HttpResponseParser::FeedEnd() {
  if (state_ != State::kIncomplete) return;
  if (phase_ == Phase::kBodyToEnd) {
    state_ = State::kComplete;
    return;
  }
  Fail(started_ ? "the connection closed in the middle of the answer" : "the connection closed before an answer");
}

}  // namespace wattcut::http
