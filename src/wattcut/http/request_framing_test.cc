#include "wattcut/http/request_framing.h"

#include <gtest/gtest.h>

namespace wattcut::http {
namespace {

using State = RequestFraming::State;

RequestFraming Frame(std::string_view bytes) { return FrameRequest(bytes, 1024, 100); }

TEST(RequestFraming, ARequestIsReadyOnceItsHeadersAndBodyHaveArrived) {
  EXPECT_EQ(Frame("").state, State::kIncomplete);
  EXPECT_EQ(Frame("GET /healthz HTTP/1.1\r\nHost: a\r\n").state, State::kIncomplete);
  const std::string get = "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n";
  RequestFraming ready = Frame(get + "GET /next");  // a pipelined request behind it
  EXPECT_EQ(ready.state, State::kReady);
  EXPECT_EQ(ready.header_bytes, get.size());
  EXPECT_EQ(ready.request_bytes, get.size());
  EXPECT_FALSE(ready.add_empty_length);

  const std::string put = "PUT /v1/x HTTP/1.1\r\nContent-Length: 12\r\n\r\n";
  EXPECT_EQ(Frame(put + "{\"gpus\":").state, State::kIncomplete);
  RequestFraming whole = Frame(put + "{\"gpus\":[7]}");
  EXPECT_EQ(whole.state, State::kReady);
  EXPECT_EQ(whole.request_bytes, put.size() + 12);
  EXPECT_EQ(Frame("\r\n" + get).state, State::kReady) << "an empty line before the request line is ignored";
}

TEST(RequestFraming, ABodyTheWorkerReadsIsReadyAtTheEndOfTheHeaders) {
  RequestFraming large = Frame("POST /profile HTTP/1.1\r\nContent-Length: 101\r\n\r\n{");
  EXPECT_EQ(large.state, State::kReady);
  EXPECT_EQ(large.request_bytes, 0u);
  RequestFraming chunked = Frame("POST /p HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n");
  EXPECT_EQ(chunked.state, State::kReady);
  EXPECT_EQ(chunked.request_bytes, 0u);
  // Its client sends the body only after "100 Continue", which the worker's httplib answers.
  RequestFraming expecting = Frame("POST /p HTTP/1.1\r\nContent-Length: 50\r\nExpect: 100-continue\r\n\r\n");
  EXPECT_EQ(expecting.state, State::kReady);
  EXPECT_EQ(expecting.request_bytes, 0u);
}

// RFC 9112 6.3: without Content-Length or Transfer-Encoding a request has no body. httplib
// otherwise read until the connection closed: the agent's documented renewal, a bare POST, waited
// 5 s for a 400 with an empty body.
TEST(RequestFraming, ABodyMethodWithoutALengthHasAnEmptyBody) {
  const std::string renew = "POST /v1/leases/2/renew HTTP/1.1\r\nHost: a\r\n\r\n";
  RequestFraming framing = Frame(renew);
  EXPECT_EQ(framing.state, State::kReady);
  EXPECT_TRUE(framing.add_empty_length);
  EXPECT_EQ(WithEmptyContentLength(renew + "GET", framing.header_bytes),
            "POST /v1/leases/2/renew HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\nGET");
  for (const char* method : {"PUT", "PATCH", "DELETE"}) {
    EXPECT_TRUE(Frame(std::string(method) + " / HTTP/1.1\r\n\r\n").add_empty_length) << method;
  }
}

TEST(RequestFraming, WronglyFramedRequestsAreRefusedBeforeAnyHandler) {
  struct Case {
    std::string bytes;
    int status;
    std::string error;
  };
  const Case cases[] = {
      {"PUT / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\n", 400, "two different Content-Length headers"},
      {"PUT / HTTP/1.1\r\nContent-Length: 0x10\r\n\r\n", 400, "Content-Length is not a number"},
      {"PUT / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400, "Content-Length is not a number"},
      {"PUT / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n", 400,
       "both Transfer-Encoding and Content-Length"},
      {std::string("GET / HTTP/1.1\r\nAuthorization: Bearer abc\0\r\n\r\n", 46), 400, "control byte"},
      {"GET / HTTP/1.1\r\nX: a\x01\r\n", 400, "control byte"},  // refused before the headers end
      {"GET /" + std::string(2000, 'a'), 431, "longer than 1024 bytes"},
      {"GET /" + std::string(1100, 'a') + " HTTP/1.1\r\n\r\n", 431, "longer than 1024 bytes"},
  };
  for (const Case& c : cases) {
    RequestFraming framing = Frame(c.bytes);
    EXPECT_EQ(framing.state, State::kBad) << c.bytes;
    EXPECT_EQ(framing.status, c.status) << c.bytes;
    EXPECT_NE(framing.error.find(c.error), std::string::npos) << framing.error;
  }
  // Each line within what cpp-httplib reads (kMaxHeaderLineBytes), finished or not.
  const Case long_lines[] = {
      {"GET /" + std::string(9000, 'a') + " HTTP/1.1\r\n\r\n", 414, "the request line is longer than 8190 bytes"},
      {"GET / HTTP/1.1\r\nAuthorization: Bearer " + std::string(30000, 't') + "\r\n\r\n", 431,
       "a header line is longer than 8190 bytes"},
      {"GET / HTTP/1.1\r\nX: " + std::string(8200, 'x'), 431, "a header line is longer"},  // not yet ended
  };
  for (const Case& c : long_lines) {
    RequestFraming framing = FrameRequest(c.bytes, 64 * 1024, 64 * 1024);
    EXPECT_EQ(framing.state, State::kBad) << c.bytes.substr(0, 40);
    EXPECT_EQ(framing.status, c.status);
    EXPECT_NE(framing.error.find(c.error), std::string::npos) << framing.error;
  }
  EXPECT_EQ(FrameRequest("GET / HTTP/1.1\r\nX: " + std::string(8187, 'x') + "\r\n\r\n", 64 * 1024, 64 * 1024).state,
            State::kReady)
      << "a line of 8190 bytes";

  EXPECT_EQ(Frame("PUT / HTTP/1.1\r\nContent-Length: 3\r\ncontent-length: 3\r\n\r\nabc").state, State::kReady)
      << "the same length twice is one length";
}

}  // namespace
}  // namespace wattcut::http
