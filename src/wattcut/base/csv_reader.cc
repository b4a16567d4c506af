#include "wattcut/base/csv_reader.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <system_error>

#include "wattcut/base/printable_text.h"

namespace wattcut {
namespace {

// The field without the blanks around it.
std::string_view Trimmed(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return {};
  size_t e = s.find_last_not_of(" \t");
  return std::string_view(s).substr(b, e - b + 1);
}

// Opens `path` for reading with the checks every CSV read makes: not a directory, readable, at
// most `max_bytes` when its size is known (`size` is then set, else left unset).
Result<std::ifstream> OpenChecked(const std::string& path, uint64_t max_bytes, std::optional<uintmax_t>& size) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return Error{path + ": is a directory, expected a CSV file"};
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path + ": cannot open file for reading"};
  const uintmax_t bytes = std::filesystem::file_size(path, ec);
  if (!ec && bytes > max_bytes) {
    return Error{path + ": file is " + std::to_string(bytes) + " bytes, more than the " + std::to_string(max_bytes) +
                 " this reader accepts"};
  }
  if (!ec) size = bytes;
  return in;
}

Error TooLarge(const std::string& path, uint64_t max_bytes) {
  return Error{path + ": file is more than the " + std::to_string(max_bytes) + " bytes this reader accepts"};
}

}  // namespace

// The one CSV state machine: splits its input, chunk by chunk, into non-blank lines of fields.
class CsvRowReader::Splitter {
 public:
  CsvTable table;
  // The input: text in memory (one chunk), or a file read `chunk_bytes` at a time.
  const std::string* text = nullptr;
  std::ifstream file;
  std::string buffer;
  size_t chunk_bytes = 0;
  uint64_t max_bytes = 0;
  uint64_t bytes_read = 0;
  std::optional<Error> failed;  // sticky: every later Next answers it

  // Splits up to the end of the next non-blank line: true with its fields in `fields` (the first
  // `field_count` of them) and its first line in `line_out`; false at the end of the input.
  Result<bool> NextLine(int& line_out) {
    while (true) {
      if (pos_ == chunk_.size()) {
        Result<bool> more = Refill();
        if (!more.ok()) return more.error();
        if (*more) continue;
        if (finished_) return false;
        finished_ = true;
        if (in_quotes_) {
          return Error{table.source_name_ + ":" + std::to_string(row_start_line_) + ": unclosed double quote"};
        }
        line_out = row_start_line_;
        return EndLine();
      }
      const char c = chunk_[pos_++];
      if (quote_closed_) {
        quote_closed_ = false;
        if (c == '"') {  // "" inside quotes: one quote, still quoted
          field_.push_back('"');
          in_quotes_ = true;
          continue;
        }
      }
      if (in_quotes_) {
        if (c == '"') {
          in_quotes_ = false;
          quote_closed_ = true;
        } else {
          if (c == '\n') ++line_;
          field_.push_back(c);
        }
        continue;
      }
      switch (c) {
        case '"':
          in_quotes_ = true;
          row_has_content_ = true;
          break;
        case ',':
          EndField();
          row_has_content_ = true;
          break;
        case '\r':
          break;
        case '\n': {
          const int started = row_start_line_;
          const bool content = EndLine();
          ++line_;
          row_start_line_ = line_;
          if (content) {
            line_out = started;
            return true;
          }
          break;
        }
        default:
          if (c != ' ' && c != '\t') row_has_content_ = true;
          field_.push_back(c);
      }
    }
  }

  // The fields of the line NextLine found; its strings are reused for the next line.
  std::vector<std::string> fields;
  size_t field_count = 0;

