#include "wattcut/base/csv_reader.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "wattcut/base/printable_text.h"

namespace wattcut {
namespace {

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

}  // namespace

Result<std::string> CsvTable::ReadText(const std::string& path, uint64_t max_bytes) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return Error{path + ": is a directory, expected a CSV file"};
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path + ": cannot open file for reading"};
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec && size > max_bytes) {
    return Error{path + ": file is " + std::to_string(size) + " bytes, more than the " + std::to_string(max_bytes) +
                 " this reader accepts"};
  }
  std::string text;
  if (!ec) {
    // One allocation of the file's size (a stream buffer and its copy would be twice it).
    text.resize(static_cast<size_t>(size));
    in.read(text.data(), static_cast<std::streamsize>(size));
    text.resize(static_cast<size_t>(in.gcount()));
  }
  // What is left (a file that grew, or one whose size is not known: a pipe), bounded.
  char chunk[65536];
  while (in && text.size() <= max_bytes) {
    in.read(chunk, sizeof(chunk));
    text.append(chunk, static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) return Error{path + ": read error"};
  if (text.size() > max_bytes) {
    return Error{path + ": file is more than the " + std::to_string(max_bytes) + " bytes this reader accepts"};
  }
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
  CsvTable table;
  table.source_name_ = source_name;

  CsvRow row;
  std::vector<std::string>& fields = row.fields;
  std::string field;
  bool in_quotes = false;
  bool row_has_content = false;
  int line = 1;
  int row_start_line = 1;
  bool have_header = false;

  auto finish_row = [&]() -> Status {
    fields.push_back(Trim(field));
    field.clear();
    bool blank = !row_has_content;
    row_has_content = false;
    if (blank) {
      fields.clear();
      return Status::Ok();
    }
    if (!have_header) {
      table.header_ = std::move(fields);
      have_header = true;
      fields.clear();
      return on_header ? on_header(table) : Status::Ok();
    }
    if (fields.size() != table.header_.size()) {
      return Error{source_name + ":" + std::to_string(row_start_line) + ": expected " +
                   std::to_string(table.header_.size()) + " fields as in the header, got " +
                   std::to_string(fields.size())};
    }
    row.line = row_start_line;
    Status s = on_row(table, row);
    fields.clear();  // the callback may have moved them away
    return s;
  };

  // A UTF-8 byte order mark is an encoding marker, not part of the first column's name.
  const size_t start = text.starts_with("\xEF\xBB\xBF") ? 3 : 0;
  for (size_t i = start; i < text.size(); ++i) {
    char c = text[i];
    if (in_quotes) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field.push_back('"');
          ++i;
        } else {
          in_quotes = false;
        }
      } else {
        if (c == '\n') ++line;
        field.push_back(c);
      }
      continue;
    }
    switch (c) {
      case '"':
        in_quotes = true;
        row_has_content = true;
        break;
      case ',':
        fields.push_back(Trim(field));
        field.clear();
        row_has_content = true;
        break;
      case '\r':
        break;
      case '\n': {
        Status s = finish_row();
        if (!s.ok()) return s.error();
        ++line;
        row_start_line = line;
        break;
      }
      default:
        if (c != ' ' && c != '\t') row_has_content = true;
        field.push_back(c);
    }
  }
  if (in_quotes) {
    return Error{source_name + ":" + std::to_string(row_start_line) + ": unclosed double quote"};
  }
  Status s = finish_row();
  if (!s.ok()) return s.error();
  if (!have_header) return Error{source_name + ": file is empty (expected a header line)"};
  return Status::Ok();
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
