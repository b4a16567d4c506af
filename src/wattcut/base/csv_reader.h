// A CSV reader that remembers where every field came from, so that a rejected value
// can be reported as "FILE:LINE: column 'NAME': expected ..., got '...'".
//
// Accepts RFC 4180 CSV: comma separated, optional double quotes around a field ("" is
// a quote inside one), LF or CRLF line ends. Blank lines are skipped. The first
// non-blank line is the header. Written here rather than taken from a library because
// the messages need the line and column of every field; the format itself is small.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "wattcut/base/result.h"

namespace wattcut {

struct CsvRow {
  int line = 0;                     // 1-based line number in the file
  std::vector<std::string> fields;  // one per header column
};

class CsvTable {
 public:
  // Reads and splits `path`. Fails on an unreadable file, an empty file, an unclosed
  // quote, or a row whose field count differs from the header's.
  static Result<CsvTable> Read(const std::string& path);
  // Same, from text already in memory; `source_name` stands for the file in messages.
  static Result<CsvTable> Parse(const std::string& text, const std::string& source_name);

  const std::string& source_name() const { return source_name_; }
  const std::vector<std::string>& header() const { return header_; }
  const std::vector<CsvRow>& rows() const { return rows_; }

  // Index of a header column, or nullopt.
  std::optional<size_t> column(const std::string& name) const;

  // Typed access with a located error message.
  Result<double> number(const CsvRow& row, size_t column) const;
  Result<int64_t> integer(const CsvRow& row, size_t column) const;
  // "FILE:LINE: column 'NAME': " prefix for custom messages.
  std::string where(const CsvRow& row, size_t column) const;

 private:
  std::string source_name_;
  std::vector<std::string> header_;
  std::vector<CsvRow> rows_;
};

}  // namespace wattcut
