#include "wattcut/base/csv_reader.h"

#include <gtest/gtest.h>

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
  EXPECT_EQ(CsvTable::Parse("\n\n", "t.csv").error().message,
            "t.csv: file is empty (expected a header line)");
  EXPECT_NE(CsvTable::Read("/nonexistent/x.csv").error().message.find("cannot open"),
            std::string::npos);
}

TEST(CsvTable, NumbersAreLocatedAndValidated) {
  auto table = CsvTable::Parse("v\n1.5\nabc\nnan\n\n1410.0\n", "t.csv");
  ASSERT_TRUE(table.ok());
  const auto& rows = table->rows();
  EXPECT_DOUBLE_EQ(*table->number(rows[0], 0), 1.5);
  EXPECT_EQ(table->number(rows[1], 0).error().message,
            "t.csv:3: column 'v': expected a number, got 'abc'");
  EXPECT_EQ(table->number(rows[2], 0).error().message,
            "t.csv:4: column 'v': expected a finite number, got 'nan'");
  EXPECT_EQ(*table->integer(rows[3], 0), 1410);
  EXPECT_EQ(table->integer(rows[0], 0).error().message,
            "t.csv:2: column 'v': expected an integer, got '1.5'");
}

}  // namespace
}  // namespace wattcut
