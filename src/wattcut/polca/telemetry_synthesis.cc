#include "wattcut/polca/telemetry_synthesis.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "wattcut/base/fixed_decimals.h"
#include "wattcut/polca/arrival_expansion.h"
#include "wattcut/polca/inference_power_model.h"
#include "wattcut/polca/random.h"
#include "wattcut/polca/server_model.h"

namespace wattcut::polca {
namespace {

// Standard normal draws (Box-Muller) from the project's portable generator.
class GaussianNoise {
 public:
  explicit GaussianNoise(uint64_t seed) : rng_(seed, 0x6e6f697365ULL) {}
  double Next() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double u1 = std::max(rng_.Uniform(), 1e-300), u2 = rng_.Uniform();
    const double r = std::sqrt(-2 * std::log(u1));
    spare_ = r * std::sin(2 * std::numbers::pi * u2);
    has_spare_ = true;
    return r * std::cos(2 * std::numbers::pi * u2);
  }

 private:
  SplitMix64 rng_;
  bool has_spare_ = false;
  double spare_ = 0;
};

}  // namespace

std::vector<Arrival> CalibrationRunArrivals(const RequestTrace& trace, const CalibrationRunSpec& spec) {
  ExpansionOptions o;
  o.duration_s = spec.duration_s;
  o.peak_rate_per_s = spec.rate_per_s;
  o.diurnal_trough = 1.0;
  o.low_priority_share = 0;
  o.seed = spec.seed;
  std::vector<Arrival> kept;
  for (const Arrival& a : ArrivalExpansion(trace, o).All()) {
    const double into_hour_s = std::fmod(a.time_s, 3600);
    if (into_hour_s >= spec.drain_at_minute * 60 && into_hour_s < spec.drain_at_minute * 60 + spec.drain_s) continue;
    kept.push_back(a);
  }
  return kept;
}

std::vector<ClockStep> ClockCycle(const std::vector<double>& clocks_mhz, double every_s, double duration_s) {
  std::vector<ClockStep> steps;
  if (clocks_mhz.empty() || !(every_s > 0)) return steps;
  for (int64_t i = 0; static_cast<double>(i) * every_s < duration_s; ++i) {
    steps.push_back({static_cast<double>(i) * every_s, clocks_mhz[static_cast<size_t>(i) % clocks_mhz.size()]});
  }
  return steps;
}

