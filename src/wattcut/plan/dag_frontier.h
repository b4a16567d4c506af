// The frontier of a generic DAG (dag/dag_file.h): the points and planned durations of a
// DurationFrontier (plan/duration_frontier.h; computation i is operation i, in the DAG file's
// order), plus what turns a point's durations back into every operation's knob and names
// them. The file `wattcut.dag_frontier/v1` (plan/dag_frontier_file.h) holds exactly this.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "wattcut/dag/dag_file.h"
#include "wattcut/plan/duration_frontier.h"
#include "wattcut/plan/planner_defaults.h"

namespace wattcut {

class DagFrontier : public DurationFrontier {
 public:
  using Device = DagDevice;  // a name and what it draws while none of its operations runs
  struct Operation {
    std::string name;
    int device = -1;  // index into Setup::devices; -1 when it has none
    // (duration_units, knob) sorted by duration ascending: the operation runs the slowest
    // option whose duration is at most the planned one.
    std::vector<std::pair<int64_t, int>> options;
  };
  struct Setup {
    double unit_time_s = kDefaultUnitTimeS;
    std::vector<Device> devices;
    std::vector<Operation> operations;
  };

  DagFrontier() = default;
  DagFrontier(Setup setup, std::vector<int64_t> start_durations);

  const Setup& setup() const { return setup_; }
  // What the devices draw in all while none of their operations runs.
  double blocking_power_w() const;

  // The knob operation `op` runs at a planned duration: its slowest option whose duration is
  // at most `duration_units`; the fastest when none is (a cost table never goes below it).
  int KnobFor(int op, int64_t duration_units) const;
  // Every operation's knob at point `index`.
  std::vector<int> KnobsAt(size_t index) const;

 private:
  Setup setup_;
};

}  // namespace wattcut
