// The response parser on whole answers, on answers cut at every byte, and on bad ones.
#include "wattcut/http/http_response_parser.h"

#include <gtest/gtest.h>

#include <string>

namespace wattcut::http {
namespace {

using State = HttpResponseParser::State;

// Feeds `text` in pieces of `piece` bytes; returns the bytes taken.
size_t FeedInPieces(HttpResponseParser& parser, const std::string& text, size_t piece) {
  size_t taken = 0;
  for (size_t at = 0; at < text.size() && parser.state() == State::kIncomplete; at += piece) {
    taken += parser.Feed(std::string_view(text).substr(at, piece));
  }
  return taken;
}

TEST(HttpResponseParser, AContentLengthAnswerInAnyPieces) {
  const std::string answer =
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\ncontent-length: 11\r\nKeep-Alive: timeout=60\r\n\r\n"
      "{\"a\":[1,2]}";
  for (size_t piece : {size_t{1}, size_t{2}, size_t{7}, answer.size()}) {
    HttpResponseParser parser(1000);
    EXPECT_EQ(FeedInPieces(parser, answer, piece), answer.size()) << piece;
    ASSERT_EQ(parser.state(), State::kComplete) << piece;
    EXPECT_EQ(parser.status(), 200);
    EXPECT_EQ(parser.content_type(), "application/json");
    EXPECT_EQ(parser.body(), "{\"a\":[1,2]}");
    EXPECT_TRUE(parser.keep_alive());
  }
}

TEST(HttpResponseParser, BytesAfterTheAnswerAreLeft) {
  HttpResponseParser parser(1000);
  const std::string two = "HTTP/1.1 404 Not Found\r\nContent-Length: 2\r\n\r\nnoHTTP/1.1 200 OK\r\n";
  EXPECT_EQ(parser.Feed(two), two.find("noHTTP") + 2);
  EXPECT_EQ(parser.state(), State::kComplete);
  EXPECT_EQ(parser.status(), 404);
  EXPECT_EQ(parser.body(), "no");
}

TEST(HttpResponseParser, AChunkedAnswerInAnyPieces) {
  const std::string answer =
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nwiki\r\n6;ext=1\r\npedia \r\nE\r\nin "
      "\r\n\r\nchunks.\r\n"
      "0\r\nX-Trailer: 1\r\n\r\n";
  for (size_t piece : {size_t{1}, size_t{3}, answer.size()}) {
    HttpResponseParser parser(1000);
    EXPECT_EQ(FeedInPieces(parser, answer, piece), answer.size()) << piece;
    ASSERT_EQ(parser.state(), State::kComplete) << piece;
    EXPECT_EQ(parser.body(), "wikipedia in \r\n\r\nchunks.");
  }
}

TEST(HttpResponseParser, NoLengthMeansUntilTheConnectionEnds) {
  HttpResponseParser parser(1000);
  parser.Feed("HTTP/1.0 200 OK\r\n\r\nall of ");
  parser.Feed("it");
  EXPECT_EQ(parser.state(), State::kIncomplete);
  parser.FeedEnd();
  ASSERT_EQ(parser.state(), State::kComplete);
  EXPECT_EQ(parser.body(), "all of it");
  EXPECT_FALSE(parser.keep_alive());
}

TEST(HttpResponseParser, ConnectionCloseAndNoBodyStatuses) {
  HttpResponseParser closing(1000);
  closing.Feed("HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n");
  ASSERT_EQ(closing.state(), State::kComplete);
  EXPECT_FALSE(closing.keep_alive());
  HttpResponseParser head(1000, /*head_request=*/true);
  head.Feed("HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n");
  EXPECT_EQ(head.state(), State::kComplete);
}

TEST(HttpResponseParser, ACutAnswerIsMalformedAndSaysWhetherAnythingCame) {
  HttpResponseParser nothing(1000);
  nothing.FeedEnd();
  EXPECT_EQ(nothing.state(), State::kMalformed);
  EXPECT_FALSE(nothing.started());
  EXPECT_EQ(nothing.problem(), "the connection closed before an answer");
  HttpResponseParser cut(1000);
  cut.Feed("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc");
  cut.FeedEnd();
  EXPECT_EQ(cut.state(), State::kMalformed);
  EXPECT_TRUE(cut.started());
  EXPECT_EQ(cut.problem(), "the connection closed in the middle of the answer");
}

TEST(HttpResponseParser, LimitsAndGarbage) {
  HttpResponseParser big(10);
  big.Feed("HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n");
  EXPECT_EQ(big.state(), State::kTooLarge);
  HttpResponseParser big_chunks(10);
  big_chunks.Feed("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n8\r\n12345678\r\n8\r\n");
  EXPECT_EQ(big_chunks.state(), State::kTooLarge);
  HttpResponseParser to_end(4);
  to_end.Feed("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n12345");
  EXPECT_EQ(to_end.state(), State::kTooLarge);

  struct Case {
    std::string text;
    std::string problem;
  };
  for (const Case& c : {
           Case{"SSH-2.0-OpenSSH_9.2\r\n\r\n", "not an HTTP/1.x status line: 'SSH-2.0-OpenSSH_9.2'"},
           Case{"HTTP/1.1 2x0 OK\r\n\r\n", "not an HTTP/1.x status line: 'HTTP/1.1 2x0 OK'"},
           Case{"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
                "Content-Length: expected one non-negative integer, got '-1'"},
           Case{"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
                "Content-Length: expected one non-negative integer, got '2'"},
           Case{"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "a header line without a name: 'no colon here'"},
           Case{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
                "a chunk size is not a hexadecimal number: 'zz'"},
           Case{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n", "a chunk does not end with CRLF"},
       }) {
    HttpResponseParser parser(1000);
    parser.Feed(c.text);
    EXPECT_EQ(parser.state(), State::kMalformed) << c.text;
    EXPECT_EQ(parser.problem(), c.problem) << c.text;
  }
  HttpResponseParser endless(1000);
  endless.Feed("HTTP/1.1 200 OK\r\n" + std::string(70000, 'x'));
  EXPECT_EQ(endless.state(), State::kMalformed);
  EXPECT_EQ(endless.problem(), "the header is longer than 65536 bytes");
}

}  // namespace
}  // namespace wattcut::http