Result<SynthesizedTelemetry> SynthesizeServerTelemetry(const PolcaConfig& config, const std::vector<Arrival>& arrivals,
                                                       const std::vector<ClockStep>& clocks,
                                                       const SynthesisOptions& options) {
  for (size_t i = 0; i < clocks.size(); ++i) {
    if (clocks[i].freq_mhz < config.gpu.min_freq_mhz || clocks[i].freq_mhz > config.gpu.max_freq_mhz) {
      return Error{"clock step " + std::to_string(i) + ": " + FixedDecimals(clocks[i].freq_mhz, 0) +
                   " MHz is outside the GPU's " + FixedDecimals(config.gpu.min_freq_mhz, 0) + "-" +
                   FixedDecimals(config.gpu.max_freq_mhz, 0) + " MHz"};
    }
    if (i > 0 && !(clocks[i].from_s > clocks[i - 1].from_s)) {
      return Error{"clock step " + std::to_string(i) + ": from_s must increase"};
    }
  }
  if (!(options.power_sample_s > 0) || !(options.load_sample_s > 0) || !(options.duration_s > 0) ||
      !(options.power_average_s >= options.power_sample_s)) {
    return Error{"synthesis: sample periods and the duration must be > 0, the average window >= the power sample"};
  }
  const InferencePowerModel model(config);
  const InferenceServerSettings server_settings(model, config);
  InferenceServer server(server_settings, Priority::kHigh, EngineCounters::kKept);
  ServedLog log;
  GaussianNoise noise(options.seed);
  const int gpus = config.server.gpus;

  SynthesizedTelemetry out;
  out.power.source = out.instant_power.source = "synthesized " + options.server;
  out.power.format = out.instant_power.format = "nvidia-smi";
  out.power.power_field = "power.draw.average";
  out.instant_power.power_field = "power.draw.instant";
  for (int g = 0; g < gpus; ++g) {
    out.power.gpus.push_back({options.server, std::to_string(g), {}});
    out.instant_power.gpus.push_back({options.server, std::to_string(g), {}});
  }
  out.power.servers.push_back({options.server, {}});
  out.load.source = "synthesized " + options.server;
  out.load.format = "vllm-csv";
  out.load.servers.push_back({options.server, {}});

  // GPU energy (J, one GPU) at each power sample, for the trailing averages.
  const auto samples_per_average = static_cast<size_t>(std::lround(options.power_average_s / options.power_sample_s));
  std::vector<double> energy_at_sample;
  double energy_j = 0;
  double last_t = 0;
  size_t next_arrival = 0, next_clock = 0;
  int64_t power_tick = 1, load_tick = 0;
  SplitMix64 jitter(options.seed, 0x6a6974746572ULL);
  auto scrape_time = [&](int64_t tick) {
    const double t = static_cast<double>(tick) * options.load_sample_s;
    return tick == 0 ? t : t + options.load_jitter_s * (2 * jitter.Uniform() - 1);
  };
  double t_load = scrape_time(0);
  const double end_s = options.duration_s;
  if (!clocks.empty() && clocks[0].from_s <= 0) {
    server.SetLimits({clocks[0].freq_mhz, 0}, 0);
    next_clock = 1;
  }
  constexpr double kInf = std::numeric_limits<double>::infinity();
  while (true) {
    const double t_arrival = next_arrival < arrivals.size() ? arrivals[next_arrival].time_s : kInf;
    const double t_clock = next_clock < clocks.size() ? clocks[next_clock].from_s : kInf;
    const double t_power = static_cast<double>(power_tick) * options.power_sample_s;
    const double t_event = server.next_event_s();
    const double t = std::min({t_arrival, t_clock, t_power, t_load, t_event});
    if (t > end_s + 1e-9) break;
    energy_j += server.gpu_power_w() * (t - last_t);
    last_t = t;
    if (t == t_event) {
      server.HandleEvent(t, log);
    } else if (t == t_arrival) {
      server.Arrive(arrivals[next_arrival++], t);
    } else if (t == t_clock) {
      server.SetLimits({clocks[next_clock++].freq_mhz, 0}, t);
    } else if (t == t_load) {
      const ServerCounters c = server.counters(t);
      telemetry::ServingLoadSample s;
      s.time_s = options.start_unix_s + t;
      s.running = server.in_prefill() + server.decoding();
      s.waiting = server.waiting();
      s.prompt_tokens = c.prompt_tokens;
      s.generation_tokens = static_cast<double>(c.first_tokens) + std::floor(c.decode_tokens + 1e-9);
      s.first_tokens = static_cast<double>(c.first_tokens);
      s.finished_requests = static_cast<double>(c.finished);
      s.iterations = std::floor(c.steps + 1e-9);
      s.iteration_tokens = s.prompt_tokens + s.generation_tokens;
      out.load.servers[0].samples.push_back(s);
      t_load = scrape_time(++load_tick);
    } else {
      energy_at_sample.push_back(energy_j);
      const size_t i = energy_at_sample.size() - 1;
      const double window_s =
          std::min(static_cast<double>(i + 1), static_cast<double>(samples_per_average)) * options.power_sample_s;
      const double before = i + 1 >= samples_per_average + 1 ? energy_at_sample[i - samples_per_average] : 0.0;
      const double average_w = (energy_j - before) / window_s;
      const double instant_w = server.gpu_power_w();
      for (int g = 0; g < gpus; ++g) {
        const double avg = std::max(0.0, average_w + options.power_noise_w * noise.Next());
        const double inst = std::max(0.0, instant_w + options.power_noise_w * noise.Next());
        out.power.gpus[g].samples.push_back({options.start_unix_s + t, avg, server.freq_mhz()});
        out.instant_power.gpus[g].samples.push_back({options.start_unix_s + t, inst, server.freq_mhz()});
      }
      const double server_w = std::max(0.0, model.ServerW(average_w) + options.server_noise_w * noise.Next());
      out.power.servers[0].samples.push_back({options.start_unix_s + t, server_w});
      ++power_tick;
    }
  }
  return out;
}

}  // namespace wattcut::polca
