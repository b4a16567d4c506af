// Where one HTTP/1.1 request ends in the bytes a connection has sent so far, so that the
// connection reactor hands a request to a worker thread only once it has arrived (an idle or
// slow client then costs a descriptor and its bytes, never a thread).
//
// Checked here, before any handler runs, because each is how a request is framed (RFC 9112):
//  * the header section (request line and headers) is at most `max_header_bytes` (431), and each
//    line of it at most kMaxHeaderLineBytes (a header: 431; the request line: 414), what cpp-httplib
//    reads a line into: a longer one it refused with a bare "400 bad request", kept the connection
//    open despite "Connection: close", and sent an unasked 408 half a minute later;
//  * no NUL or other control byte but tab in it (400: "Bearer TOKEN\0" was once a token);
//  * Content-Length is digits, and said once or always alike (400: two different values are
//    how a request is smuggled past a proxy);
//  * Transfer-Encoding with Content-Length is refused (400), for the same reason.
// A request that may carry a body (POST, PUT, PATCH, DELETE) without either header has an empty
// body (RFC 9112 6.3): the caller adds "Content-Length: 0", else cpp-httplib reads until the
// connection closes and answers 400 after its read timeout.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace wattcut::http {

// The longest line of a header section, without its CRLF: cpp-httplib 0.11 (Debian 12's, a compiled
// library) reads each line into 8,192 bytes, CRLF included.
inline constexpr size_t kMaxHeaderLineBytes = 8190;

struct RequestFraming {
  enum class State {
    kIncomplete,  // more bytes are needed
    kReady,       // serve it: the whole request is there, or its body is for the worker to read
    kBad,         // answer `status` with `error` and close
  };
  State state = State::kIncomplete;
  size_t header_bytes = 0;  // through the blank line, when the header section is complete
  // kReady: the bytes the whole request takes (header_bytes + its body), when they are all there;
  // 0 when the worker reads the body (chunked, longer than max_body_bytes, or sent only after
  // "100 Continue": an Expect header).
  size_t request_bytes = 0;
  bool add_empty_length = false;  // a body method with neither Content-Length nor Transfer-Encoding
  int status = 0;
  std::string error;
};

// `buffered`: what the connection sent since its previous request ended. A body longer than
// `max_body_bytes` is not waited for (kReady at the end of the headers).
RequestFraming FrameRequest(std::string_view buffered, size_t max_header_bytes, size_t max_body_bytes);

// `buffered` with "Content-Length: 0" added at the end of its header section (`header_bytes`).
std::string WithEmptyContentLength(std::string_view buffered, size_t header_bytes);

}  // namespace wattcut::http
