#include "wattcut/slurm/admin_comment.h"

#include <cctype>
#include <cstdio>
#include <vector>

#include "wattcut/base/index_ranges.h"

namespace wattcut::slurm {

namespace {

constexpr const char* kSeparator = "; ";

std::string EntryPrefix(const std::string& node) { return "wattcut[" + node + "]:"; }

// Whether `text` at `at` is " Key=" (an uppercase letter, then letters, digits or '/', then '=').
bool FieldStartsAt(const std::string& text, size_t at) {
  if (at + 2 >= text.size() || text[at] != ' ' || !std::isupper(static_cast<unsigned char>(text[at + 1]))) {
    return false;
  }
  for (size_t i = at + 2; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '=') return true;
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '/' && c != ':') return false;
  }
  return false;
}

}  // namespace

std::string JobEnergyEntry(const std::string& node, const AgentJobEnd& end) {
  char energy[64];
  if (end.gpu_energy_j) {
    std::snprintf(energy, sizeof(energy), "%.1f J", *end.gpu_energy_j);
  } else {
    std::snprintf(energy, sizeof(energy), "an unknown energy (a GPU has no energy counter)");
  }
  return EntryPrefix(node) + " GPUs " + IndexRangesText(end.gpus) + " used " + energy + " in " +
         std::to_string(static_cast<long long>(end.duration_s + 0.5)) + " s";
}

std::string MergeAdminComment(const std::string& existing, const std::string& node, const std::string& entry) {
  std::vector<std::string> parts;
  size_t at = 0;
  while (at < existing.size()) {
    size_t next = existing.find(kSeparator, at);
    if (next == std::string::npos) next = existing.size();
    std::string part = existing.substr(at, next - at);
    if (!part.empty() && part.rfind(EntryPrefix(node), 0) != 0) parts.push_back(std::move(part));
    at = next + std::string(kSeparator).size();
  }
  parts.push_back(entry);
  std::string merged;
  for (const std::string& part : parts) merged += (merged.empty() ? "" : kSeparator) + part;
  return merged;
}

std::string AdminCommentOf(const std::string& show_job_line) {
  const std::string key = "AdminComment=";
  size_t at = show_job_line.find(" " + key);
  if (at != std::string::npos) {
    at += 1;
  } else if (show_job_line.rfind(key, 0) == 0) {
    at = 0;
  } else {
    return "";
  }
  const size_t start = at + key.size();
  size_t end = start;
  while (end < show_job_line.size() && !FieldStartsAt(show_job_line, end) && show_job_line[end] != '\n') ++end;
  std::string value = show_job_line.substr(start, end - start);
  while (!value.empty() && value.back() == ' ') value.pop_back();
  return value == "(null)" ? "" : value;
}

}  // namespace wattcut::slurm
