#include "wattcut/polca/request_log.h"

#include <algorithm>
#include <set>

#include "wattcut/base/csv_reader.h"
#include "wattcut/base/printable_text.h"
#include "wattcut/polca/trace_row_check.h"

namespace wattcut::polca {
namespace {

constexpr uint64_t kMaxRequestLogBytes = kCsvMaxFileBytes;  // held in memory while read

}  // namespace

bool LooksLikeRequestLog(const std::string& text) {
  std::string first = text.substr(0, std::min<size_t>(text.find('\n'), 512));
  if (first.rfind("\xEF\xBB\xBF", 0) == 0) first = first.substr(3);
  return first.rfind("TIMESTAMP", 0) == 0;
}

Result<ServerRequestLog> ParseRequestLog(const std::string& text, const std::string& source_name,
                                         const std::string& server) {
  ServerRequestLog out;
  out.server = server;
  std::optional<TraceRowCheck> check;
  size_t server_col = 0;
  std::set<std::string> seen;
  bool have_start = false;
  auto on_header = [&](const CsvTable& table) -> Status {
    Result<TraceRowCheck> c =
        TraceRowCheck::ForHeader(table, {7 * 86400.0, "7 days", "a calibration run is hours, not weeks"}, {"server"});
    if (!c.ok()) return c.error();
    check = std::move(*c);
    std::optional<size_t> s = table.column("server");
    if (!s) return Error{source_name + ": missing column 'server' (a request log names each request's server)"};
    server_col = *s;
    return Status{};
  };
  auto on_row = [&](const CsvTable& table, CsvRow& row) -> Status {
    Result<TraceRequest> r = check->Check(table, row);
    if (!r.ok()) return r.error();
    ++out.rows;
    const std::string& name = row.fields[server_col];
    if (name.empty()) return Error{table.where(row, server_col) + "expected the request's server, got nothing"};
    if (seen.size() < 10000) seen.insert(name);
    if (out.server.empty() && seen.size() > 1) {
      return Error{table.where(row, server_col) + "the log holds more than one server ('" +
                   PrintableText(*seen.begin()) + "', '" + PrintableText(name) + "'): say which with --server"};
    }
    if (!out.server.empty() && name != out.server) return Status{};
    const double unix_s = check->start_utc_s() + r->arrival_s;
    if (!have_start) {
      out.start_unix_s = unix_s;
      have_start = true;
    }
    out.arrivals.push_back({unix_s - out.start_unix_s, r->context_tokens, r->generated_tokens, Priority::kHigh});
    return Status{};
  };
  if (Status st = CsvTable::ForEachRow(text, source_name, on_header, on_row); !st.ok()) return st.error();
  out.servers_seen.assign(seen.begin(), seen.end());
  if (out.server.empty() && !seen.empty()) out.server = *seen.begin();
  if (out.arrivals.empty()) {
    std::string names;
    for (size_t i = 0; i < out.servers_seen.size() && i < 5; ++i)
      names += (i ? ", " : "") + PrintableText(out.servers_seen[i]);
    return Error{source_name + ": no request of server '" + PrintableText(out.server) + "' (the log has " + names +
                 ")"};
  }
  return out;
}

Result<ServerRequestLog> ReadRequestLog(const std::string& path, const std::string& server) {
  Result<std::string> text = CsvTable::ReadText(path, kMaxRequestLogBytes);
  if (!text.ok()) return text.error();
  return ParseRequestLog(*text, path, server);
}

}  // namespace wattcut::polca
