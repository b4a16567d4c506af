// The compiled part of the Python package `wattcut` (`wattcut._wattcut`): the runtime's RankClient
// and the planning server's job registration, for python/wattcut/pipeline_frequency.py. Every
// failure is raised as wattcut.WattcutError (a RuntimeError) carrying the C++ message; calls that
// may block (start-up, frequency waits, close) release the GIL. The step hooks do no I/O.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <stdexcept>

#include "wattcut/gpu/agent_backend.h"
#include "wattcut/plan/dag_frontier_file.h"
#include "wattcut/plan/frontier_file.h"
#include "wattcut/plan/plan_files.h"
#include "wattcut/plan/plan_lookup.h"
#include "wattcut/runtime/rank_client.h"

namespace py = pybind11;

namespace wattcut {
namespace {

struct WattcutError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void Check(const Status& status) {
  if (!status.ok()) throw WattcutError(status.error().message);
}

template <typename T>
T Take(Result<T> result) {
  if (!result.ok()) throw WattcutError(result.error().message);
  return std::move(*result);
}

// Runs `call` without the GIL (it may wait on the network or on another process).
template <typename Call>
auto Released(Call call) {
  py::gil_scoped_release release;
  return call();
}

std::string RegisterJob(const std::string& server_url, const std::string& token, int pp_degree, int dp_degree,
                        int tp_degree, int world_size, const std::string& job_metadata, int num_microbatches,
                        const std::string& schedule, double unit_time_s, double p2p_power_w) {
  auto client = Take(PlanServerClient::Create({.url = server_url, .bearer_token = token}));
  TrainingJobInfo job{.pp_degree = pp_degree,
                      .dp_degree = dp_degree,
                      .tp_degree = tp_degree,
                      .world_size = world_size,
                      .job_metadata = job_metadata,
                      .num_microbatches = num_microbatches,
                      .schedule = schedule,
                      .unit_time_s = unit_time_s,
                      .p2p_power_w = p2p_power_w};
  return Take(Released([&] { return client.RegisterJob(job); }));
}

std::unique_ptr<RankClient> StartRankClient(const py::kwargs& kw) {
  RankClientOptions o;
  auto get = [&](const char* name) { return kw[name]; };
  o.server.url = get("server_url").cast<std::string>();
  o.server.bearer_token = get("token").cast<std::string>();
  o.job_id = get("job_id").cast<std::string>();
  // Rank 0 registers the job itself (in the background when the server is down); the other ranks
  // then get its id later through set_job_id.
  if (get("register_job").cast<bool>()) {
    o.register_job = TrainingJobInfo{.pp_degree = get("pp_degree").cast<int>(),
                                     .dp_degree = get("dp_degree").cast<int>(),
                                     .tp_degree = get("tp_degree").cast<int>(),
                                     .world_size = get("world_size").cast<int>(),
                                     .job_metadata = get("job_metadata").cast<std::string>(),
                                     .num_microbatches = get("num_microbatches").cast<int>(),
                                     .schedule = get("schedule").cast<std::string>(),
                                     .virtual_stages = get("virtual_stages").cast<int>(),
                                     .unit_time_s = get("unit_time_s").cast<double>(),
                                     .p2p_power_w = get("p2p_power_w").cast<double>()};
  }
  o.job_id_follows = o.job_id.empty() && !o.register_job;
  o.ids = {.rank = get("rank").cast<int>(),
           .dp_rank = get("dp_rank").cast<int>(),
           .pp_rank = get("pp_rank").cast<int>(),
           .tp_rank = get("tp_rank").cast<int>()};
  o.gpu = get("gpu").cast<int>();
  o.backend.kind = get("gpu_backend").cast<std::string>();
  const std::string nvml_library = get("nvml_library").cast<std::string>();
  if (!nvml_library.empty()) o.backend.nvml_library = nvml_library;
  if (kw.contains("rocm_smi_library")) {
    const std::string rocm_smi_library = get("rocm_smi_library").cast<std::string>();
    if (!rocm_smi_library.empty()) o.backend.rocm_smi_library = rocm_smi_library;
  }
  o.backend.dry_run = get("dry_run").cast<bool>();
  o.backend.simulated_gpus = o.gpu + 1;
  o.watchdog_setter = get("watchdog").cast<bool>();
  if (kw.contains("agent_socket")) o.agent_socket = get("agent_socket").cast<std::string>();
  o.freq_setter_path = get("freq_setter_path").cast<std::string>();
  o.profile = get("profile").cast<bool>();
  o.profiler.max_freq_mhz = get("profile_max_freq_mhz").cast<int>();
  o.profiler.floor_mhz = get("profile_min_freq_mhz").cast<int>();
  o.profiler.step_mhz = get("profile_freq_step_mhz").cast<int>();
  o.profiler.warmup_iterations = get("profile_warmup_iterations").cast<int>();
  o.profiler.measured_iterations = get("profile_measured_iterations").cast<int>();
  o.profiler.sample_interval_s = get("profile_sample_interval_s").cast<double>();
  return Take(Released([&] { return RankClient::Start(o); }));
}

const char* PhaseName(RankClient::Phase phase) {
  switch (phase) {
    case RankClient::Phase::kProfiling:
      return "profiling";
    case RankClient::Phase::kProfiledWaiting:
      return "profiled";
    case RankClient::Phase::kPlanned:
      return "planned";
    case RankClient::Phase::kClosed:
      return "closed";
  }
  return "unknown";
}

// Frontier points as dicts, for wattcut.Frontier.points (a pipeline's or a DAG's).
py::list FrontierPoints(const DurationFrontier& frontier) {
  py::list points;
  for (size_t i = 0; i < frontier.points().size(); ++i) {
    const FrontierPoint& p = frontier.points()[i];
    py::dict point;
    point["plan"] = i;
    point["time_s"] = p.time_s;
    point["energy_j"] = p.energy_j;
    point["duration_units"] = p.duration_units;
    point["effective_energy_j"] = p.effective_energy_j;
    point["avg_power_w"] = AveragePowerW(p);
    point["avg_power_per_gpu_w"] =
        frontier.num_devices() > 0 ? py::object(py::float_(AveragePowerPerGpuW(frontier, i))) : py::object(py::none());
    point["peak_1s_power_w"] = p.peak_1s_power_w ? py::object(py::float_(*p.peak_1s_power_w)) : py::object(py::none());
    points.append(std::move(point));
  }
  return points;
}

// plan/plan_lookup.h's rules by name: "point", "time_s", "slowdown", "power_per_gpu_w" or
// "peak_power_per_gpu_w".
size_t LookUp(const DurationFrontier& frontier, const std::string& kind, double value) {
  PlanQuery query{PlanQuery::Kind::kPoint, value};
  if (kind == "time_s") {
    query.kind = PlanQuery::Kind::kIterationTime;
  } else if (kind == "slowdown") {
    query.kind = PlanQuery::Kind::kSlowdown;
  } else if (kind == "power_per_gpu_w") {
    query.kind = PlanQuery::Kind::kPowerPerGpu;
  } else if (kind == "peak_power_per_gpu_w") {
    query.kind = PlanQuery::Kind::kPeakPowerPerGpu;
  } else if (kind != "point") {
    throw WattcutError("unknown lookup '" + kind +
                       "' (expected point, time_s, slowdown, power_per_gpu_w or peak_power_per_gpu_w)");
  }
  return Take(LookUpPlan(frontier, query));
}

}  // namespace
}  // namespace wattcut

