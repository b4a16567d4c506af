#include "wattcut/base/printable_text.h"

#include <gtest/gtest.h>

#include <string>

namespace wattcut {
namespace {

TEST(PrintableText, KeepsPlainTextAndUtf8) {
  EXPECT_EQ(PrintableText("forward,1410"), "forward,1410");
  EXPECT_EQ(PrintableText("Grüße, 電力 ☃"), "Grüße, 電力 ☃");
  EXPECT_EQ(PrintableText(""), "");
}

TEST(PrintableText, EscapesControlBytes) {
  EXPECT_EQ(PrintableText("a\x1b[2Jb"), "a\\x1b[2Jb");
  EXPECT_EQ(PrintableText(std::string("x\0y", 3)), "x\\x00y");
  EXPECT_EQ(PrintableText("cr\rlf\ntab\tdel\x7f"), "cr\\x0dlf\\x0atab\\x09del\\x7f");
  // C1 controls: U+009B (CSI) as UTF-8 is C2 9B.
  EXPECT_EQ(PrintableText("\xc2\x9b"
                          "31m"),
            "\\xc2\\x9b31m");
}

TEST(PrintableText, EscapesBytesThatAreNotUtf8) {
  EXPECT_EQ(PrintableText("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(PrintableText("a\xe2\x98"), "a\\xe2\\x98");         // truncated sequence
  EXPECT_EQ(PrintableText("\xc0\xaf"), "\\xc0\\xaf");           // overlong '/'
  EXPECT_EQ(PrintableText("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // UTF-16 surrogate
}

TEST(PrintableText, CutsLongValuesByCharacters) {
  EXPECT_EQ(PrintableText(std::string(100, 'x'), 5), "xxxxx...");
  EXPECT_EQ(PrintableText("xxxxx", 5), "xxxxx");
  EXPECT_EQ(PrintableText("ééééé!", 5), "ééééé...");  // never inside a UTF-8 sequence
  EXPECT_EQ(PrintableText("\x01\x02\x03", 2), "\\x01\\x02...");
  EXPECT_EQ(PrintableText(std::string(1'000'000, 'y')).size(), kQuotedValueMaxChars + 3);
}

}  // namespace
}  // namespace wattcut
