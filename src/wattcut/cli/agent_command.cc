// `wattcut agent`: the node agent (docs/agent.md), the one process on a GPU node that opens NVML,
// serving unprivileged callers on a Unix socket and, with --listen, on TCP. This file reads the
// flags, opens the backend and runs agent/agent_service.h until SIGINT or SIGTERM.
#include <signal.h>

#include <condition_variable>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>

#include "wattcut/agent/agent_service.h"
#include "wattcut/agent/agent_tokens.h"
#include "wattcut/agent/server_power.h"
#include "wattcut/agent/zeusd_token.h"
#include "wattcut/base/printable_text.h"
#include "wattcut/cli/command.h"
#include "wattcut/cli/listen_address.h"
#include "wattcut/cli/stop_signals.h"
#include "wattcut/gpu/open_backend.h"
#include "wattcut/http/loopback.h"

namespace wattcut::cli {
namespace {

struct AgentArgs {
  std::string socket = kDefaultAgentSocket;
  std::string socket_mode = "0660";
  std::string socket_group;
  std::string listen;
  std::string token_file;
  std::string backend = "nvml";
  std::string nvml_library = nvml::kDefaultLibraryName;
  std::string rocm_smi_library = rocm_smi::kDefaultLibraryName;
  bool dry_run = false;
  std::string simulated_model = "a100-sxm";
  int simulated_gpus = 1;
  std::string state_dir;
  bool require_job_credential = false;
  std::string non_gpu_power;
  std::string redfish_url;
  std::string redfish_auth_file;
  double redfish_period_s = 5;
  bool redfish_insecure = false;
  std::string hostname;
  bool check_config = false;
  std::string zeusd_enable = "gpu-control,gpu-read,cpu-read";
  std::string zeusd_signing_key;
  std::string powercap_root = "/sys/class/powercap";
};

Result<unsigned> ParseSocketMode(const std::string& text) {
  const bool octal = !text.empty() && text.size() <= 4 && text.find_first_not_of("01234567") == std::string::npos;
  if (!octal)
    return Error{"--socket-mode: expected an octal file mode such as 0660, got '" + PrintableText(text) + "'"};
  const unsigned mode = static_cast<unsigned>(std::stoul(text, nullptr, 8));
  if ((mode & 0600) != 0600) return Error{"--socket-mode " + text + ": the owner (root) needs read and write"};
  return mode;
}

// The options the flags describe, every one checked; nothing opened yet.
Result<agent::AgentServiceOptions> ServiceOptions(const AgentArgs& args) {
  agent::AgentServiceOptions options;
  options.socket_path = args.socket;
  auto mode = ParseSocketMode(args.socket_mode);
  if (!mode.ok()) return mode.error();
  options.socket_mode = *mode;
  options.socket_group = args.socket_group;
  if (!args.listen.empty()) {
    auto listen = SplitListen(args.listen);
    if (!listen.ok()) return listen.error();
    options.tcp_host = listen->first;
    options.tcp_port = listen->second;
  }
  options.token_file = args.token_file;
  if (!args.token_file.empty()) {
    auto tokens = agent::AgentTokens::ReadFile(args.token_file);
    if (!tokens.ok()) return tokens.error().WithContext("--token-file: ");
  }
  if (!args.non_gpu_power.empty()) {
    auto model = agent::NonGpuPowerModel::Parse(args.non_gpu_power);
    if (!model.ok()) return model.error().WithContext("--non-gpu-power: ");
    options.non_gpu_power = *model;
  }
  if (!args.redfish_url.empty()) {
    agent::RedfishSettings redfish;
    redfish.url = args.redfish_url;
    redfish.auth_file = args.redfish_auth_file;
    redfish.verify_tls = !args.redfish_insecure;
    redfish.period_s = args.redfish_period_s;
    if (!(redfish.period_s >= 0.1 && redfish.period_s <= 3600)) {
      return Error{"--redfish-period-s must be in [0.1, 3600] seconds"};
    }
    if (!args.redfish_auth_file.empty()) {
      auto auth = agent::ReadRedfishAuthFile(args.redfish_auth_file);
      if (!auth.ok()) return auth.error().WithContext("--redfish-auth-file: ");
    }
    options.redfish = redfish;
  } else if (!args.redfish_auth_file.empty()) {
    return Error{"--redfish-auth-file needs --redfish-url"};
  }
  auto groups = agent::ParseZeusdGroups(args.zeusd_enable);
  if (!groups.ok()) return groups.error().WithContext("--zeusd-enable: ");
  options.zeusd_groups = *groups;
  options.zeusd_signing_key_file = args.zeusd_signing_key;
  if (!args.zeusd_signing_key.empty()) {
    auto key = agent::ZeusdSigningKey::ReadFile(args.zeusd_signing_key);
    if (!key.ok()) return key.error().WithContext("--zeusd-signing-key: ");
  }
  options.powercap_root = args.powercap_root;
  options.node.state_dir = args.state_dir;
  options.node.require_job_credential = args.require_job_credential;
  options.hostname = args.hostname;
  return options;
}

BackendOptions Backend(const AgentArgs& args) {
  BackendOptions backend;
  // "dry-run" is NVML with its setters only logged (the name older configs use); --dry-run does the
  // same for any backend.
  backend.kind = args.backend == "dry-run" ? "nvml" : args.backend;
  backend.dry_run = args.backend == "dry-run" || args.dry_run;
  backend.nvml_library = args.nvml_library;
  backend.rocm_smi_library = args.rocm_smi_library;
  backend.simulated_model = args.simulated_model;
  backend.simulated_gpus = args.simulated_gpus;
  backend.dry_run_log = [](const std::string& line) { std::cerr << "wattcut agent: " << line << "\n"; };
  return backend;
}

int Run(const AgentArgs& args) {
  const std::string name = "agent";
  auto options = ServiceOptions(args);
  if (!options.ok()) return ReportError(name, options.error());
  auto backend = OpenBackend(Backend(args));
  if (!backend.ok()) return ReportError(name, backend.error());
  if (args.check_config) {
    auto count = (*backend)->DeviceCount();
    if (!count.ok()) return ReportError(name, count.error());
    std::cout << "wattcut agent: configuration ok (" << *count << " GPUs, backend " << (*backend)->name() << ")\n";
    return 0;
  }
  if (!options->tcp_host.empty() && options->token_file.empty() && !http::IsLoopbackHost(options->tcp_host)) {
    ReportWarning(name, "listening on " + PrintableText(options->tcp_host) +
                            " without --token-file: TCP answers only loopback read requests");
  }
  signal(SIGPIPE, SIG_IGN);
  StopSignals stop_signals;
  const std::string backend_name = (*backend)->name();
  auto service = agent::AgentService::Start(std::move(*options), std::move(*backend));
  if (!service.ok()) return ReportError(name, service.error());
  agent::AgentService* raw = service->get();
  for (const std::string& problem : raw->node().startup_problems()) ReportWarning(name, problem);
  // The last line of start-up: what scripts and tests wait for.
  std::cout << "wattcut agent: serving " << raw->node().gpus().size() << " GPUs (" << backend_name << ")";
  if (!raw->socket_path().empty()) std::cout << " on unix:" << raw->socket_path();
  if (raw->tcp_port() >= 0)
    std::cout << " and http://" << args.listen.substr(0, args.listen.rfind(':')) << ":" << raw->tcp_port();
  std::cout << std::endl;
  for (const std::string& note : raw->notes()) std::cerr << "wattcut agent: " << note << "\n";
  std::mutex mu;
  std::condition_variable stopped;
  bool stop = false;
  stop_signals.OnStop([&] {
    std::lock_guard lock(mu);
    stop = true;
    stopped.notify_all();
  });
  {
    std::unique_lock lock(mu);
    stopped.wait(lock, [&] { return stop; });
  }
  raw->Stop();
  stop_signals.Finish();
  std::cerr << "wattcut agent: stopped (every lease ended, ceilings kept)\n";
  return 0;
}

}  // namespace

void AddAgentCommand(CLI::App& app, CommandStatus& status) {
  auto args = std::make_shared<AgentArgs>();
  CLI::App* cmd = app.add_subcommand("agent",
                                     "Run the node agent: the one process on a GPU node that opens NVML or ROCm SMI; "
                                     "leases, clock locks and power ceilings for "
                                     "unprivileged callers over a Unix socket (and TCP with --listen)");
  cmd->add_option("--socket", args->socket, "Unix socket to serve on (empty: none)")->capture_default_str();
  cmd->add_option("--socket-mode", args->socket_mode, "The socket file's mode, octal")->capture_default_str();
  cmd->add_option("--socket-group", args->socket_group, "The socket file's group (name or gid)");
  cmd->add_option("--listen", args->listen, "HOST:PORT to serve TCP on as well (bearer tokens; port 0: any free port)");
  cmd->add_option("--token-file", args->token_file,
                  "Tokens for TCP callers: one 'SCOPE TOKEN' line per token "
                  "(scopes read, train, row)");
  cmd->add_option("--backend", args->backend,
                  "GPU backend: nvml (NVIDIA), rocm-smi (AMD), simulated, or dry-run (NVML, setters only logged)")
      ->check(CLI::IsMember({"nvml", "rocm-smi", "simulated", "dry-run"}))
      ->capture_default_str();
  cmd->add_flag("--dry-run", args->dry_run, "Setters of any backend are only logged");
  cmd->add_option("--nvml-library", args->nvml_library, "NVML library to load")->capture_default_str();
  cmd->add_option("--rocm-smi-library", args->rocm_smi_library,
                  "ROCm SMI library to load (ROCm's own: /opt/rocm/lib/librocm_smi64.so.1)")
      ->capture_default_str();
  cmd->add_option("--model", args->simulated_model, "GPU model of the simulated backend: a100-sxm or a40")
      ->capture_default_str();
  cmd->add_option("--gpus", args->simulated_gpus, "Number of simulated GPUs")->capture_default_str();
  cmd->add_option("--state-dir", args->state_dir,
                  "Folder where ceilings, changed power limits and batch jobs are kept across restarts (empty: not "
                  "kept)");
  cmd->add_flag("--require-job-credential", args->require_job_credential,
                "Give GPUs to batch jobs only: a process on the socket that is not root sets clocks only with its "
                "job's credential, on its job's GPUs (the Slurm plugin registers jobs; docs/slurm.md)");
  cmd->add_option("--non-gpu-power", args->non_gpu_power,
                  "The server's power beside its GPUs, W: \"A+B*gpu\" (A fixed, B times the GPUs' power)");
  cmd->add_option("--redfish-url", args->redfish_url,
                  "A BMC's Redfish Power resource (.../Chassis/ID/Power): the server's power reading");
  cmd->add_option("--redfish-auth-file", args->redfish_auth_file, "File with one 'user:password' line for the BMC");
  cmd->add_option("--redfish-period-s", args->redfish_period_s, "Seconds between Redfish readings")
      ->capture_default_str();
  cmd->add_flag("--redfish-insecure", args->redfish_insecure, "Do not verify the BMC's TLS certificate");
  cmd->add_option("--zeusd-enable", args->zeusd_enable,
                  "zeusd API groups served beside /v1, for Zeus's clients (comma-separated; empty: none)")
      ->capture_default_str();
  cmd->add_option("--zeusd-signing-key", args->zeusd_signing_key,
                  "HMAC key file of zeusd tokens (mode 0600; 'wattcut agent token' issues them); without it the "
                  "zeusd API asks for no token, and over TCP answers loopback peers only");
  cmd->add_option("--powercap-root", args->powercap_root, "Where RAPL's CPU and DRAM energy counters are")
      ->capture_default_str();
  cmd->add_option("--hostname", args->hostname, "The Hostname label of the metrics (default: this machine's name)");
  cmd->add_flag("--check-config", args->check_config,
                "Check the flags, the token file and the backend, then exit without serving or changing a GPU");
  AddAgentTokenCommand(*cmd, status);
  cmd->callback([cmd, args, &status] {
    if (cmd->got_subcommand("token")) return;  // `agent token` issued a token; no agent runs
    status.exit_code = Run(*args);
  });
}

}  // namespace wattcut::cli