PYBIND11_MODULE(_wattcut, m) {
  using namespace wattcut;
  m.doc() = "wattcut's C++ runtime (use the classes of the wattcut package, not this module)";
  py::register_exception<WattcutError>(m, "WattcutError", PyExc_RuntimeError);

  m.def("register_job", &RegisterJob, py::arg("server_url"), py::arg("token"), py::arg("pp_degree"),
        py::arg("dp_degree"), py::arg("tp_degree"), py::arg("world_size"), py::arg("job_metadata"),
        py::arg("num_microbatches"), py::arg("schedule"), py::arg("unit_time_s"), py::arg("p2p_power_w"),
        "Registers a training job with the planning server; returns its id.");

  // A computed frontier read from a `wattcut frontier` folder (python/wattcut/frontier.py wraps it).
  py::class_<Frontier>(m, "Frontier")
      .def_static(
          "load", [](const std::string& path) { return Take(ReadFrontierFile(path)); }, py::arg("path"),
          "Reads DIR/frontier.wattcut (or the file itself).")
      .def("points", [](const Frontier& f) { return FrontierPoints(f); })
      .def(
          "look_up", [](const Frontier& f, const std::string& kind, double value) { return LookUp(f, kind, value); },
          py::arg("kind"), py::arg("value"))
      .def("plan_json",
           [](const Frontier& f, size_t i) { return PlanJson(f, Take(PointByIndex(f, static_cast<int64_t>(i)))); })
      .def("zeus_literal",
           [](const Frontier& f, size_t i) {
             return ZeusPlanLiteral(f.PlanAt(Take(PointByIndex(f, static_cast<int64_t>(i)))));
           })
      .def_property_readonly("num_points", [](const Frontier& f) { return f.points().size(); })
      .def_property_readonly("num_stages", &Frontier::num_stages)
      .def_property_readonly("unit_time_s", [](const Frontier& f) { return f.setup().unit_time_s; })
      .def_property_readonly("fastest_index", [](const Frontier& f) { return f.fastest_index(); })
      .def_property_readonly("min_energy_index", [](const Frontier& f) { return f.min_energy_index(); });

  // A generic DAG's frontier (`wattcut frontier --dag`), with the same lookups; its plans are
  // every operation's knob.
  py::class_<DagFrontier>(m, "DagFrontier")
      .def_static(
          "load", [](const std::string& path) { return Take(ReadDagFrontierFile(path)); }, py::arg("path"),
          "Reads DIR/frontier.wattcut (or the file itself) of a generic DAG.")
      .def("points", [](const DagFrontier& f) { return FrontierPoints(f); })
      .def(
          "look_up", [](const DagFrontier& f, const std::string& kind, double value) { return LookUp(f, kind, value); },
          py::arg("kind"), py::arg("value"))
      .def("plan_json", [](const DagFrontier& f,
                           size_t i) { return DagPlanJson(f, Take(PointByIndex(f, static_cast<int64_t>(i)))); })
      .def_property_readonly("num_points", [](const DagFrontier& f) { return f.points().size(); })
      .def_property_readonly("num_devices", [](const DagFrontier& f) { return f.num_devices(); })
      .def_property_readonly("num_operations", [](const DagFrontier& f) { return f.num_computations(); })
      .def_property_readonly("unit_time_s", [](const DagFrontier& f) { return f.setup().unit_time_s; })
      .def_property_readonly("fastest_index", [](const DagFrontier& f) { return f.fastest_index(); })
      .def_property_readonly("min_energy_index", [](const DagFrontier& f) { return f.min_energy_index(); });
  m.def(
      "frontier_kind",
      [](const std::string& path) {
        return Take(ReadFrontierFileKind(path)) == FrontierFileKind::kDag ? "dag" : "pipeline";
      },
      py::arg("path"), "'pipeline' or 'dag': which frontier DIR/frontier.wattcut (or the file) holds.");
  m.def("node_agent", &AgentFromEnvironment,
        "The node agent this process finds by itself ($WATTCUT_AGENT_SOCKET, else /run/wattcut/agent.sock when a "
        "socket is there), or '' when none: where gpu_backend='nvml' or 'rocm-smi' sets clocks.");

  py::class_<RankClient>(m, "RankClient")
      .def(py::init(&StartRankClient), "Starts the client of one rank (keyword arguments only).")
      .def("on_step_begin", [](RankClient& c) { Check(Released([&] { return c.OnStepBegin(); })); })
      .def("on_instruction_begin",
           [](RankClient& c, const std::string& name) { return Take(c.OnInstructionBegin(name)); })
      .def("on_instruction_end", [](RankClient& c, const std::string& name) { Check(c.OnInstructionEnd(name)); })
      .def("on_step_end", [](RankClient& c) { Check(c.OnStepEnd()); })
      .def("finish_profiling", [](RankClient& c) { Check(Released([&] { return c.FinishProfiling(); })); })
      .def(
          "report_straggler",
          [](RankClient& c, int dp_rank, std::optional<double> slowdown, std::optional<double> iteration_time_s,
             bool recovered) {
            StragglerUpdate update{
                .dp_rank = dp_rank, .slowdown = slowdown, .iteration_time_s = iteration_time_s, .recovered = recovered};
            Check(c.ReportStraggler(update));  // queued for the background: returns at once
          },
          py::arg("dp_rank"), py::arg("slowdown") = py::none(), py::arg("iteration_time_s") = py::none(),
          py::arg("recovered") = false)
      .def("wait_until_frequency_applied",
           [](RankClient& c) { Check(Released([&] { return c.WaitUntilFrequencyApplied(); })); })
      .def("gpu_clock_mhz", [](RankClient& c) { return Take(Released([&] { return c.SmClockMhz(); })); })
      .def(
          "run_simulated_work",
          [](RankClient& c, const std::string& instruction, double time_at_max_clock_s) {
            return Take(Released([&] { return c.RunSimulatedWork(instruction, time_at_max_clock_s); }));
          },
          py::arg("instruction"), py::arg("time_at_max_clock_s"))
      .def("close", [](RankClient& c) { Check(Released([&] { return c.Close(); })); })
      .def("set_job_id", &RankClient::SetJobId, py::arg("job_id"))
      .def_property_readonly("job_id", &RankClient::job_id)
      .def_property_readonly("backend_name", &RankClient::backend_name)
      .def_property_readonly("server_connected", [](const RankClient& c) { return c.watcher().connected(); })
      .def_property_readonly("missed_updates", [](const RankClient& c) { return c.watcher().missed_updates(); })
      .def_property_readonly("server_outages", [](const RankClient& c) { return c.watcher().outages(); })
      .def_property_readonly("plan_version", &RankClient::plan_version)
      .def_property_readonly("queued_requests", [](const RankClient& c) { return c.watcher().queued_requests(); })
      .def_property_readonly("phase", [](const RankClient& c) { return PhaseName(c.phase()); })
      .def_property_readonly("profiling_done_locally", &RankClient::profiling_done_locally)
      .def_property_readonly("available_frequencies", &RankClient::available_freqs_mhz)
      .def_property_readonly("steps_completed", &RankClient::steps_completed)
      .def_property_readonly("schedule",
                             [](const RankClient& c) {
                               std::vector<std::pair<std::string, int>> out;
                               for (const auto& e : c.schedule()) out.emplace_back(e.instruction, e.freq_mhz);
                               return out;
                             })
      .def_property_readonly("profile_rows", [](const RankClient& c) {
        py::list rows;
        for (const ProfiledRow& r : c.profiled_rows()) {
          py::dict row;
          row["stage"] = r.stage;
          row["instruction"] = r.instruction;
          row["frequency"] = r.freq_mhz;
          row["time"] = r.time_s;
          row["energy"] = r.energy_j;
          row["samples"] = r.samples;
          rows.append(row);
        }
        return rows;
      });
}
