#include "wattcut/polca/calibration_windows.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "wattcut/base/fixed_decimals.h"
#include "wattcut/base/order_statistics.h"

namespace wattcut::polca {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A time series of (time, value[, clock]) read at points or over windows.
struct Reading {
  double value = kNaN;
  double clock_min = kNaN, clock_max = kNaN, clock_sum = 0;
  int clocks = 0;
};

template <typename Sample>
void AddClock(Reading& r, const Sample& s) {
  double c = kNaN;
  if constexpr (requires { s.sm_clock_mhz; }) c = s.sm_clock_mhz;
  if (std::isnan(c) || c <= 0) return;  // 0 MHz: not a reading (see BuildCalibrationWindows)
  r.clock_min = std::isnan(r.clock_min) ? c : std::min(r.clock_min, c);
  r.clock_max = std::isnan(r.clock_max) ? c : std::max(r.clock_max, c);
  r.clock_sum += c;
  ++r.clocks;
}

// An averaging sensor's value at `t` (the mean of the sensor's window before t), interpolated
// between the samples around t; NaN when they are further apart than the gap allowed. `cursor`
// only moves forward: callers read in increasing time.
template <typename Sample>
double ReadAt(const std::vector<Sample>& samples, size_t& cursor, double t, double max_gap_s, Reading& r) {
  while (cursor < samples.size() && samples[cursor].time_s < t - 1e-6) ++cursor;
  const Sample* after = cursor < samples.size() ? &samples[cursor] : nullptr;
  const Sample* before = cursor > 0 ? &samples[cursor - 1] : nullptr;
  if (after && std::abs(after->time_s - t) <= 1e-6) {
    AddClock(r, *after);
    return after->power_w;
  }
  if (!after || !before || after->time_s - before->time_s > max_gap_s + 1e-9) return kNaN;
  const double w = (t - before->time_s) / (after->time_s - before->time_s);
  AddClock(r, *before);
  AddClock(r, *after);
  return before->power_w * (1 - w) + after->power_w * w;
}

// The series' mean over [from, to]. An averaging sensor is read at n points ending at `to`, n =
// the window's length in sensor windows (at least 1), each standing for the sensor window before
// it; an instant sensor is the mean of the samples in (from, to].
template <typename Sample>
Reading Read(const std::vector<Sample>& samples, size_t& cursor, double from, double to, const WindowOptions& o) {
  Reading r;
  if (o.sensor_average_s > 0) {
    const int n = std::max(1, static_cast<int>(std::lround((to - from) / o.sensor_average_s)));
    double sum = 0;
    for (int j = 0; j < n; ++j) {
      const double v = ReadAt(samples, cursor, from + (to - from) * (j + 1) / n, o.max_power_gap_s, r);
      if (std::isnan(v)) return Reading{};
      sum += v;
    }
    r.value = sum / n;
    return r;
  }
  while (cursor < samples.size() && samples[cursor].time_s <= from + 1e-9) ++cursor;
  double sum = 0;
  int n = 0;
  for (size_t i = cursor; i < samples.size() && samples[i].time_s <= to + 1e-9; ++i) {
    sum += samples[i].power_w;
    AddClock(r, samples[i]);
    ++n;
  }
  if (n > 0) r.value = sum / n;
  return r;
}

}  // namespace

Result<CalibrationWindows> JoinRuns(std::vector<CalibrationWindows> runs) {
  if (runs.empty()) return Error{"no runs to calibrate"};
  if (runs.size() == 1) return std::move(runs.front());
  CalibrationWindows out = runs.front();
  out.windows.clear();
  out.notes.clear();
  out.run_starts.clear();
  out.windows_without_power = out.scrape_gaps = 0;
  for (size_t r = 0; r < runs.size(); ++r) {
    CalibrationWindows& run = runs[r];
    if (run.gpus != out.gpus) {
      return Error{"run " + std::to_string(r + 1) + " has " + std::to_string(run.gpus) + " GPUs, run 1 has " +
                   std::to_string(out.gpus) + ": runs fitted together must be of one setup (GPU, model, GPUs)"};
    }
    out.run_starts.push_back(out.windows.size());
    out.windows.insert(out.windows.end(), run.windows.begin(), run.windows.end());
    for (const std::string& n : run.notes) out.notes.push_back("run " + std::to_string(r + 1) + ": " + n);
    out.has_server_power = out.has_server_power && run.has_server_power;
    out.has_clock = out.has_clock || run.has_clock;
    out.has_decode_batch = out.has_decode_batch && run.has_decode_batch;
    out.has_prompt_tokens = out.has_prompt_tokens && run.has_prompt_tokens;
    out.has_generation_tokens = out.has_generation_tokens && run.has_generation_tokens;
    out.windows_without_power += run.windows_without_power;
    out.scrape_gaps += run.scrape_gaps;
  }
  return out;
}

