// `wattcut polca synthesize --config truth.conf --trace T.csv --out DIR`: one server's telemetry made
// from the project's own server model (polca/telemetry_synthesis.h), written as nvidia-smi and a
// vLLM metrics CSV: files to try `polca calibrate` on, whose true parameters are known (the
// config given). docs/polca.md's worked example is made with it. Writes
//   DIR/nvidia-smi/SERVER.csv  nvidia-smi --query-gpu=timestamp,index,uuid,power.draw,
//                              power.draw.average,power.draw.instant,clocks.sm --format=csv -lms 250
//   DIR/vllm/SERVER.csv        vLLM's load metrics scraped every second
//   DIR/requests/SERVER.csv    the requests, as a request log in the Azure trace format with the server
//   DIR/agent/SERVER.ndjson    the agent's readings stream at the same samples: each GPU's power as
//                              NVML reports it on this GPU (an instant on an A100, else the 1 s
//                              average) and the server's Redfish power (a 1 s average, 15 W noise)
// (one folder per tool, each file named by its server, as `--power DIR/nvidia-smi` reads a folder)
//   DIR/truth.conf             the config the telemetry was made with
#include <cmath>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "wattcut/base/printable_text.h"
#include "wattcut/cli/command.h"
#include "wattcut/cli/duration_argument.h"
#include "wattcut/cli/output_directory.h"
#include "wattcut/polca/calibration_windows.h"
#include "wattcut/polca/polca_config.h"
#include "wattcut/polca/request_trace.h"
#include "wattcut/polca/telemetry_synthesis.h"
#include "wattcut/telemetry/agent_readings_stream_writer.h"
#include "wattcut/telemetry/nvidia_smi_csv_writer.h"
#include "wattcut/telemetry/time_zone.h"
#include "wattcut/telemetry/vllm_metrics_csv_writer.h"

