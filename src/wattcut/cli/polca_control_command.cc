// `wattcut polca control`: the live POLCA row controller (row_control/row_controller.h) on a real
// row through its node agents (docs/polca.md, "Running POLCA on a row"). This file reads the flags,
// checks every agent (and the planning server of a row with training servers), resumes from the
// ceilings they hold (and the training jobs' power targets), and runs one period per telemetry
// period until --duration, SIGINT or SIGTERM; it never lifts a ceiling or a target by exiting.
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "wattcut/base/printable_text.h"
#include "wattcut/base/steady_time.h"
#include "wattcut/base/unix_time.h"
#include "wattcut/cli/command.h"
#include "wattcut/cli/listen_address.h"
#include "wattcut/cli/stop_signals.h"
#include "wattcut/http/bounded_http_server.h"
#include "wattcut/http/token_file.h"
#include "wattcut/polca/polca_config.h"
#include "wattcut/row_control/decision_log.h"
#include "wattcut/row_control/distinct_agents.h"
#include "wattcut/row_control/planning_server_client.h"
#include "wattcut/row_control/row_agent_client.h"
#include "wattcut/row_control/row_controller.h"
#include "wattcut/row_control/row_file.h"

namespace wattcut::cli {
namespace {

struct ControlArgs {
  std::string row_path;
  std::string config_path;
  std::string token_file;
  std::string mode;
  bool in_band = false;
  std::string duration = "0";
  std::string log_path;
  std::string listen;
  std::string policy = "polca";
  double ceiling_lease_s = 0;
  std::string planning_server;
  std::string planning_token_file;
};

// "8h", "30m", "90s", "90" (seconds); 0: until stopped.
Result<double> ParseDuration(const std::string& text) {
  if (text.empty()) return Error{"--duration: expected a number of seconds or NUMBER with s, m or h"};
  double scale = 1;
  std::string number = text;
  switch (text.back()) {
    case 's':
      number.pop_back();
      break;
    case 'm':
      scale = 60;
      number.pop_back();
      break;
    case 'h':
      scale = 3600;
      number.pop_back();
      break;
    default:
      break;
  }
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(number, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != number.size() || !std::isfinite(value) || value < 0 || value * scale > 366 * 86400.0) {
    return Error{"--duration: expected a number of seconds or NUMBER with s, m or h (at most a year), got '" +
                 PrintableText(text) + "'"};
  }
  return value * scale;
}

// The controller's view of the agents, over RowAgents' HTTP calls; each call bounded by the period.
row_control::RowCalls CallsOver(row_control::RowAgents& agents, double period_s) {
  using Clock = row_control::RowAgents::Clock;
  auto deadline = [period_s] {
    return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(0.8 * period_s));
  };
  row_control::RowCalls calls;
  calls.read_power_w = [&agents, deadline] {
    std::vector<Result<double>> out;
    for (auto& sample : agents.ReadAll(deadline())) {
      out.push_back(sample.ok() ? Result<double>(sample->power_w) : Result<double>(sample.error()));
    }
    return out;
  };
  calls.send = [&agents, deadline](const std::vector<row_control::CeilingCommand>& commands) {
    std::vector<row_control::AgentCommand> out;
    for (const row_control::CeilingCommand& c : commands) {
      row_control::AgentCommand command;
      command.server = c.server;
      command.kind =
          c.mhz ? row_control::AgentCommand::Kind::kSetCeilings : row_control::AgentCommand::Kind::kClearCeilings;
      command.mhz = c.mhz.value_or(0);
      command.lease_s = static_cast<int>(std::ceil(c.lease_s));
      command.reason = c.reason;
      out.push_back(command);
    }
    return agents.SendAll(out, deadline());
  };
  calls.read_ceilings = [&agents, deadline] {
    std::vector<Result<std::vector<row_control::ObservedCeiling>>> out;
    for (auto& ceilings : agents.ReadAllCeilings(deadline())) {
      std::vector<row_control::ObservedCeiling> observed;
      if (ceilings.ok()) {
        for (const row_control::GpuCeiling& c : ceilings->ceilings) observed.push_back({c.reason, c.expires_in_s});
      }
      using Observed = Result<std::vector<row_control::ObservedCeiling>>;
      out.push_back(ceilings.ok() ? Observed(std::move(observed)) : Observed(ceilings.error()));
    }
    return out;
  };
  return calls;
}

// The planning server's power-target calls (training_targets.h).
row_control::TrainingCalls TrainingCallsOver(row_control::PlanningServerClient& planning) {
  row_control::TrainingCalls calls;
  calls.set = [&planning](const std::string& job, double w, const std::string& reason, double lease_s) {
    return planning.SetPeakPowerTarget(job, w, reason, lease_s);
  };
  calls.get = [&planning](const std::string& job) { return planning.GetPowerTarget(job); };
  calls.clear = [&planning](const std::string& job) { return planning.ClearPowerTarget(job); };
  return calls;
}

int Run(const ControlArgs& args) {
  const std::string name = "polca control";
  auto duration_s = ParseDuration(args.duration);
  if (!duration_s.ok()) return ReportError(name, duration_s.error());
  auto config = polca::ReadConfigFile(args.config_path);
  if (!config.ok()) return ReportError(name, config.error());
  auto policy = polca::ParsePolicyKind(args.policy);
  if (!policy.ok()) return ReportError(name, policy.error());
  if (*policy == polca::PolicyKind::kPowerCap) {
    return ReportError(name, Error{"--policy power-cap: the live controller sets clock ceilings through the agents; "
                                   "power caps are simulated only (polca simulate)"});
  }
  auto servers = row_control::ReadRowFile(args.row_path);
  if (!servers.ok()) return ReportError(name, servers.error());
  if (Status once = row_control::CheckEachAgentOnce(*servers, args.row_path); !once.ok()) {
    return ReportError(name, once.error());
  }
  auto token = http::ReadTokenFile(args.token_file);
  if (!token.ok()) return ReportError(name, token.error().WithContext("--token-file: "));
  std::unique_ptr<row_control::DecisionLogFile> log;
  if (!args.log_path.empty()) {
    auto opened = row_control::DecisionLogFile::Open(args.log_path);
    if (!opened.ok()) return ReportError(name, opened.error());
    log = std::move(*opened);
  }
  std::optional<std::pair<std::string, int>> listen;
  if (!args.listen.empty()) {
    auto split = SplitListen(args.listen);
    if (!split.ok()) return ReportError(name, split.error());
    listen = *split;
  }
  const double period_s = config->control.telemetry_period_s;
  size_t training_servers = 0;
  for (const row_control::RowServer& s : *servers) training_servers += s.training_job_id.empty() ? 0 : 1;
  std::unique_ptr<row_control::PlanningServerClient> planning;
  if (training_servers > 0) {
    if (args.planning_server.empty()) {
      return ReportError(name, Error{args.row_path + ": " + std::to_string(training_servers) +
                                     " training servers need --planning-server URL (the `wattcut serve` their jobs "
                                     "are registered with)"});
    }
    std::string planning_token;
    if (!args.planning_token_file.empty()) {
      auto read = http::ReadTokenFile(args.planning_token_file);
      if (!read.ok()) return ReportError(name, read.error().WithContext("--planning-token-file: "));
      planning_token = *read;
    }
    auto created = row_control::PlanningServerClient::Create(args.planning_server, planning_token,
                                                             row_control::AgentTimeouts::ForPeriod(period_s));
    if (!created.ok()) return ReportError(name, created.error().WithContext("--planning-server: "));
    planning = std::move(*created);
  } else if (!args.planning_server.empty()) {
    ReportWarning(name, "--planning-server is not used: " + args.row_path + " has no training server");
  }

  auto agents = row_control::RowAgents::Create(*servers, *token, row_control::AgentTimeouts::ForPeriod(period_s));
  if (!agents.ok()) return ReportError(name, agents.error());
  (*agents)->ReadInstantGpuPower(args.in_band);  // in-band: NVML's instant power, not its 1 s average
  // Every agent must answer, with a token of the row scope, before anything is decided.
  auto checked = (*agents)->CheckAll(row_control::RowAgents::Clock::now() + std::chrono::seconds(10));
  if (!checked.ok()) return ReportError(name, checked.error());

  StopSignals stop_signals;
  row_control::RowControllerOptions options;
  options.config = *config;
  options.policy = *policy;
  options.shadow = args.mode == "shadow";
  options.in_band = args.in_band;
  options.ceiling_lease_s = args.ceiling_lease_s;
  row_control::DecisionLogFile* log_file = log.get();
  options.log = [log_file, name](const std::string& line) {
    if (log_file != nullptr && !log_file->Write(line) && log_file->error().size() > 0) {
      static bool warned = false;
      if (!warned) ReportWarning(name, log_file->error() + " (the controller goes on)");
      warned = true;
    }
  };
  std::vector<row_control::ControlledServer> controlled;
  for (const row_control::RowServer& s : *servers) controlled.push_back({s.name, s.priority, s.training_job_id});
  row_control::RowCalls calls = CallsOver(**agents, period_s);
  if (planning) calls.training = TrainingCallsOver(*planning);
  row_control::RowController controller(options, controlled, calls);
  std::mutex controller_mu;  // the metrics listener reads what the loop writes

  const double start_s = SteadyNowS();
  const row_control::RowPolicyState resumed = controller.Resume(0);
  // A planning server that cannot be asked is no reason not to run (its jobs get ceilings when
  // the row needs them), but say so now: a wrong URL or job id should not wait for a threshold.
  for (const std::string& e : controller.training().resume_errors()) {
    ReportWarning(name, e + " (its servers get clock ceilings whenever the row needs them, until it answers)");
  }
  std::cerr << "wattcut polca control: " << servers->size() << " servers, budget " << controller.row_budget_w()
            << " W, " << (options.shadow ? "shadow mode (nothing is sent)" : "enforcing") << ", "
            << (args.in_band ? "in-band" : "out-of-band (commands held for the actuation latency)")
            << (planning ? ", " + std::to_string(training_servers) + " training servers on " + planning->base_url()
                         : std::string())
            << "; resumed in state " << row_control::CeilingReason(resumed) << "\n";

  std::unique_ptr<http::BoundedHttpServer> metrics;
  std::thread metrics_thread;
  if (listen) {
    metrics = std::make_unique<http::BoundedHttpServer>(http::ConnectionLimits{}, http::BoundedHttpServer::Observer{});
    metrics->Get("/metrics", [&controller, &controller_mu](const httplib::Request&, httplib::Response& res) {
      std::lock_guard lock(controller_mu);
      res.set_content(controller.RenderMetrics(), "text/plain; version=0.0.4; charset=utf-8");
    });
    metrics->Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("{\"status\":\"ok\"}\n", "application/json");
    });
    int port = listen->second;
    if (port == 0) {
      port = metrics->bind_to_any_port(listen->first);
    } else if (!metrics->bind_to_port(listen->first, port)) {
      port = -1;
    }
    if (port < 0) return ReportError(name, Error{"cannot listen on " + args.listen});
    http::BoundedHttpServer* raw = metrics.get();
    metrics_thread = std::thread([raw] { raw->listen_after_bind(); });
    std::cerr << "wattcut polca control: metrics on http://" << listen->first << ":" << port << "/metrics\n";
  }

  std::mutex stop_mu;
  std::condition_variable stop_cv;
  bool stop = false;
  stop_signals.OnStop([&] {
    std::lock_guard lock(stop_mu);
    stop = true;
    stop_cv.notify_all();
  });
  std::map<std::string, row_control::TrainingState> training_states;
  std::map<std::string, std::string> stale_reasons;  // server -> the reason last reported
  std::cout << "wattcut polca control: running" << std::endl;
  for (int64_t period = 0;; ++period) {
    const double now_s = SteadyNowS() - start_s;
    if (*duration_s > 0 && now_s >= *duration_s) break;
    {
      std::lock_guard lock(controller_mu);
      const row_control::Decision d = controller.RunPeriod(now_s, UnixNowS());
      for (const std::string& e : d.send_errors) ReportWarning(name, e + " (retried next period)");
      // A server's stale reading, once per change of its reason, and once when it is read again.
      for (const auto& [server, why] : d.stale_reasons) {
        auto [seen, first] = stale_reasons.try_emplace(server, why);
        if (!first && seen->second == why) continue;
        seen->second = why;
        ReportWarning(name, "server " + server + ": stale reading: " + why);
      }
      for (auto it = stale_reasons.begin(); it != stale_reasons.end();) {
        if (d.stale_reasons.count(it->first) != 0) {
          ++it;
          continue;
        }
        std::cerr << "wattcut polca control: server " << it->first << ": read again\n";
        it = stale_reasons.erase(it);
      }
      for (const row_control::TrainingJobReport& t : d.training) {
        // Once per change of state, not every period.
        auto [seen, first] = training_states.try_emplace(t.job_id, t.state);
        if (!first && seen->second == t.state) continue;
        seen->second = t.state;
        if (t.state == row_control::TrainingState::kFallback) {
          ReportWarning(name, "training job " + t.job_id + ": clock ceilings on its servers: " + t.detail);
        } else if (t.state != row_control::TrainingState::kNone || !first) {
          std::cerr << "wattcut polca control: training job " << t.job_id << ": "
                    << row_control::TrainingStateName(t.state) << (t.detail.empty() ? "" : ": " + t.detail) << "\n";
        }
      }
    }
    const double next_s = start_s + (period + 1) * period_s;
    std::unique_lock lock(stop_mu);
    if (stop_cv.wait_for(lock, std::chrono::duration<double>(std::max(0.0, next_s - SteadyNowS())),
                         [&] { return stop; })) {
      break;
    }
  }
  stop_signals.Finish();
  if (metrics) {
    metrics->stop();
    metrics_thread.join();
  }
  if (options.shadow) {
    std::cerr << "wattcut polca control: stopped; shadow mode sent nothing, so nothing is left at the agents\n";
  } else {
    std::cerr << "wattcut polca control: stopped; the ceilings stay at the agents until their lease runs out ("
              << controller.ceiling_lease_s() << " s)\n";
  }
  return 0;
}

}  // namespace

