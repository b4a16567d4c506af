#include "wattcut/emulate/straggler_emulation.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "wattcut/emulate/zeus_global.h"
#include "wattcut/plan/all_max.h"

namespace wattcut {

Result<std::vector<double>> ParseSlowdowns(const std::string& text) {
  auto parse = [&](const std::string& part, double& out) {
    errno = 0;
    char* end = nullptr;
    out = std::strtod(part.c_str(), &end);
    return !part.empty() && end == part.c_str() + part.size() && errno == 0 && std::isfinite(out);
  };
  const std::string expected = "expected a factor such as 1.2 or a range start:stop:step such as 1.0:1.5:0.01";
  std::vector<std::string> parts;
  size_t begin = 0;
  while (true) {
    size_t colon = text.find(':', begin);
    parts.push_back(text.substr(begin, colon == std::string::npos ? std::string::npos : colon - begin));
    if (colon == std::string::npos) break;
    begin = colon + 1;
  }
  std::vector<double> values;
  if (parts.size() == 1) {
    double k = 0;
    if (!parse(parts[0], k)) return Error{"--slowdown '" + text + "': " + expected};
    values.push_back(k);
  } else if (parts.size() == 3) {
    double start = 0, stop = 0, step = 0;
    if (!parse(parts[0], start) || !parse(parts[1], stop) || !parse(parts[2], step)) {
      return Error{"--slowdown '" + text + "': " + expected};
    }
    if (!(step > 0)) return Error{"--slowdown '" + text + "': the step must be > 0"};
    if (stop < start) return Error{"--slowdown '" + text + "': stop must be >= start"};
    const double count = std::floor((stop - start) / step + 1e-9) + 1;
    if (count > 100000) return Error{"--slowdown '" + text + "': more than 100000 factors"};
    for (int i = 0; i < static_cast<int>(count); ++i) values.push_back(start + i * step);
  } else {
    return Error{"--slowdown '" + text + "': " + expected};
  }
  for (double k : values) {
    if (k < 1.0 - 1e-12) {
      return Error{"--slowdown '" + text + "': a straggler slowdown must be >= 1 (1 = no straggler), got " +
                   std::to_string(k)};
    }
  }
  return values;
}

Result<EmulationResult> EmulateStragglers(const Profile& profile, const Frontier& frontier, const EnvPipePlan& envpipe,
                                          const EmulationSetup& setup) {
  if (setup.num_pipelines < 1) return Error{"--pipelines must be >= 1"};
  if (setup.tensor_parallel < 1) return Error{"--tp must be >= 1"};
  if (!(setup.time_scale > 0)) return Error{"--time-scale must be > 0"};
  if (setup.slowdowns.empty()) return Error{"no slowdown factors given"};
  for (double k : setup.slowdowns) {
    if (k < 1.0 - 1e-12) return Error{"a straggler slowdown must be >= 1, got " + std::to_string(k)};
  }
  if (frontier.points().empty()) return Error{"the frontier is empty"};
  const PipelineSchedule& schedule = frontier.setup().schedule;
  const double stages = static_cast<double>(schedule.size());
  const double pb = setup.p2p_power_w;
  const double n_others = setup.num_pipelines - 1;
  const double time_scale = setup.time_scale;
  const double energy_scale = setup.time_scale * setup.tensor_parallel;

  const FrontierPoint& fastest = frontier.points()[frontier.fastest_index()];
  const FrontierPoint& cheapest = frontier.points()[frontier.min_energy_index()];
  const double t_min = fastest.time_s;
  const double all_max_energy = AllMaxEnergy(profile, schedule, t_min, pb);
  const ZeusGlobal zeus_global(profile, schedule, pb);

  EmulationResult out;
  out.t_min_s = t_min * time_scale;
  out.t_star_s = cheapest.time_s * time_scale;
  out.energy_t_min_j = fastest.energy_j * energy_scale;
  out.energy_t_star_j = cheapest.energy_j * energy_scale;
  out.all_max_energy_j = all_max_energy * energy_scale;
  out.intrinsic_saving_percent = 100 * (1 - fastest.energy_j / all_max_energy);
  out.envpipe_time_s = envpipe.iteration_time_s * time_scale;
  out.envpipe_energy_j = envpipe.energy_j * energy_scale;
  out.envpipe_intrinsic_saving_percent =
      100 * (1 - envpipe.energy_j / AllMaxEnergy(profile, schedule, envpipe.iteration_time_s, pb));

  for (double k : setup.slowdowns) {
    // Job energy for a method whose fastest plan is (t_fast, e_fast) and whose
    // non-stragglers run (t_plan, e_plan); unscaled.
    auto job = [&](double t_fast, double e_fast, double t_plan, double e_plan) {
      double end = k * t_fast;
      return k * e_fast + n_others * (e_plan + stages * pb * std::max(0.0, end - t_plan));
    };
    const double all_max_job = job(t_min, all_max_energy, t_min, all_max_energy);
    const FrontierPoint& chosen = frontier.points()[frontier.IndexForIterationTime(k * t_min)];
    UniformFrequencyPlan zeus = zeus_global.Plan(k * t_min);
    struct Row {
      const char* name;
      double t_fast, energy, plan_time;
    };
    const Row rows[] = {
        {"allmax", t_min, all_max_job, t_min},
        {"perseus-intrinsic", t_min, job(t_min, fastest.energy_j, t_min, fastest.energy_j), t_min},
        {"perseus", t_min, job(t_min, fastest.energy_j, chosen.time_s, chosen.energy_j), chosen.time_s},
        {"envpipe", envpipe.iteration_time_s,
         job(envpipe.iteration_time_s, envpipe.energy_j, envpipe.iteration_time_s, envpipe.energy_j),
         envpipe.iteration_time_s},
        // The straggler runs at max frequency (it cannot go faster); the others at Zeus's frequency.
        {"zeus-global", t_min, k * all_max_energy + n_others * zeus.energy_j, zeus.iteration_time_s},
    };
    for (const Row& row : rows) {
      MethodResult r;
      r.method = row.name;
      r.slowdown = k;
      r.iteration_time_s = k * row.t_fast * time_scale;
      r.energy_j = row.energy * energy_scale;
      r.saving_percent = 100 * (1 - row.energy / all_max_job);
      r.plan_time_s = row.plan_time * time_scale;
      out.results.push_back(r);
    }
  }
  return out;
}

}  // namespace wattcut
