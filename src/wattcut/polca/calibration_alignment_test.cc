#include "wattcut/polca/calibration_alignment.h"

#include <gtest/gtest.h>

#include <cmath>

namespace wattcut::polca {
namespace {

// A GPU busy (300 W) in bursts of 3 s every 10 s, idle (80 W) between, for 20 minutes; the load
// says so every 250 ms. `power_shift_s` moves the power's clock (a wrong UTC offset).
void Record(double power_shift_s, std::vector<telemetry::GpuPowerSeries>& gpus, telemetry::ServingLoadSeries& load) {
  const double t0 = 1784415000;
  auto busy = [](double t) { return std::fmod(t, 10.0) < 3.0 + 0.7 * std::sin(t / 37); };
  gpus = {{"node", "0", {}}};
  load = {"node", {}};
  for (double t = 0; t < 1200; t += 0.25) {
    gpus[0].samples.push_back({t0 + t + power_shift_s, busy(t) ? 300.0 : 80.0, 1410});
    telemetry::ServingLoadSample s;
    s.time_s = t0 + t + 0.1;
    s.running = busy(t + 0.1) ? 1 : 0;
    s.waiting = 0;
    load.samples.push_back(s);
  }
}

TEST(CalibrationAlignment, AlignedFilesNeedNoShift) {
  std::vector<telemetry::GpuPowerSeries> gpus;
  telemetry::ServingLoadSeries load;
  Record(0, gpus, load);
  const std::optional<PowerLoadAlignment> a = MeasureAlignment(gpus, load);
  ASSERT_TRUE(a.has_value());
  ASSERT_TRUE(a->as_read.has_value());
  EXPECT_GT(*a->as_read, 0.9);
  EXPECT_FALSE(a->better_elsewhere());
}

TEST(CalibrationAlignment, SevenHoursOffIsFoundAndTheOffsetNamed) {
  std::vector<telemetry::GpuPowerSeries> gpus;
  telemetry::ServingLoadSeries load;
  // nvidia-smi wrote local time at UTC-07:00 and it was read as UTC: 7 h early.
  Record(-7 * 3600, gpus, load);
  const std::optional<PowerLoadAlignment> a = MeasureAlignment(gpus, load);
  ASSERT_TRUE(a.has_value());
  EXPECT_FALSE(a->as_read.has_value());
  EXPECT_TRUE(a->better_elsewhere());
  EXPECT_DOUBLE_EQ(a->best_shift_s, 7 * 3600);
  EXPECT_NE(a->Advice(0).find("moved 7 h later"), std::string::npos) << a->Advice(0);
  EXPECT_NE(a->Advice(0).find("did you mean --utc-offset -07:00?"), std::string::npos) << a->Advice(0);
  // Given +02:00 (wrong): the advice is still the offset that lines them up.
  Record(-9 * 3600, gpus, load);
  EXPECT_NE(MeasureAlignment(gpus, load)->Advice(2 * 3600).find("--utc-offset -07:00"), std::string::npos);
}

TEST(CalibrationAlignment, HalfAnHourOffOnALongRunIsFoundThoughTheFilesOverlap) {
  std::vector<telemetry::GpuPowerSeries> gpus;
  telemetry::ServingLoadSeries load;
  Record(-1800, gpus, load);
  const std::optional<PowerLoadAlignment> a = MeasureAlignment(gpus, load);
  ASSERT_TRUE(a.has_value());
  EXPECT_TRUE(a->better_elsewhere()) << (a->as_read ? *a->as_read : -2) << " vs " << a->best;
  EXPECT_DOUBLE_EQ(a->best_shift_s, 1800);
  EXPECT_NE(a->Advice(-7 * 3600).find("--utc-offset -07:30"), std::string::npos) << a->Advice(-7 * 3600);
}

TEST(CalibrationAlignment, TooLittleOverlapAnywhereSaysNothing) {
  std::vector<telemetry::GpuPowerSeries> gpus;
  telemetry::ServingLoadSeries load;
  Record(-20 * 3600, gpus, load);  // beyond any UTC offset
  EXPECT_FALSE(MeasureAlignment(gpus, load).has_value());
}

}  // namespace
}  // namespace wattcut::polca
