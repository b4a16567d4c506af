#include "wattcut/base/csv_reader.h"

#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>

namespace wattcut {
namespace {

TEST(CsvTable, ReadsHeaderAndRowsWithLineNumbers) {
  auto table = CsvTable::Parse("a,b\n\n1,2\r\n3,\"x,\"\"y\"\"\"\n", "t.csv");
  ASSERT_TRUE(table.ok()) << table.error().message;
  ASSERT_EQ(table->header(), (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(table->rows().size(), 2u);
  EXPECT_EQ(table->rows()[0].line, 3);
  EXPECT_EQ(table->rows()[1].line, 4);
  EXPECT_EQ(table->rows()[1].fields[1], "x,\"y\"");
}

TEST(CsvTable, RejectsRowWithWrongFieldCount) {
  auto table = CsvTable::Parse("a,b\n1,2\n3\n", "t.csv");
  ASSERT_FALSE(table.ok());
  EXPECT_EQ(table.error().message, "t.csv:3: expected 2 fields as in the header, got 1");
}

TEST(CsvTable, RejectsUnclosedQuoteAndEmptyFile) {
  EXPECT_EQ(CsvTable::Parse("a\n\"x\n", "t.csv").error().message, "t.csv:2: unclosed double quote");
  EXPECT_EQ(CsvTable::Parse("\n\n", "t.csv").error().message, "t.csv: file is empty (expected a header line)");
  EXPECT_NE(CsvTable::Read("/nonexistent/x.csv").error().message.find("cannot open"), std::string::npos);
}

TEST(CsvTable, NumbersAreLocatedAndValidated) {
  auto table = CsvTable::Parse("v\n1.5\nabc\nnan\n\n1410.0\n", "t.csv");
  ASSERT_TRUE(table.ok());
  const auto& rows = table->rows();
  EXPECT_DOUBLE_EQ(*table->number(rows[0], 0), 1.5);
  EXPECT_EQ(table->number(rows[1], 0).error().message, "t.csv:3: column 'v': expected a number, got 'abc'");
  EXPECT_EQ(table->number(rows[2], 0).error().message, "t.csv:4: column 'v': expected a finite number, got 'nan'");
  EXPECT_EQ(*table->integer(rows[3], 0), 1410);
  EXPECT_EQ(table->integer(rows[0], 0).error().message, "t.csv:2: column 'v': expected an integer, got '1.5'");
}

TEST(CsvTable, SkipsALeadingUtf8ByteOrderMark) {
  auto table = CsvTable::Parse("\xEF\xBB\xBFstage,time_s\n0,1.5\n", "t.csv");
  ASSERT_TRUE(table.ok()) << table.error().message;
  EXPECT_EQ(table->header()[0], "stage");
  EXPECT_TRUE(table->column("stage").has_value());
  // Only at the very start: elsewhere the bytes are data.
  auto later = CsvTable::Parse("a\n\xEF\xBB\xBFx\n", "t.csv");
  ASSERT_TRUE(later.ok());
  EXPECT_EQ(later->rows()[0].fields[0], "\xEF\xBB\xBFx");
}

TEST(CsvTable, MessagesNeverEchoControlBytes) {
  auto table = CsvTable::Parse(
      std::string("v\x1b[31m\n1\x1b]0;owned\x07\n") + std::string(500, '9') + "x\n" + std::string("\0", 1) + "\n",
      "t.csv");
  ASSERT_TRUE(table.ok()) << table.error().message;
  const auto& rows = table->rows();
  EXPECT_EQ(table->number(rows[0], 0).error().message,
            "t.csv:2: column 'v\\x1b[31m': expected a number, got '1\\x1b]0;owned\\x07'");
  const std::string long_value = table->integer(rows[1], 0).error().message;
  EXPECT_EQ(long_value, "t.csv:3: column 'v\\x1b[31m': expected an integer, got '" + std::string(80, '9') + "...'");
  EXPECT_EQ(table->number(rows[2], 0).error().message, "t.csv:4: column 'v\\x1b[31m': expected a number, got '\\x00'");
}

TEST(CsvTable, ReadRefusesADirectoryAndAFileOverTheLimit) {
  const std::string dir = ::testing::TempDir() + "csv_reader_test_" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  EXPECT_EQ(CsvTable::Read(dir).error().message, dir + ": is a directory, expected a CSV file");
  const std::string file = dir + "/t.csv";
  std::ofstream(file) << "a\n1\n2\n";  // 6 bytes
  EXPECT_TRUE(CsvTable::Read(file, 6).ok());
  EXPECT_EQ(CsvTable::Read(file, 5).error().message, file + ": file is 6 bytes, more than the 5 this reader accepts");
  std::filesystem::remove_all(dir);
}

// Writes `text` to a fresh file under the test's temporary folder and returns its path.
std::string WriteTempFile(const std::string& name, const std::string& text) {
  const std::string dir = ::testing::TempDir() + "csv_row_reader_test_" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(CsvRowReader, AFileReadInChunksOfAnySizeGivesTheRowsParseGives) {
  // A byte order mark, quotes (and "" in them) that a chunk boundary may cut anywhere, a quoted
  // line break, CRLF, blank lines, blanks around fields and a last row without a line end.
  const std::string text =
      "\xEF\xBB\xBF"
      "a, b ,c\r\n\n1,\"x,\"\"y\"\"\",3\n\"multi\nline\",\"\"\"\"\"\",\"q\"\"\"\r\n  \n"
      "4, 5 ,6\n\"\",\"\"\"\",x\"y\"z";
  auto expected = CsvTable::Parse(text, "t.csv");
  ASSERT_TRUE(expected.ok()) << expected.error().message;
  ASSERT_EQ(expected->rows().size(), 4u);
  const std::string path = WriteTempFile("chunks.csv", text);
  for (size_t chunk : {16, 17, 18, 19, 20, 23, 29, 31, 64, 1 << 20}) {
    auto reader = CsvRowReader::OpenFile(path, kCsvMaxFileBytes, chunk);
    ASSERT_TRUE(reader.ok()) << reader.error().message;
    EXPECT_EQ(reader->table().header(), expected->header()) << chunk;
    EXPECT_EQ(reader->table().source_name(), path);
    CsvRow row;
    for (const CsvRow& want : expected->rows()) {
      auto more = reader->Next(row);
      ASSERT_TRUE(more.ok() && *more) << chunk;
      EXPECT_EQ(row.line, want.line) << chunk;
      EXPECT_EQ(row.fields, want.fields) << chunk;
    }
    auto end = reader->Next(row);
    ASSERT_TRUE(end.ok());
    EXPECT_FALSE(*end);
    EXPECT_FALSE(*reader->Next(row));  // and stays at the end
  }
}

TEST(CsvRowReader, RejectsWhatCsvTableRejectsWithTheSameMessages) {
  auto next_error = [](const std::string& path) {
    auto reader = CsvRowReader::OpenFile(path, kCsvMaxFileBytes, 16);
    if (!reader.ok()) return reader.error().message;
    CsvRow row;
    while (true) {
      auto more = reader->Next(row);
      if (!more.ok()) {
        // A failure is sticky.
        EXPECT_EQ(reader->Next(row).error().message, more.error().message);
        return more.error().message;
      }
      if (!*more) return std::string("no error");
    }
  };
  const std::string fields = WriteTempFile("fields.csv", "a,b\n1,2\n3\n");
  EXPECT_EQ(next_error(fields), fields + ":3: expected 2 fields as in the header, got 1");
  const std::string quote = WriteTempFile("quote.csv", "a\n1\n\"x\n");
  EXPECT_EQ(next_error(quote), quote + ":3: unclosed double quote");
  const std::string empty = WriteTempFile("empty.csv", "\n\n");
  EXPECT_EQ(next_error(empty), empty + ": file is empty (expected a header line)");
  EXPECT_NE(next_error("/nonexistent/x.csv").find("cannot open"), std::string::npos);
  const std::string dir = ::testing::TempDir();
  EXPECT_EQ(CsvRowReader::OpenFile(dir).error().message, dir + ": is a directory, expected a CSV file");
  const std::string small = WriteTempFile("small.csv", "a\n1\n2\n");  // 6 bytes
  EXPECT_TRUE(CsvRowReader::OpenFile(small, 6).ok());
  EXPECT_EQ(CsvRowReader::OpenFile(small, 5).error().message,
            small + ": file is 6 bytes, more than the 5 this reader accepts");
  std::filesystem::remove_all(std::filesystem::path(small).parent_path());
}

TEST(CsvRowReader, ReadsTextInMemoryAsForEachRowDoes) {
  const std::string text = "v\n1\n\n2\n";
  auto reader = CsvRowReader::FromText(text, "t.csv");
  ASSERT_TRUE(reader.ok());
  CsvRow row;
  ASSERT_TRUE(*reader->Next(row));
  EXPECT_EQ(row.line, 2);
  ASSERT_TRUE(*reader->Next(row));
  EXPECT_EQ(row.line, 4);
  EXPECT_EQ(*reader->table().integer(row, 0), 2);
  EXPECT_FALSE(*reader->Next(row));
}

}  // namespace
// Row by row, nothing kept: the header first, each row with its line, and the first error
// (the callback's here) ends the reading.
TEST(CsvTableTest, ForEachRowGivesTheHeaderThenEachRowAndStopsAtAnError) {
  std::vector<std::string> seen;
  Status s = CsvTable::ForEachRow(
      "a,b\n1,2\n\n3,4\n5,6\n", "f.csv",
      [&](const CsvTable& t) {
        seen.push_back("header " + t.header()[0] + t.header()[1]);
        return Status::Ok();
      },
      [&](const CsvTable& t, CsvRow& row) -> Status {
        EXPECT_TRUE(t.rows().empty()) << "the rows are not kept";
        seen.push_back(std::to_string(row.line) + ":" + row.fields[0] + row.fields[1]);
        if (row.fields[0] == "3") return Error{t.where(row, 1) + "stop here"};
        return Status::Ok();
      });
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "f.csv:4: column 'b': stop here");
  EXPECT_EQ(seen, (std::vector<std::string>{"header ab", "2:12", "4:34"}));
}

}  // namespace wattcut
