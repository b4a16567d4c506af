#include "bench/trace_2024_week.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <numbers>
#include <vector>

#include "wattcut/polca/random.h"
#include "wattcut/polca/request_trace.h"

namespace wattcut::bench {

using polca::SplitMix64;

double TraceWeekShape(double t_s) {
  const double hour = std::fmod(t_s / 3600, 24);
  const double day = std::floor(t_s / 86400);
  const double afternoon = 0.5 * (1 + std::cos(2 * std::numbers::pi * (hour - 15) / 24));
  const double morning = 0.5 * (1 + std::cos(2 * std::numbers::pi * (hour - 9) / 12));
  double shape = 0.3 + 0.55 * afternoon + 0.15 * morning * afternoon;
  const int weekday = static_cast<int>(std::fmod(day, 7));
  if (weekday == 1 || weekday == 2) shape *= 0.7;
  return std::min(1.0, shape);
}

Status WriteTraceWeek(const std::string& path, const TraceWeekOptions& options, int64_t* written) {
  Result<double> start = polca::ParseTimestamp(options.start);
  if (!start.ok()) return Error{"start: " + start.error().message};
  const double span_s = options.days * 86400;
  if (!(span_s > 0) || options.requests < 1) return Error{"expected days > 0 and at least one request"};
  std::vector<std::pair<int32_t, int32_t>> pairs;
  if (!options.tokens_from.empty()) {
    Result<polca::RequestTrace> source = polca::RequestTrace::Read(options.tokens_from);
    if (!source.ok()) return source.error();
    for (const polca::TraceRequest& r : source->requests()) pairs.emplace_back(r.context_tokens, r.generated_tokens);
  }
  // The mean of the shape over the span, by minutes, sets the peak rate for the expected count.
  double shape_sum = 0;
  int64_t minutes = 0;
  for (double t = 30; t < span_s; t += 60, ++minutes) shape_sum += TraceWeekShape(t);
  const double mean_rate = static_cast<double>(options.requests) / span_s;
  const double peak_rate = mean_rate / (shape_sum / static_cast<double>(minutes));

  std::unique_ptr<FILE, int (*)(FILE*)> out(std::fopen(path.c_str(), "wb"), &std::fclose);
  if (!out) return Error{path + ": cannot open for writing"};
  std::string buffer = "TIMESTAMP,ContextTokens,GeneratedTokens\n";
  SplitMix64 rng(options.seed);
  auto normal = [&]() {  // Box-Muller
    const double u = 1 - rng.Uniform(), v = rng.Uniform();
    return std::sqrt(-2 * std::log(u)) * std::cos(2 * std::numbers::pi * v);
  };
  int64_t count = 0;
  for (double t = 0;;) {
    t += -std::log(1 - rng.Uniform()) / peak_rate;  // thinning of a Poisson process at the peak rate
    if (t >= span_s) break;
    if (rng.Uniform() >= TraceWeekShape(t)) continue;
    int32_t context, generated;
    if (!pairs.empty()) {
      const auto& p = pairs[static_cast<size_t>(rng.Uniform() * static_cast<double>(pairs.size()))];
      context = p.first;
      generated = p.second;
    } else {
      context = static_cast<int32_t>(std::clamp(std::lround(std::exp(6.9 + 0.8 * normal())), 1L, 16000L));
      generated = static_cast<int32_t>(std::clamp(std::lround(std::exp(5.5 + 0.9 * normal())), 1L, 4000L));
    }
    buffer += polca::FormatTimestamp(*start + t);
    buffer += ',';
    buffer += std::to_string(context);
    buffer += ',';
    buffer += std::to_string(generated);
    buffer += '\n';
    ++count;
    if (buffer.size() > (4u << 20)) {
      if (std::fwrite(buffer.data(), 1, buffer.size(), out.get()) != buffer.size())
        return Error{path + ": write error"};
      buffer.clear();
    }
  }
  if (std::fwrite(buffer.data(), 1, buffer.size(), out.get()) != buffer.size()) return Error{path + ": write error"};
  if (std::fclose(out.release()) != 0) return Error{path + ": write error"};
  if (written != nullptr) *written = count;
  return Status::Ok();
}

}  // namespace wattcut::bench
