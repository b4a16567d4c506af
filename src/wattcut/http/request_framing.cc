#include "wattcut/http/request_framing.h"

#include <strings.h>

#include <algorithm>
#include <cstdint>
#include <optional>

namespace wattcut::http {

namespace {

RequestFraming Bad(int status, std::string error) {
  RequestFraming framing;
  framing.state = RequestFraming::State::kBad;
  framing.status = status;
  framing.error = std::move(error);
  return framing;
}

bool NameIs(std::string_view name, std::string_view wanted) {
  return name.size() == wanted.size() && ::strncasecmp(name.data(), wanted.data(), wanted.size()) == 0;
}

std::string_view Trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

}  // namespace

RequestFraming FrameRequest(std::string_view buffered, size_t max_header_bytes, size_t max_body_bytes) {
  // Empty lines before a request line are ignored (RFC 9112 2.2); they count as its header bytes.
  size_t start = 0;
  while (start + 1 < buffered.size() && buffered[start] == '\r' && buffered[start + 1] == '\n') start += 2;
  const size_t end = buffered.find("\r\n\r\n", start);
  const std::string_view seen =
      buffered.substr(0, std::min(buffered.size(), end == std::string_view::npos ? buffered.size() : end + 4));
  for (unsigned char c : seen) {
    if ((c < 0x20 && c != '\t' && c != '\r' && c != '\n') || c == 0x7f) {
      return Bad(400, "the request line or a header holds a control byte");
    }
  }
  // Every line seen so far, the unfinished last one included.
  for (size_t at = start; at < seen.size();) {
    size_t next = seen.find("\r\n", at);
    const size_t length = (next == std::string_view::npos ? seen.size() : next) - at;
    if (length > kMaxHeaderLineBytes) {
      const bool request_line = at == start;
      return Bad(request_line ? 414 : 431, std::string(request_line ? "the request line" : "a header line") +
                                               " is longer than " + std::to_string(kMaxHeaderLineBytes) + " bytes");
    }
    if (next == std::string_view::npos) break;
    at = next + 2;
  }
  if (end == std::string_view::npos) {
    if (buffered.size() > max_header_bytes) {
      return Bad(431, "the request line and headers are longer than " + std::to_string(max_header_bytes) + " bytes");
    }
    return {};
  }
  RequestFraming framing;
  framing.header_bytes = end + 4;
  if (framing.header_bytes > max_header_bytes) {
    return Bad(431, "the request line and headers are longer than " + std::to_string(max_header_bytes) + " bytes");
  }
  const std::string_view head = buffered.substr(start, end - start);
  const size_t line_end = head.find("\r\n");
  const std::string_view request_line = head.substr(0, line_end);
  const std::string_view method = request_line.substr(0, request_line.find(' '));

  std::optional<uint64_t> content_length;
  bool transfer_encoding = false;
  bool expect_continue = false;
  size_t at = line_end == std::string_view::npos ? head.size() : line_end + 2;
  while (at < head.size()) {
    size_t next = head.find("\r\n", at);
    if (next == std::string_view::npos) next = head.size();
    const std::string_view line = head.substr(at, next - at);
    at = next + 2;
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;  // httplib answers a malformed header line
    const std::string_view name = line.substr(0, colon);
    const std::string_view value = Trimmed(line.substr(colon + 1));
    if (NameIs(name, "Transfer-Encoding")) transfer_encoding = true;
    if (NameIs(name, "Expect")) expect_continue = true;
    if (!NameIs(name, "Content-Length")) continue;
    const bool digits = !value.empty() && value.size() <= 19 &&
                        std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!digits) return Bad(400, "Content-Length is not a number");
    const uint64_t length = std::stoull(std::string(value));
    if (content_length && *content_length != length) {
      return Bad(400, "two different Content-Length headers");
    }
    content_length = length;
  }
  if (transfer_encoding && content_length) return Bad(400, "both Transfer-Encoding and Content-Length");
  framing.state = RequestFraming::State::kReady;
  // The worker reads it: chunked, long, or held back by its client until it hears "100 Continue"
  // (httplib answers Expect).
  if (transfer_encoding || expect_continue || (content_length && *content_length > max_body_bytes)) return framing;
  if (!content_length) {
    framing.add_empty_length = method == "POST" || method == "PUT" || method == "PATCH" || method == "DELETE";
    framing.request_bytes = framing.header_bytes;
    return framing;
  }
  framing.request_bytes = framing.header_bytes + static_cast<size_t>(*content_length);
  if (buffered.size() < framing.request_bytes) {
    framing.state = RequestFraming::State::kIncomplete;
    framing.request_bytes = 0;
  }
  return framing;
}

std::string WithEmptyContentLength(std::string_view buffered, size_t header_bytes) {
  std::string out(buffered.substr(0, header_bytes - 2));
  out += "Content-Length: 0\r\n\r\n";
  out.append(buffered.substr(header_bytes));
  return out;
}

}  // namespace wattcut::http