namespace wattcut::cli {
namespace {

using namespace wattcut::polca;

struct SynthesizeArgs {
  std::string trace_path;
  std::string gpu = "a100";
  std::string config_path;
  std::string duration = "2h";
  double rate_per_s = 0.5;
  std::string clocks = "1410,1200,1005,1305";
  double clock_every_s = 450;
  std::string server = "node-a";
  std::string utc_offset = "Z";
  double noise_w = 2.0;
  uint64_t seed = 7;
  std::string out_dir;
  bool overwrite = false;
};

Result<std::vector<double>> ParseClocks(const std::string& text, const PolcaConfig& config) {
  std::vector<double> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    char* end = nullptr;
    const double v = std::strtod(item.c_str(), &end);
    if (item.empty() || end != item.c_str() + item.size() || !(v >= config.gpu.min_freq_mhz) ||
        !(v <= config.gpu.max_freq_mhz)) {
      return Error{"--clocks: expected SM clocks in MHz between gpu.min_freq_mhz and gpu.max_freq_mhz, got '" +
                   PrintableText(item) + "'"};
    }
    out.push_back(v);
  }
  if (out.empty()) return Error{"--clocks: expected at least one clock"};
  return out;
}

bool SafeName(const std::string& s) {
  if (s.empty() || s.size() > 64 || s[0] == '.') return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

int RunSynthesize(const SynthesizeArgs& args) {
  const std::string name = "polca synthesize";
  Result<OutputDirectory> out = OutputDirectory::Create(args.out_dir, args.overwrite);
  if (!out.ok()) return ReportError(name, out.error());
  Result<PolcaConfig> config = args.config_path.empty() ? BuiltInConfig(args.gpu) : ReadConfigFile(args.config_path);
  if (!config.ok()) return ReportError(name, config.error());
  Result<double> duration = ParseDuration(args.duration);
  if (!duration.ok()) return ReportError(name, duration.error());
  if (*duration > 86400.0) {
    return ReportError(name, Error{"--duration: at most 1d (a calibration run is hours; a day of 8 GPUs at 250 ms is "
                                   "about 700 MB of files, held before they are written)"});
  }
  if (!(args.rate_per_s > 0 && args.rate_per_s <= 100)) {
    return ReportError(name, Error{"--rate: expected requests per second in (0, 100]"});
  }
  if (!(args.clock_every_s >= 1)) return ReportError(name, Error{"--clock-every: expected seconds >= 1"});
  if (!(args.noise_w >= 0 && args.noise_w <= 100))
    return ReportError(name, Error{"--noise: expected watts in [0, 100]"});
  if (!SafeName(args.server)) {
    return ReportError(
        name, Error{"--server: expected letters, digits, '-', '_' or '.', got '" + PrintableText(args.server) + "'"});
  }
  Result<std::vector<double>> clocks = ParseClocks(args.clocks, *config);
  if (!clocks.ok()) return ReportError(name, clocks.error());
  Result<telemetry::LocalTimeZone> zone = telemetry::LocalTimeZone::Parse(args.utc_offset);
  if (!zone.ok()) return ReportError(name, zone.error().WithContext("--utc-offset: "));
  if (!zone->fixed()) return ReportError(name, Error{"--utc-offset: expected a fixed offset like +02:00, not a zone"});
  const int offset_minutes = static_cast<int>(std::lround(-telemetry::ZoneScope(*zone).Instants(0).front() / 60));
  Result<RequestTrace> trace = RequestTrace::Read(args.trace_path);
  if (!trace.ok()) return ReportError(name, trace.error());

  CalibrationRunSpec spec;
  spec.duration_s = *duration;
  spec.rate_per_s = args.rate_per_s;
  spec.seed = args.seed;
  SynthesisOptions options;
  options.server = args.server;
  options.duration_s = *duration;
  options.power_noise_w = args.noise_w;
  options.seed = args.seed;
  const std::vector<Arrival> arrivals = CalibrationRunArrivals(*trace, spec);
  Result<SynthesizedTelemetry> t =
      SynthesizeServerTelemetry(*config, arrivals, ClockCycle(*clocks, args.clock_every_s, *duration), options);
  if (!t.ok()) return ReportError(name, t.error());
  telemetry::NvidiaSmiCsvOptions smi;
  smi.utc_offset_minutes = offset_minutes;
  Status st =
      out->Write("nvidia-smi/" + args.server + ".csv", telemetry::NvidiaSmiCsvText(t->power, t->instant_power, smi));
  if (st.ok()) st = out->Write("vllm/" + args.server + ".csv", telemetry::VllmMetricsCsvText(t->load.servers[0]));
  if (st.ok()) {
    std::string log = "TIMESTAMP,ContextTokens,GeneratedTokens,server\n";
    for (const Arrival& a : arrivals) {
      log += FormatTimestamp(options.start_unix_s + a.time_s) + "," + std::to_string(a.context_tokens) + "," +
             std::to_string(a.generated_tokens) + "," + args.server + "\n";
    }
    st = out->Write("requests/" + args.server + ".csv", log);
  }
  if (st.ok()) {
    const bool instant = SensorAverageSecondsFor("power_w", config->gpu.name) == 0;
    st = out->Write("agent/" + args.server + ".ndjson",
                    telemetry::AgentReadingsStreamText(instant ? t->instant_power : t->power, &t->power.servers[0],
                                                       config->gpu.tdp_w));
  }
  if (st.ok()) st = out->Write("truth.conf", FormatConfig(*config));
  if (st.ok()) st = out->Commit();
  if (!st.ok()) return ReportError(name, st.error());
  std::printf(
      "%s: %.0f s of %d GPUs at %zu clocks, %zu power samples a GPU and %zu load scrapes; wrote "
      "%s/{nvidia-smi,vllm,requests}/%s.csv and agent/%s.ndjson\n",
      args.server.c_str(), *duration, config->server.gpus, clocks->size(), t->power.gpus[0].samples.size(),
      t->load.servers[0].samples.size(), DisplayPath(args.out_dir).c_str(), args.server.c_str(), args.server.c_str());
  return 0;
}

}  // namespace

void AddPolcaSynthesizeCommand(CLI::App& polca, CommandStatus& status) {
  auto args = std::make_shared<SynthesizeArgs>();
  CLI::App* c = polca.add_subcommand(
      "synthesize", "Write one modelled server's nvidia-smi and vLLM telemetry, to try calibrate on known parameters");
  c->add_option("--trace", args->trace_path, "Request trace CSV (TIMESTAMP,ContextTokens,GeneratedTokens)")->required();
  c->add_option("--gpu", args->gpu, "Built-in config of the modelled server when no --config is given")
      ->capture_default_str();
  c->add_option("--config", args->config_path, "Config of the modelled server (its true parameters)");
  c->add_option("--duration", args->duration, "Length of the run, e.g. 2h")->capture_default_str();
  c->add_option("--rate", args->rate_per_s, "Requests per second")->capture_default_str();
  c->add_option("--clocks", args->clocks, "SM clocks the GPUs are locked to in turn (MHz)")->capture_default_str();
  c->add_option("--clock-every", args->clock_every_s, "Seconds at each clock")->capture_default_str();
  c->add_option("--server", args->server, "The server's name (the files' names)")->capture_default_str();
  c->add_option("--utc-offset", args->utc_offset, "Local time of the nvidia-smi timestamps")->capture_default_str();
  c->add_option("--noise", args->noise_w, "Standard deviation of each power reading (W)")->capture_default_str();
  c->add_option("--seed", args->seed, "Random seed")->capture_default_str();
  c->add_option("--out", args->out_dir, "Output directory")->required();
  c->add_flag("--overwrite", args->overwrite, "Replace DIR if it exists and is not empty");
  c->callback([args, &status] { status.exit_code = RunSynthesize(*args); });
}

}  // namespace wattcut::cli
