// An HTTP/1.1 response read incrementally from a connection's bytes, for ConcurrentRequests:
// the status line, the headers, and a body framed by Content-Length, by chunked transfer
// coding, or by the end of the connection. Bounded: headers up to 64 KB, a body up to the
// caller's limit. Bytes after the response (a server that answers ahead) are left unread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace wattcut::http {

class HttpResponseParser {
 public:
  enum class State { kIncomplete, kComplete, kMalformed, kTooLarge };

  // `head_request`: a HEAD's answer has no body whatever its headers say.
  HttpResponseParser(size_t max_body_bytes, bool head_request = false);

  // Takes the bytes that arrived; returns how many of them belong to this response (all of
  // them until it is complete). The state says what the parser has seen.
  size_t Feed(std::string_view bytes);
  // The connection ended (EOF): completes a body that runs until the end, anything else that
  // was under way is malformed (a cut answer).
  void FeedEnd();

  State state() const { return state_; }
  // What was wrong, for kMalformed.
  const std::string& problem() const { return problem_; }
  // Whether any byte of the response has arrived (a kept-alive connection the server had closed
  // ends without one: that request may be sent again).
  bool started() const { return started_; }

  int status() const { return status_; }
  const std::string& content_type() const { return content_type_; }
  std::string& body() { return body_; }
  // The server keeps the connection open for the next request.
  bool keep_alive() const { return keep_alive_; }

 private:
  enum class Phase { kHead, kBodyLength, kBodyToEnd, kChunkSize, kChunkData, kChunkDataEnd, kTrailer, kDone };
  bool ParseHead(std::string_view head);
  void Fail(std::string problem);
  bool Append(std::string_view bytes);

  size_t max_body_bytes_;
  bool head_request_;
  State state_ = State::kIncomplete;
  Phase phase_ = Phase::kHead;
  std::string problem_;
  bool started_ = false;
  std::string pending_;  // head or chunk-size line bytes not yet parsed
  int status_ = 0;
  std::string content_type_;
  bool keep_alive_ = true;
  size_t remaining_ = 0;  // body or chunk bytes still to come
  std::string body_;
};

}  // namespace wattcut::http