 private:
  Result<bool> Refill() {
    pos_ = 0;
    chunk_ = {};
    if (text != nullptr) {
      if (text_done_) return false;
      text_done_ = true;
      chunk_ = *text;
    } else {
      if (!file.is_open() || file.eof()) return false;
      buffer.resize(chunk_bytes);
      file.read(buffer.data(), static_cast<std::streamsize>(chunk_bytes));
      if (file.bad()) return Error{table.source_name_ + ": read error"};
      const auto got = static_cast<size_t>(file.gcount());
      bytes_read += got;
      if (bytes_read > max_bytes) return TooLarge(table.source_name_, max_bytes);
      chunk_ = std::string_view(buffer.data(), got);
    }
    // A UTF-8 byte order mark is an encoding marker, not part of the first column's name.
    if (first_chunk_ && chunk_.starts_with("\xEF\xBB\xBF")) pos_ = 3;
    first_chunk_ = false;
    return true;
  }

  void EndField() {
    const std::string_view value = Trimmed(field_);
    if (field_count < fields.size()) {
      fields[field_count].assign(value);
    } else {
      fields.emplace_back(value);
    }
    ++field_count;
    field_.clear();
  }

  // Ends the line; false when it was blank (its fields are dropped).
  bool EndLine() {
    EndField();
    const bool blank = !row_has_content_;
    row_has_content_ = false;
    if (blank) field_count = 0;
    return !blank;
  }

  std::string_view chunk_;
  size_t pos_ = 0;
  bool first_chunk_ = true;
  bool text_done_ = false;
  bool finished_ = false;
  std::string field_;
  bool in_quotes_ = false;
  bool quote_closed_ = false;  // the last byte closed a quoted part; a quote next is a literal one
  bool row_has_content_ = false;
  int line_ = 1;
  int row_start_line_ = 1;
};

CsvRowReader::CsvRowReader(std::unique_ptr<Splitter> splitter) : splitter_(std::move(splitter)) {}
CsvRowReader::CsvRowReader(CsvRowReader&&) noexcept = default;
CsvRowReader& CsvRowReader::operator=(CsvRowReader&&) noexcept = default;
CsvRowReader::~CsvRowReader() = default;

const CsvTable& CsvRowReader::table() const { return splitter_->table; }

Result<CsvRowReader> CsvRowReader::OpenFile(const std::string& path, uint64_t max_bytes, size_t chunk_bytes) {
  std::optional<uintmax_t> size;
  Result<std::ifstream> in = OpenChecked(path, max_bytes, size);
  if (!in.ok()) return in.error();
  auto s = std::make_unique<Splitter>();
  s->table.source_name_ = path;
  s->file = std::move(*in);
  s->chunk_bytes = std::max<size_t>(16, chunk_bytes);
  s->max_bytes = max_bytes;
  CsvRowReader reader(std::move(s));
  if (Status h = reader.ReadHeader(); !h.ok()) return h.error();
  return reader;
}

Result<CsvRowReader> CsvRowReader::FromText(const std::string& text, const std::string& source_name) {
  auto s = std::make_unique<Splitter>();
  s->table.source_name_ = source_name;
  s->text = &text;
  CsvRowReader reader(std::move(s));
  if (Status h = reader.ReadHeader(); !h.ok()) return h.error();
  return reader;
}

Status CsvRowReader::ReadHeader() {
  Splitter& s = *splitter_;
  int line = 0;
  Result<bool> got = s.NextLine(line);
  if (!got.ok()) return got.error();
  if (!*got) return Error{s.table.source_name_ + ": file is empty (expected a header line)"};
  s.fields.resize(s.field_count);
  s.table.header_ = std::move(s.fields);
  s.fields.clear();
  s.field_count = 0;
  return Status::Ok();
}

Result<bool> CsvRowReader::Next(CsvRow& row) {
  Splitter& s = *splitter_;
  if (s.failed) return *s.failed;
  int line = 0;
  Result<bool> got = s.NextLine(line);
  if (!got.ok()) {
    s.failed = got.error();
    return got.error();
  }
  if (!*got) return false;
  if (s.field_count != s.table.header_.size()) {
    s.failed = Error{s.table.source_name_ + ":" + std::to_string(line) + ": expected " +
                     std::to_string(s.table.header_.size()) + " fields as in the header, got " +
                     std::to_string(s.field_count)};
    return *s.failed;
  }
  s.fields.resize(s.field_count);
  row.line = line;
  row.fields.swap(s.fields);  // the row's old strings are reused for the next line
  s.field_count = 0;
  return true;
}

