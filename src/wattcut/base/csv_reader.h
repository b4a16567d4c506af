// A CSV reader that remembers where every field came from, so that a rejected value
// can be reported as "FILE:LINE: column 'NAME': expected ..., got '...'".
//
// Accepts RFC 4180 CSV: comma separated, optional double quotes around a field ("" is
// a quote inside one), LF or CRLF line ends, an optional UTF-8 byte order mark at the
// start (as spreadsheet programs write). Blank lines are skipped. The first non-blank line
// is the header. Values quoted in messages go through PrintableText (no control bytes,
// long values cut). Written here rather than taken from a library because
// the messages need the line and column of every field; the format itself is small.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "wattcut/base/result.h"

namespace wattcut {

struct CsvRow {
  int line = 0;                     // 1-based line number in the file
  std::vector<std::string> fields;  // one per header column
};

// The largest file CsvTable::Read reads unless told otherwise: its text and fields are held
// in memory (about three times the file), so a bigger file is refused before it is read.
inline constexpr uint64_t kCsvMaxFileBytes = uint64_t{1} << 30;

class CsvTable {
 public:
  // Reads and splits `path`. Fails on an unreadable file (or a directory), a file larger
  // than `max_bytes`, an empty file, an unclosed quote, or a row whose field count differs
  // from the header's.
  static Result<CsvTable> Read(const std::string& path, uint64_t max_bytes = kCsvMaxFileBytes);
  // Same, from text already in memory; `source_name` stands for the file in messages.
  static Result<CsvTable> Parse(const std::string& text, const std::string& source_name);

  // One row at a time, without keeping the rows (a table holds about 200 bytes a row): the
  // table given to the callbacks holds the header and source name only (header(), column(),
  // where(), number(), integer()). `on_header` runs once, before any row; `on_row` may move the
  // row's fields away. Stops at the first error, the reader's or a callback's. Memory: the text
  // and the row being split.
  using HeaderCallback = std::function<Status(const CsvTable& table)>;
  using RowCallback = std::function<Status(const CsvTable& table, CsvRow& row)>;
  static Status ForEachRow(const std::string& text, const std::string& source_name, const HeaderCallback& on_header,
                           const RowCallback& on_row);
  // The file's text, with Read's checks (a directory, unreadable, larger than `max_bytes`).
  static Result<std::string> ReadText(const std::string& path, uint64_t max_bytes = kCsvMaxFileBytes);

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
  friend class CsvRowReader;

  std::string source_name_;
  std::vector<std::string> header_;
  std::vector<CsvRow> rows_;
};

// The same CSV read one row at a time on request (a pull reader), from a file read in chunks or
// from text in memory: a file of any size is read in the memory of one chunk and one row. The
// rules, the checks and the messages are CsvTable's (ForEachRow is this reader over text).
class CsvRowReader {
 public:
  // Opens `path` and reads its header (the first non-blank line). Fails as CsvTable::Read does:
  // a directory, an unreadable file, a file larger than `max_bytes` (checked before reading, and
  // again while reading a file whose size is not known), an empty file, an unclosed quote.
  // `chunk_bytes` is how much is read at a time (tests make it small).
  static Result<CsvRowReader> OpenFile(const std::string& path, uint64_t max_bytes = kCsvMaxFileBytes,
                                       size_t chunk_bytes = size_t{1} << 20);
  // From text in memory, which must outlive the reader; `source_name` stands for the file.
  static Result<CsvRowReader> FromText(const std::string& text, const std::string& source_name);

  CsvRowReader(CsvRowReader&&) noexcept;
  CsvRowReader& operator=(CsvRowReader&&) noexcept;
  ~CsvRowReader();

  // The header and source name, for column(), where(), number() and integer().
  const CsvTable& table() const;
  // Replaces `row` with the next row (its fields one per header column); false at the end of the
  // input. Fails on an unclosed quote, a row whose field count differs from the header's, or a
  // read error; after a failure or the end, it keeps answering the same.
  Result<bool> Next(CsvRow& row);

 private:
  class Splitter;
  explicit CsvRowReader(std::unique_ptr<Splitter> splitter);
  Status ReadHeader();
  std::unique_ptr<Splitter> splitter_;
};

}  // namespace wattcut
