#include "wattcut/runtime/online_profiler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "wattcut/base/csv_reader.h"
#include "wattcut/base/general_text.h"
#include "wattcut/gpu/simulated_backend.h"
#include "wattcut/profile/profile_csv.h"

namespace wattcut {
namespace {

// One training iteration of a pipeline stage on the simulated GPU: `microbatches` forwards then
// as many backwards, each bracketed by the profiler's timestamps.
Status RunIteration(OnlineProfiler& profiler, SimulatedBackend& gpu, const StageWorkload& work, int microbatches) {
  if (Status s = profiler.BeginIteration(); !s.ok()) return s;
  for (InstructionKind kind : {InstructionKind::kForward, InstructionKind::kBackward}) {
    for (int i = 0; i < microbatches; ++i) {
      const std::string name(InstructionName(kind));
      if (Status s = profiler.InstructionBegin(name); !s.ok()) return s;
      if (auto ran = gpu.Run(0, kind, work.of(kind)); !ran.ok()) return ran.error();
      if (Status s = profiler.InstructionEnd(name); !s.ok()) return s;
    }
  }
  return profiler.EndIteration();
}

TEST(OnlineProfilerTest, RecoversTheSimulatedGpuModel) {
  // Simulated time: deterministic, and the background sampler samples every 2 ms of it.
  auto clock = std::make_shared<ManualClock>();
  auto gpu = std::move(SimulatedBackend::Create("a100-sxm", 1, clock)).value();
  const GpuModel& model = gpu->model(0);
  auto setter = std::move(StartThreadFrequencySetter(*gpu, 0)).value();
  OnlineProfilerOptions options;
  options.stage = 0;
  options.floor_mhz = 855;
  options.warmup_iterations = 1;
  options.measured_iterations = 2;
  options.sample_interval_s = 0.002;
  auto profiler = OnlineProfiler::Start(*gpu, 0, *setter, gpu->clock(), options);
  ASSERT_TRUE(profiler.ok()) << profiler.error().message;
  ASSERT_EQ((*profiler)->planned_freqs_mhz().size(), (1410u - 855u) / 15u + 1u);
  const StageWorkload work = model.middle_stage;
  while (!(*profiler)->done()) ASSERT_TRUE(RunIteration(**profiler, *gpu, work, 2).ok());
  (*profiler)->Finish();
  ASSERT_TRUE(setter->Stop().ok());
  EXPECT_FALSE(gpu->gpu_clocks_locked(0));

  const auto& rows = (*profiler)->rows();
  ASSERT_EQ(rows.size(), 2 * ((1410u - 855u) / 15u + 1u));
  double worst_time = 0, worst_energy = 0;
  for (const ProfiledRow& row : rows) {
    const InstructionKind kind = *ParseInstruction(row.instruction);
    const WorkloadPoint& base = work.of(kind);
    const double time_s = base.time_s * model.RelativeTime(kind, row.freq_mhz);
    const double energy_j = time_s * base.power_w * model.RelativePower(kind, row.freq_mhz);
    EXPECT_EQ(row.stage, 0);
    EXPECT_EQ(row.samples, 4);  // 2 per iteration, 2 measured iterations
    EXPECT_NEAR(row.time_s / time_s, 1.0, 0.02) << row.instruction << " at " << row.freq_mhz;
    EXPECT_NEAR(row.energy_j / energy_j, 1.0, 0.02) << row.instruction << " at " << row.freq_mhz;
    worst_time = std::max(worst_time, std::abs(row.time_s / time_s - 1));
    worst_energy = std::max(worst_energy, std::abs(row.energy_j / energy_j - 1));
  }
  std::cout << "worst relative error vs the model: time " << 100 * worst_time << " %, energy " << 100 * worst_energy
            << " %\n";

  // The planner reads what the profiler writes (statistics columns included).
  const std::string csv = (*profiler)->ToCsv();
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "stage,instruction,frequency,time,energy,samples,time_std,energy_std");
  auto profile = ParseProfileCsv(csv, "profiled.csv", 1);
  ASSERT_TRUE(profile.ok()) << profile.error().message;
}

TEST(OnlineProfilerTest, CsvCellsReadBackAsTheMeasuredDoubles) {
  auto clock = std::make_shared<ManualClock>();
  auto gpu = std::move(SimulatedBackend::Create("a100-sxm", 1, clock)).value();
  auto setter = std::move(StartThreadFrequencySetter(*gpu, 0)).value();
  OnlineProfilerOptions options;
  options.floor_mhz = 1275;
  options.warmup_iterations = 0;
  options.measured_iterations = 3;
  auto profiler = std::move(OnlineProfiler::Start(*gpu, 0, *setter, *clock, options)).value();
  const StageWorkload work = gpu->model(0).middle_stage;
  while (!profiler->done()) ASSERT_TRUE(RunIteration(*profiler, *gpu, work, 2).ok());
  profiler->Finish();
  ASSERT_TRUE(setter->Stop().ok());

  Result<CsvTable> table = CsvTable::Parse(profiler->ToCsv(), "profiled.csv");
  ASSERT_TRUE(table.ok()) << table.error().message;
  const std::vector<ProfiledRow>& rows = profiler->rows();
  ASSERT_EQ(table->rows().size(), rows.size());
  ASSERT_FALSE(rows.empty());
  int rounded_before = 0;  // values that the old %.9g (time, energy) and %.6g (std) lost
  for (size_t i = 0; i < rows.size(); ++i) {
    const CsvRow& row = table->rows()[i];
    EXPECT_EQ(*table->integer(row, 0), rows[i].stage);
    EXPECT_EQ(row.fields[1], rows[i].instruction);
    EXPECT_EQ(*table->integer(row, 2), rows[i].freq_mhz);
    EXPECT_EQ(*table->integer(row, 5), rows[i].samples);
    const std::pair<double, int> cells[] = {
        {rows[i].time_s, 9}, {rows[i].energy_j, 9}, {rows[i].time_std_s, 6}, {rows[i].energy_std_j, 6}};
    const size_t columns[] = {3, 4, 6, 7};
    for (size_t k = 0; k < 4; ++k) {
      const auto [value, old_digits] = cells[k];
      EXPECT_EQ(*table->number(row, columns[k]), value) << table->where(row, columns[k]) << row.fields[columns[k]];
      if (std::strtod(GeneralText(value, old_digits).c_str(), nullptr) != value) ++rounded_before;
    }
  }
  EXPECT_GT(rounded_before, 0);
}

TEST(OnlineProfilerTest, StopsAfterEnergyRisesAndHonoursStep) {
  auto clock = std::make_shared<ManualClock>();
  auto gpu = std::move(SimulatedBackend::Create("a100-sxm", 1, clock)).value();
  auto setter = std::move(StartThreadFrequencySetter(*gpu, 0)).value();
  OnlineProfilerOptions options;
  options.step_mhz = 45;
  options.warmup_iterations = 0;
  options.measured_iterations = 1;
  options.stop_after_energy_rises = 2;
  auto profiler = std::move(OnlineProfiler::Start(*gpu, 0, *setter, *clock, options)).value();
  EXPECT_EQ(profiler->planned_freqs_mhz().front(), 1410);
  EXPECT_EQ(profiler->planned_freqs_mhz()[1], 1365);
  EXPECT_EQ(profiler->planned_freqs_mhz().back(), 240);
  const StageWorkload work = gpu->model(0).middle_stage;
  int iterations = 0;
  while (!profiler->done()) {
    ASSERT_TRUE(RunIteration(*profiler, *gpu, work, 1).ok());
    ++iterations;
  }
  // Iteration energies per frequency, from the rows.
  std::vector<double> energy;
  for (size_t i = 0; i < profiler->rows().size(); i += 2) {
    energy.push_back(profiler->rows()[i].energy_j + profiler->rows()[i + 1].energy_j);
  }
  ASSERT_EQ(static_cast<int>(energy.size()), iterations);
  ASSERT_GE(energy.size(), 3u);
  ASSERT_LT(energy.size(), profiler->planned_freqs_mhz().size());  // stopped early
  const size_t n = energy.size();
  EXPECT_GT(energy[n - 1], energy[n - 2]);
  EXPECT_GT(energy[n - 2], energy[n - 3]);
  for (size_t i = 2; i + 1 < n; ++i) EXPECT_FALSE(energy[i] > energy[i - 1] && energy[i - 1] > energy[i - 2]) << i;
  EXPECT_FALSE(profiler->BeginIteration().ok());
}

TEST(OnlineProfilerTest, EnergyRisesNearTheTopDoNotStopTheSweep) {
  // The A40 model is power-capped above ~1500 MHz: its energy rises for the first steps down.
  auto clock = std::make_shared<ManualClock>();
  auto gpu = std::move(SimulatedBackend::Create("a40", 1, clock)).value();
  auto setter = std::move(StartThreadFrequencySetter(*gpu, 0)).value();
  OnlineProfilerOptions options;
  options.step_mhz = 60;
  options.warmup_iterations = 0;
  options.measured_iterations = 1;
  options.stop_after_energy_rises = 3;
  auto profiler = std::move(OnlineProfiler::Start(*gpu, 0, *setter, *clock, options)).value();
  const StageWorkload work = gpu->model(0).middle_stage;
  while (!profiler->done()) ASSERT_TRUE(RunIteration(*profiler, *gpu, work, 1).ok());
  std::vector<double> energy;
  for (size_t i = 0; i < profiler->rows().size(); i += 2) {
    energy.push_back(profiler->rows()[i].energy_j + profiler->rows()[i + 1].energy_j);
  }
  ASSERT_GE(energy.size(), 4u);
  EXPECT_GT(energy[1], energy[0]);                    // rose at the top...
  EXPECT_LT(profiler->rows().back().freq_mhz, 1200);  // ...yet the sweep went on well below it
}

TEST(OnlineProfilerTest, RejectsMisuse) {
  auto clock = std::make_shared<ManualClock>();
  auto gpu = std::move(SimulatedBackend::Create("a40", 1, clock)).value();
  auto setter = std::move(StartThreadFrequencySetter(*gpu, 0)).value();
  OnlineProfilerOptions options;
  options.floor_mhz = 1800;
  auto none = OnlineProfiler::Start(*gpu, 0, *setter, *clock, options);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().message, "profiler: no supported SM clock between 1800 and 1740 MHz");
  options = {};
  options.measured_iterations = 0;
  EXPECT_FALSE(OnlineProfiler::Start(*gpu, 0, *setter, *clock, options).ok());

  auto profiler = std::move(OnlineProfiler::Start(*gpu, 0, *setter, *clock, {})).value();
  EXPECT_FALSE(profiler->InstructionBegin("forward").ok());
  EXPECT_FALSE(profiler->EndIteration().ok());
  ASSERT_TRUE(profiler->BeginIteration().ok());
  EXPECT_EQ(*gpu->SmClockMhz(0), 1740);
  EXPECT_FALSE(profiler->BeginIteration().ok());
  ASSERT_TRUE(profiler->InstructionBegin("forward").ok());
  EXPECT_FALSE(profiler->InstructionBegin("backward").ok());
  Status wrong_end = profiler->InstructionEnd("backward");
  ASSERT_FALSE(wrong_end.ok());
  EXPECT_EQ(wrong_end.error().message, "profiler: 'backward' ended but 'forward' is running");
  EXPECT_FALSE(profiler->EndIteration().ok());
  ASSERT_TRUE(profiler->InstructionEnd("forward").ok());
  EXPECT_TRUE(profiler->EndIteration().ok());
}

}  // namespace
}  // namespace wattcut