Result<std::string> CsvTable::ReadText(const std::string& path, uint64_t max_bytes) {
  std::optional<uintmax_t> size;
  Result<std::ifstream> opened = OpenChecked(path, max_bytes, size);
  if (!opened.ok()) return opened.error();
  std::ifstream& in = *opened;
  std::string text;
  if (size) {
    // One allocation of the file's size (a stream buffer and its copy would be twice it).
    text.resize(static_cast<size_t>(*size));
    in.read(text.data(), static_cast<std::streamsize>(*size));
    text.resize(static_cast<size_t>(in.gcount()));
  }
  // What is left (a file that grew, or one whose size is not known: a pipe), bounded.
  char chunk[65536];
  while (in && text.size() <= max_bytes) {
    in.read(chunk, sizeof(chunk));
    text.append(chunk, static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) return Error{path + ": read error"};
  if (text.size() > max_bytes) return TooLarge(path, max_bytes);
  return text;
}

Result<CsvTable> CsvTable::Read(const std::string& path, uint64_t max_bytes) {
  Result<std::string> text = ReadText(path, max_bytes);
  if (!text.ok()) return text.error();
  return Parse(*text, path);
}

Result<CsvTable> CsvTable::Parse(const std::string& text, const std::string& source_name) {
  CsvTable table;
  Status s = ForEachRow(
      text, source_name,
      [&](const CsvTable& header) {
        table.source_name_ = header.source_name_;
        table.header_ = header.header_;
        return Status::Ok();
      },
      [&](const CsvTable&, CsvRow& row) {
        table.rows_.push_back(std::move(row));
        return Status::Ok();
      });
  if (!s.ok()) return s.error();
  return table;
}

Status CsvTable::ForEachRow(const std::string& text, const std::string& source_name, const HeaderCallback& on_header,
                            const RowCallback& on_row) {
  Result<CsvRowReader> reader = CsvRowReader::FromText(text, source_name);
  if (!reader.ok()) return reader.error();
  if (on_header) {
    if (Status s = on_header(reader->table()); !s.ok()) return s;
  }
  CsvRow row;
  while (true) {
    Result<bool> more = reader->Next(row);
    if (!more.ok()) return more.error();
    if (!*more) return Status::Ok();
    if (Status s = on_row(reader->table(), row); !s.ok()) return s;
  }
}

std::optional<size_t> CsvTable::column(const std::string& name) const {
  for (size_t i = 0; i < header_.size(); ++i) {
    if (header_[i] == name) return i;
  }
  return std::nullopt;
}

std::string CsvTable::where(const CsvRow& row, size_t column) const {
  return source_name_ + ":" + std::to_string(row.line) + ": column '" + PrintableText(header_.at(column)) + "': ";
}

Result<double> CsvTable::number(const CsvRow& row, size_t column) const {
  const std::string& text = row.fields.at(column);
  if (text.empty()) return Error{where(row, column) + "expected a number, got an empty field"};
  errno = 0;
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || errno == ERANGE) {
    return Error{where(row, column) + "expected a number, got '" + PrintableText(text) + "'"};
  }
  if (!std::isfinite(value)) {
    return Error{where(row, column) + "expected a finite number, got '" + PrintableText(text) + "'"};
  }
  return value;
}

Result<int64_t> CsvTable::integer(const CsvRow& row, size_t column) const {
  const std::string& text = row.fields.at(column);
  if (text.empty()) return Error{where(row, column) + "expected an integer, got an empty field"};
  errno = 0;
  char* end = nullptr;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (end == text.c_str() + text.size() && errno != ERANGE) return static_cast<int64_t>(value);
  // Accept "1410.0": an integer written as a float, as pandas often writes.
  Result<double> as_double = number(row, column);
  if (as_double.ok() && *as_double == std::floor(*as_double) && std::fabs(*as_double) < 9e15) {
    return static_cast<int64_t>(*as_double);
  }
  return Error{where(row, column) + "expected an integer, got '" + PrintableText(text) + "'"};
}

}  // namespace wattcut