void AddPolcaControlCommand(CLI::App& polca, CommandStatus& status) {
  auto args = std::make_shared<ControlArgs>();
  CLI::App* cmd = polca.add_subcommand(
      "control", "Run POLCA on a real row through its node agents (shadow first: decide and log, change nothing)");
  cmd->add_option("--row", args->row_path,
                  "Row file: one 'NAME AGENT_URL PRIORITY' or 'NAME AGENT_URL training JOB_ID' line per server")
      ->required();
  cmd->add_option("--config", args->config_path, "Row config (wattcut polca config prints one)")->required();
  cmd->add_option("--token-file", args->token_file, "File whose first line is an agent token of scope row")->required();
  cmd->add_option("--mode", args->mode, "shadow (decide and log only) or enforce")
      ->check(CLI::IsMember({"shadow", "enforce"}))
      ->required();
  cmd->add_flag("--in-band", args->in_band, "Commands take effect when sent (NVML through the agent)");
  cmd->add_option("--duration", args->duration, "Stop after this long: 90s, 30m, 8h (0: until stopped)")
      ->capture_default_str();
  cmd->add_option("--log", args->log_path, "Decision log, one JSON object per reading (appended)");
  cmd->add_option("--listen", args->listen, "HOST:PORT for Prometheus /metrics");
  cmd->add_option("--policy", args->policy, "polca, headroom, uniform-cap or brake-only")->capture_default_str();
  cmd->add_option("--ceiling-lease", args->ceiling_lease_s,
                  "Seconds a ceiling stays in force without renewal (0: max(30, 10 telemetry periods))");
  cmd->add_option("--planning-server", args->planning_server,
                  "http://HOST:PORT of the wattcut serve the row's training jobs are registered with (asked for "
                  "their plan under a power target)");
  cmd->add_option("--planning-token-file", args->planning_token_file,
                  "File whose first line is the planning server's token (its --token-file)");
  cmd->callback([args, &status] { status.exit_code = Run(*args); });
}

}  // namespace wattcut::cli
