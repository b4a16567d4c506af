#include "wattcut/plot/svg_document.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "wattcut/plot/xml_check_testing.h"

namespace wattcut::plot {
namespace {

using testing::XmlProblem;

TEST(EscapeXml, ReplacesMarkupCharactersAndDropsForbiddenControls) {
  EXPECT_EQ(EscapeXml("a<b & c>\"d\" 'e'"), "a&lt;b &amp; c&gt;&quot;d&quot; &apos;e&apos;");
  EXPECT_EQ(EscapeXml(std::string("x\x01y\tz\n", 6)), "xy\tz\n");
  EXPECT_EQ(EscapeXml("50 % \xc2\xb5s"), "50 % \xc2\xb5s");  // UTF-8 passes through
}

TEST(FormatCoordinate, IsCompact) {
  EXPECT_EQ(FormatCoordinate(12.0), "12");
  EXPECT_EQ(FormatCoordinate(12.345), "12.35");
  EXPECT_EQ(FormatCoordinate(-0.001), "0");
  EXPECT_EQ(FormatCoordinate(0.5), "0.5");
  EXPECT_EQ(FormatCoordinate(1.0 / 0.0), "0");
}

TEST(XmlCheck, RejectsBrokenDocuments) {
  EXPECT_EQ(XmlProblem("<a><b/></a>"), "");
  EXPECT_NE(XmlProblem("<a><b></a>"), "");
  EXPECT_NE(XmlProblem("<a x=1/>"), "");
  EXPECT_NE(XmlProblem("<a x=\"1\" x=\"2\"/>"), "");
  EXPECT_NE(XmlProblem("<a>&nbsp;</a>"), "");
  EXPECT_NE(XmlProblem("<a>1 < 2</a>"), "");
  EXPECT_NE(XmlProblem("<a/><b/>"), "");
  EXPECT_NE(XmlProblem("<a>"), "");
}

TEST(SvgDocument, ProducesWellFormedSvgWithEscapedText) {
  SvgDocument doc(200, 100);
  doc.Rect(0, 0, 200, 100, Style::Fill("white"));
  doc.Line(0, 0, 10, 10, Style::Stroke("#ff0000", 2).WithDash("4 2"));
  doc.Polyline({{0, 0}, {5, 5.5}}, Style::Stroke("blue"));
  doc.Circle(5, 5, 2, Style::Fill("red").WithOpacity(0.5));
  doc.LinearGradient("g", {{0, "#000000"}, {1, "#ffffff"}});
  doc.ClipRect("c", 0, 0, 50, 50);
  doc.BeginGroup("tip <1>", "c");
  doc.Text(10, 20, "P99 < 5 % & \"T1\"", TextStyle::Sized(12).Rotate(-90));
  doc.BeginGroup();  // left open: ToString closes it
  std::string svg = doc.ToString();
  EXPECT_EQ(XmlProblem(svg), "") << svg;
  EXPECT_NE(svg.find("P99 &lt; 5 % &amp; &quot;T1&quot;"), std::string::npos);
  EXPECT_NE(svg.find("<title>tip &lt;1&gt;</title>"), std::string::npos);
  EXPECT_NE(svg.find("stroke-dasharray=\"4 2\""), std::string::npos);
  EXPECT_NE(svg.find("points=\"0,0 5,5.5\""), std::string::npos);
  EXPECT_NE(svg.find("rotate(-90 10 20)"), std::string::npos);
  EXPECT_NE(svg.find("clip-path=\"url(#c)\""), std::string::npos);
  EXPECT_EQ(svg.find("<defs>"), svg.find("<linearGradient") - 7);
}

TEST(SvgDocument, WritesFileAndReportsUnwritablePath) {
  SvgDocument doc(10, 10);
  std::string path = (std::filesystem::temp_directory_path() / "wattcut_svg_document_test.svg").string();
  ASSERT_TRUE(doc.WriteFile(path).ok());
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), doc.ToString());
  std::filesystem::remove(path);
  Status bad = doc.WriteFile("/nonexistent-dir/x.svg");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "/nonexistent-dir/x.svg: cannot open file for writing");
}

}  // namespace
}  // namespace wattcut::plot
