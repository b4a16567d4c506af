// Writes a synthetic week in the Azure 2024 trace form (bench/trace_2024_week.h), so that anyone
// can rerun the streaming memory check (bench/trace_2024_memory.sh) without the real traces:
//   wattcut_trace_2024_generate OUT.csv [--requests N] [--days D] [--tokens-from 2023.csv] [--seed S]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench/trace_2024_week.h"

int main(int argc, char** argv) {
  wattcut::bench::TraceWeekOptions options;
  std::string path;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--requests" && has_value) {
      options.requests = std::atoll(argv[++i]);
    } else if (arg == "--days" && has_value) {
      options.days = std::atof(argv[++i]);
    } else if (arg == "--tokens-from" && has_value) {
      options.tokens_from = argv[++i];
    } else if (arg == "--seed" && has_value) {
      options.seed = std::strtoull(argv[++i], nullptr, 10);
    } else if (path.empty() && !arg.starts_with("--")) {
      path = arg;
    } else {
      std::fprintf(stderr,
                   "usage: wattcut_trace_2024_generate OUT.csv [--requests N] [--days D] [--tokens-from 2023.csv] "
                   "[--seed S]\n");
      return 2;
    }
  }
  if (path.empty()) {
    std::fprintf(stderr, "wattcut_trace_2024_generate: expected an output file\n");
    return 2;
  }
  const auto start = std::chrono::steady_clock::now();
  int64_t written = 0;
  wattcut::Status s = wattcut::bench::WriteTraceWeek(path, options, &written);
  if (!s.ok()) {
    std::fprintf(stderr, "wattcut_trace_2024_generate: error: %s\n", s.error().message.c_str());
    return 1;
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("wrote %lld requests over %.1f days to %s in %.1f s\n", static_cast<long long>(written), options.days,
              path.c_str(), wall);
  return 0;
}