double SensorAverageSecondsFor(const std::string& power_field, const std::string& gpu_name) {
  if (power_field.rfind("power.draw.instant", 0) == 0) return 0;
  if (power_field.rfind("power.draw.average", 0) == 0) return 1.0;
  return gpu_name.find("A100") != std::string::npos ? 0 : 1.0;
}

Result<CalibrationWindows> BuildCalibrationWindows(const std::vector<telemetry::GpuPowerSeries>& gpus,
                                                   const telemetry::ServerPowerSeries* server_power,
                                                   const telemetry::ServingLoadSeries& load,
                                                   const WindowOptions& options) {
  CalibrationWindows out;
  out.gpus = static_cast<int>(gpus.size());
  if (gpus.empty()) return Error{"no GPU power series for server '" + load.server + "'"};
  const std::vector<telemetry::ServingLoadSample>& ls = load.samples;
  if (ls.size() < 2) return Error{"the load of server '" + load.server + "' has fewer than two samples"};
  const telemetry::ServingLoadSample& first = ls.front();
  const bool has_running = !std::isnan(first.running), has_iterations = !std::isnan(first.iterations);
  if (!has_running && !has_iterations) {
    return Error{"the load of server '" + load.server +
                 "' does not say when the engine had work: it needs vllm:num_requests_running or "
                 "vllm:iteration_tokens_total_count from its first sample on"};
  }
  out.has_prompt_tokens = !std::isnan(first.prompt_tokens);
  out.has_generation_tokens = !std::isnan(first.generation_tokens);
  out.has_decode_batch = has_running && !std::isnan(first.first_tokens) && !std::isnan(first.finished_requests);
  out.has_server_power = server_power != nullptr && !server_power->samples.empty();
  out.scrape_interval_s = MedianTimeStep(ls);
  out.power_sample_interval_s = MedianTimeStep(gpus[0].samples);

  // Decode batch at each scrape: first tokens - finished + an offset fixed at a scrape where
  // nothing runs (or so that the smallest is 0).
  std::vector<double> batch(ls.size(), 0.0);
  if (out.has_decode_batch) {
    double offset = std::numeric_limits<double>::infinity();
    for (const auto& s : ls) {
      if (s.running == 0) {
        offset = -(s.first_tokens - s.finished_requests);
        break;
      }
    }
    if (std::isinf(offset)) {
      double lowest = std::numeric_limits<double>::infinity();
      for (const auto& s : ls) lowest = std::min(lowest, s.first_tokens - s.finished_requests);
      offset = -lowest;
      out.notes.push_back("no scrape with nothing running: the decode batch is anchored at its smallest value");
    }
    for (size_t i = 0; i < ls.size(); ++i) {
      batch[i] = std::clamp(ls[i].first_tokens - ls[i].finished_requests + offset, 0.0, ls[i].running);
    }
  } else {
    for (size_t i = 0; i < ls.size(); ++i) batch[i] = has_running ? ls[i].running : 0;
    out.notes.push_back(
        "the load has no vllm:time_to_first_token_seconds_count or vllm:request_success_total: the decode batch is "
        "taken as every running request and prefills in progress at a scrape are not seen");
  }

  // The same GPUs throughout: a GPU whose readings begin well after the others' (it joined the
  // recording) or end well before would be counted in server.gpus for a server it was only part of
  // (a file with 8 GPUs and a 9th from its middle once wrote server.gpus = 9).
  {
    double first_s = std::numeric_limits<double>::infinity(), last_s = -first_s;
    for (const telemetry::GpuPowerSeries& g : gpus) {
      if (g.samples.empty()) continue;
      first_s = std::min(first_s, g.samples.front().time_s);
      last_s = std::max(last_s, g.samples.back().time_s);
    }
    // Ten readings' worth, at least a minute: a GPU whose first reading is a few periods late is
    // the same recording.
    const double slack_s = std::max(60.0, 10 * out.power_sample_interval_s);
    for (const telemetry::GpuPowerSeries& g : gpus) {
      if (g.samples.empty()) continue;
      const double late_s = g.samples.front().time_s - first_s, early_s = last_s - g.samples.back().time_s;
      if (late_s > slack_s || early_s > slack_s) {
        return Error{"the power of server '" + load.server + "': GPU " + g.gpu + "'s readings " +
                     (late_s > slack_s ? "begin " + FixedDecimals(late_s, 0) + " s after"
                                       : "end " + FixedDecimals(early_s, 0) + " s before") +
                     " the other GPUs' (a GPU joined or left the recording): calibrate needs the same GPUs "
                     "throughout; cut the recording to the time every GPU is in it"};
      }
    }
  }

  // An SM clock of 0 MHz is no clock a GPU serves at: the field is not reported (some GPUs and
  // drivers write 0). In every reading it is refused by name, rather than fitted (the fit then
  // found "not a consistent config"); in some, those readings' clocks are left out.
  size_t clocked = 0, zero_clock = 0;
  for (const telemetry::GpuPowerSeries& g : gpus) {
    for (const auto& sample : g.samples) {
      if (std::isnan(sample.sm_clock_mhz)) continue;
      ++clocked;
      if (sample.sm_clock_mhz <= 0) ++zero_clock;
    }
  }
  if (clocked > 0 && zero_clock == clocked) {
    return Error{"the power of server '" + load.server + "' has an SM clock of 0 MHz in every one of its " +
                 std::to_string(clocked) +
                 " readings: this GPU or driver does not report it. Record clocks.sm (or clocks.current.sm) "
                 "where it is reported, or leave the field out to take every window at the maximum clock"};
  }
  if (zero_clock > 0) {
    out.notes.push_back(std::to_string(zero_clock) + " of " + std::to_string(clocked) +
                        " power readings had an SM clock of 0 MHz: their clock was left out");
  }

  std::vector<size_t> cursors(gpus.size(), 0);
  size_t server_cursor = 0;
  bool any_clock = false;
  for (size_t i = 1; i < ls.size(); ++i) {
    const auto& a = ls[i - 1];
    const auto& b = ls[i];
    CalibrationWindow w;
    w.start_s = a.time_s;
    w.end_s = b.time_s;
    if (w.length_s() > 2 * out.scrape_interval_s) {
      ++out.scrape_gaps;
      continue;
    }
    double sum = 0;
    double cmin = kNaN, cmax = kNaN, csum = 0;
    int cn = 0;
    bool missing = false;
    for (size_t g = 0; g < gpus.size(); ++g) {
      const Reading r = Read(gpus[g].samples, cursors[g], w.start_s, w.end_s, options);
      if (std::isnan(r.value)) {
        missing = true;
        break;
      }
      sum += r.value;
      if (r.clocks > 0) {
        cmin = std::isnan(cmin) ? r.clock_min : std::min(cmin, r.clock_min);
        cmax = std::isnan(cmax) ? r.clock_max : std::max(cmax, r.clock_max);
        csum += r.clock_sum;
        cn += r.clocks;
      }
    }
    if (missing) {
      ++out.windows_without_power;
      continue;
    }
    w.gpu_w = sum / static_cast<double>(gpus.size());
    if (cn > 0) {
      any_clock = true;
      w.freq_mhz = csum / cn;
      w.clock_steady = cmax - cmin <= 0.02 * cmax;
    } else {
      w.freq_mhz = kNaN;
    }
    if (out.has_server_power) {
      const Reading r = Read(server_power->samples, server_cursor, w.start_s, w.end_s, options);
      if (!std::isnan(r.value)) w.server_w = r.value;
    }
    // A counter the file lacks, or a sample without it, adds nothing (NaN compares false).
    const auto increase = [](double from, double to) { return to > from ? to - from : 0.0; };
    // Prompt tokens found in the prefix cache are not computed: only the rest draw prefill power.
    w.prompt_tokens = std::max(
        0.0, increase(a.prompt_tokens, b.prompt_tokens) - increase(a.cached_prompt_tokens, b.cached_prompt_tokens));
    w.generated_tokens = increase(a.generation_tokens, b.generation_tokens);
    w.iterations = increase(a.iterations, b.iterations);
    w.prefilled_requests = out.has_decode_batch ? std::max(0.0, b.first_tokens - a.first_tokens) : 0;
    w.decode_batch_start = batch[i - 1];
    w.decode_batch_end = batch[i];
    if (out.has_decode_batch) {
      w.prefilling_start = static_cast<int>(std::max(0L, std::lround(a.running - batch[i - 1])));
      w.prefilling_end = static_cast<int>(std::max(0L, std::lround(b.running - batch[i])));
    } else if (w.prompt_tokens > 0) {
      w.prefilled_requests = 1;  // without the first-token counter: one prefill per window
    }
    const double waiting_a = std::isnan(a.waiting) ? 0 : a.waiting;
    const double waiting_b = std::isnan(b.waiting) ? 0 : b.waiting;
    w.waiting_start = waiting_a;
    w.waiting_end = waiting_b;
    const bool work_inside = w.generated_tokens > 0 || w.prompt_tokens > 0 || w.iterations > 0;
    if (has_running) {
      const bool busy_a = a.running > 0 || waiting_a > 0, busy_b = b.running > 0 || waiting_b > 0;
      w.busy_share = (busy_a ? 0.5 : 0.0) + (busy_b ? 0.5 : 0.0);
      if (w.busy_share == 0 && work_inside) w.busy_share = 0.5;
    } else {
      w.busy_share = work_inside || waiting_a > 0 || waiting_b > 0 ? 1.0 : 0.0;
    }
    w.idle = w.busy_share == 0;
    out.windows.push_back(w);
  }
  out.has_clock = any_clock;
  if (out.windows.empty()) {
    // Too few power readings say so, rather than that the times differ.
    size_t readings = 0;
    double power_from = std::numeric_limits<double>::infinity(), power_to = -power_from;
    for (const telemetry::GpuPowerSeries& g : gpus) {
      readings = std::max(readings, g.samples.size());
      if (g.samples.empty()) continue;
      power_from = std::min(power_from, g.samples.front().time_s);
      power_to = std::max(power_to, g.samples.back().time_s);
    }
    const std::string spans =
        "(power: " + std::to_string(readings) + (readings == 1 ? " reading" : " readings") + " a GPU" +
        (readings > 0 ? ", " + FixedDecimals(power_from, 3) + "-" + FixedDecimals(power_to, 3) + " s" : std::string()) +
        "; load " + FixedDecimals(ls.front().time_s, 3) + "-" + FixedDecimals(ls.back().time_s, 3) + " s)";
    if (readings < 2 || power_to - power_from < out.scrape_interval_s) {
      return Error{"the power of server '" + load.server + "' has too few readings to cover one load window " + spans +
                   ": record power for as long as the load, a reading every second or more often"};
    }
    // How far apart they begin, in hours and minutes: a whole number of hours (or half hours) is a
    // UTC offset read wrongly.
    const double apart_s = ls.front().time_s - power_from;
    const long minutes = std::lround(std::abs(apart_s) / 60);
    const std::string apart = std::to_string(minutes / 60) + " h " + std::to_string(minutes % 60) + " min";
    return Error{"the power and the load of server '" + load.server + "' do not overlap in time " + spans +
                 ": the power begins " + apart + (apart_s > 0 ? " before" : " after") +
                 " the load; is nvidia-smi's UTC offset (--utc-offset) the recording host's?"};
  }
  if (out.windows_without_power > 0) {
    out.notes.push_back(std::to_string(out.windows_without_power) +
                        " load windows had no power reading of every GPU near them and were left out");
  }
  if (out.scrape_gaps > 0) {
    out.notes.push_back(std::to_string(out.scrape_gaps) +
                        " gaps between load scrapes longer than twice the median interval were left out");
  }
  return out;
}

}  // namespace wattcut::polca
