// libFuzzer entry point for the HTTP/1.1 response parser (wattcut/http/http_response_parser.h),
// which reads what a node agent (or anything listening where one should be) sends the row
// controller. The first byte picks the piece size the rest is fed in (a response arrives in any
// pieces) and whether it is a HEAD's answer; then the connection ends. Every input must end in a
// state, never a crash or a hang; a complete body is within the limit; bytes taken never exceed the
// bytes given; a problem is a printable message.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz/message_check.h"
#include "wattcut/http/http_response_parser.h"

namespace {

using wattcut::http::HttpResponseParser;

void Require(bool condition) {
  if (!condition) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t piece = 1 + (data[0] & 0x3f);
  const bool head = (data[0] & 0x40) != 0;
  const std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  constexpr size_t kMaxBody = 4096;
  HttpResponseParser parser(kMaxBody, head);
  size_t offset = 0;
  while (offset < input.size() && parser.state() == HttpResponseParser::State::kIncomplete) {
    const std::string_view bytes = input.substr(offset, piece);
    const size_t taken = parser.Feed(bytes);
    Require(taken <= bytes.size());
    offset += bytes.size();
  }
  parser.FeedEnd();
  Require(parser.state() != HttpResponseParser::State::kIncomplete);
  Require(parser.body().size() <= kMaxBody);
  if (parser.state() == HttpResponseParser::State::kComplete) Require(parser.status() >= 0 && parser.status() <= 999);
  if (parser.state() == HttpResponseParser::State::kMalformed) wattcut::fuzz::CheckMessage(parser.problem());
  return 0;
}
