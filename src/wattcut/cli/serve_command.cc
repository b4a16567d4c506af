// `wattcut serve`: the planning server (see docs/server.md).
#include <pthread.h>
#include <signal.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "wattcut/base/fixed_decimals.h"
#include "wattcut/base/printable_text.h"
#include "wattcut/cli/command.h"
#include "wattcut/cli/listen_address.h"
#include "wattcut/cli/stop_signals.h"
#include "wattcut/http/descriptor_limit.h"
#include "wattcut/plan/planner_defaults.h"
#include "wattcut/server/http_api.h"
#include "wattcut/server/server.h"
#include "wattcut/server/startup_profiles.h"

namespace wattcut::cli {
namespace {

// Threads cost stack address space and kernel tasks; beyond this a typo, not a deployment.
constexpr int kMaxHttpThreads = 16384;
// A waiting long poll costs a descriptor and about 1.2 KB (docs/server.md, Threads); beyond
// this a typo.
constexpr int kMaxLongPolls = 1 << 20;
// Descriptors beside the long polls: the store, the listener, the other clients' connections.
constexpr int kDescriptorMargin = 256;

struct ServeArgs {
  std::string listen = "127.0.0.1:7787";
  std::string data_dir;
  std::string token_file;
  size_t max_body_bytes = size_t{16} << 20;
  int max_long_polls = server::JobRegistry::Options{}.max_long_polls;
  int http_threads = 0;
  int frontier_threads = 1;
  double long_poll_timeout_s = 600;
  double request_timeout_s = 30;
  int max_connections_per_client = 64;
  bool limit_loopback_clients = false;
  std::string sync = "full";
  int microbatches = 0;
  std::string schedule = "1f1b";
  double unit_time_s = kDefaultUnitTimeS;
  double p2p_power_w = 0;
  std::vector<std::string> profiles_for_new_jobs;
};

// The default planner settings go through the same checks as a job's planner object.
Result<server::PlannerSettings> DefaultPlanner(const ServeArgs& args) {
  nlohmann::json settings = {
      {"schedule", args.schedule}, {"unit_time_s", args.unit_time_s}, {"p2p_power_w", args.p2p_power_w}};
  if (args.microbatches != 0) settings["num_microbatches"] = args.microbatches;
  auto planner = server::PlannerSettingsFromJson(settings);
  if (!planner) {
    return Error{"default planner settings (--microbatches, --schedule, --unit-time, --p2p-power): " +
                 planner.error().message};
  }
  return planner;
}

// The --profile-for-new-jobs files, each with its frontier computed with the default planner
// settings, before the server listens; says on stderr what each one took.
Result<server::StartupProfiles> LoadProfilesForNewJobs(const ServeArgs& args, const server::PlannerSettings& planner) {
  server::StartupProfiles out;
  if (args.profiles_for_new_jobs.empty()) return out;
  if (args.microbatches == 0) {
    return Error{
        "--profile-for-new-jobs needs --microbatches: each profile's frontier is computed at start-up with "
        "the default planner settings (--microbatches, --schedule, --unit-time, --p2p-power)"};
  }
  auto read = server::ReadStartupProfiles(args.profiles_for_new_jobs);
  if (!read) return read.error().WithContext("--profile-for-new-jobs: ");
  for (server::StartupProfile& profile : *read) {
    for (const DroppedFrequency& dropped : profile.warnings) {
      ReportWarning("serve", PrintableText(profile.path) + ": " + DroppedFrequencyMessage(dropped));
    }
    if (auto s = server::ComputeStartupFrontier(profile, planner); !s) {
      return s.error().WithContext("--profile-for-new-jobs: ");
    }
    std::cerr << "wattcut serve: " << PrintableText(profile.path) << ": " << profile.num_stages() << " stages, "
              << profile.frontier->points().size() << " frontier points computed in "
              << FixedDecimals(profile.compute_seconds, 3) << " s; new jobs with pp_degree " << profile.num_stages()
              << " and the default planner settings get it (profile_source \"" << PrintableText(profile.source())
              << "\")\n";
    out.push_back(std::make_shared<const server::StartupProfile>(std::move(profile)));
  }
  return out;
}

int Run(const ServeArgs& args) {
  const std::string name = "serve";
  auto listen = SplitListen(args.listen);
  if (!listen) return ReportError(name, listen.error());
  auto planner = DefaultPlanner(args);
  if (!planner) return ReportError(name, planner.error());
  auto startup_profiles = LoadProfilesForNewJobs(args, *planner);
  if (!startup_profiles) return ReportError(name, startup_profiles.error());
  server::ServerOptions options;
  options.host = listen->first;
  options.port = listen->second;
  options.data_dir = args.data_dir;
  if (!args.token_file.empty()) options.token_file = args.token_file;
  options.max_body_bytes = args.max_body_bytes;
  options.http_threads = args.http_threads;
  options.sync = args.sync == "normal" ? server::SyncMode::kNormal : server::SyncMode::kFull;
  options.registry.max_long_polls = args.max_long_polls;
  options.registry.frontier_threads = args.frontier_threads;
  options.registry.long_poll_timeout = std::chrono::milliseconds(static_cast<int64_t>(args.long_poll_timeout_s * 1000));
  options.registry.default_planner = *planner;
  options.registry.startup_profiles = std::move(*startup_profiles);
  options.connections.request_timeout = std::chrono::milliseconds(static_cast<int64_t>(args.request_timeout_s * 1000));
  options.connections.max_connections_per_client = args.max_connections_per_client;
  options.connections.limit_loopback = args.limit_loopback_clients;

  // Every waiting long poll holds a descriptor: the soft limit goes up to the hard one.
  const http::DescriptorLimit descriptors = http::RaiseDescriptorLimit();
  if (auto warning =
          http::DescriptorLimitWarning(descriptors, static_cast<uint64_t>(args.max_long_polls) + kDescriptorMargin,
                                       "--max-long-polls " + std::to_string(args.max_long_polls))) {
    std::cerr << "wattcut serve: warning: " << *warning << "\n";
  }
  // A file-size limit (ulimit -f) or a full disk must be a failed write, not a killed server.
  signal(SIGXFSZ, SIG_IGN);

  StopSignals stop_signals;

  auto server = server::Server::Create(options);
  if (!server) return ReportError(name, server.error());
  for (const server::QuarantinedJob& q : (*server)->quarantined_jobs()) {
    std::cerr << "wattcut serve: job " << PrintableText(q.job_id)
              << " quarantined (its stored data cannot be read; its rows are kept): " << PrintableText(q.error, 400)
              << "\n";
  }
  if (!(*server)->loopback_only() && !options.token_file) {
    std::cerr << "wattcut serve: warning: listening on " << PrintableText(options.host)
              << " (beyond loopback) without --token-file: endpoints that change a job's "
                 "frequencies answer 403\n";
  }
  // The last line of start-up: what scripts and tests wait for.
  std::cout << "wattcut serve: listening on http://" << options.host << ":" << (*server)->port() << " (data in "
            << options.data_dir << ")" << std::endl;
  server::Server* raw = server->get();
  stop_signals.OnStop([raw] { raw->Stop(); });
  bool ok = raw->Run();
  stop_signals.Finish();
  if (!ok) {
    std::string why = raw->run_error().empty() ? "" : ": " + raw->run_error();
    return ReportError(name, Error{"the listener failed" + why});
  }
  return 0;
}

}  // namespace

void AddServeCommand(CLI::App& app, CommandStatus& status) {
  auto args = std::make_shared<ServeArgs>();
  CLI::App* cmd = app.add_subcommand("serve",
                                     "Run the planning server: jobs, profiles, frontiers and per-rank schedules over "
                                     "HTTP (the Zeus pipeline-frequency-optimizer API plus /v1)");
  cmd->add_option("--listen", args->listen, "HOST:PORT to listen on (port 0: any free port)")->capture_default_str();
  cmd->add_option("--data-dir", args->data_dir, "Folder of the SQLite store (created if absent)")->required();
  cmd->add_option("--token-file", args->token_file,
                  "File whose first line is the bearer token every request must carry");
  cmd->add_option("--max-body-bytes", args->max_body_bytes, "Largest request body accepted")
      ->check(CLI::Range(size_t{1024}, size_t{1} << 30))
      ->capture_default_str();
  cmd->add_option("--max-long-polls", args->max_long_polls,
                  "Schedule long polls that may wait at once (a job of N ranks needs N - 1)")
      ->check(CLI::Range(0, kMaxLongPolls))
      ->capture_default_str();
  cmd->add_option("--http-threads", args->http_threads,
                  "HTTP worker threads (0: " + std::to_string(server::ServerOptions::kDefaultHttpThreads) +
                      "); a waiting long poll holds none")
      ->check(CLI::Range(0, kMaxHttpThreads))
      ->capture_default_str();
  cmd->add_option("--frontier-threads", args->frontier_threads, "Background threads computing frontiers")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->add_option("--long-poll-timeout", args->long_poll_timeout_s,
                  "Seconds a schedule request waits for the other ranks before a 504")
      ->check(CLI::Range(0.001, 86400.0))
      ->capture_default_str();
  cmd->add_option("--request-timeout", args->request_timeout_s,
                  "Seconds within which a request's line, headers and body must all arrive "
                  "(counted from its first byte; a long poll's wait is not counted)")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  cmd->add_option("--max-connections-per-client", args->max_connections_per_client,
                  "Open connections one client address may hold; more are refused with a 503 "
                  "(0: no limit; loopback clients are exempt unless --limit-loopback-clients)")
      ->check(CLI::Range(0, 1 << 20))
      ->capture_default_str();
  cmd->add_flag("--limit-loopback-clients", args->limit_loopback_clients,
                "Apply --max-connections-per-client to loopback clients too");
  cmd->add_option("--sync", args->sync, "SQLite synchronous mode: full or normal")
      ->check(CLI::IsMember({"full", "normal"}))
      ->capture_default_str();
  cmd->add_option("--microbatches", args->microbatches,
                  "Default num_microbatches for jobs registered without planner settings");
  cmd->add_option("--schedule", args->schedule, "Default pipeline schedule: 1f1b or gpipe")
      ->check(CLI::IsMember({"1f1b", "gpipe"}))
      ->capture_default_str();
  cmd->add_option("--unit-time", args->unit_time_s, "Default planner unit time (s)")->capture_default_str();
  cmd->add_option("--p2p-power", args->p2p_power_w, "Default blocking power (W)")->capture_default_str();
  cmd->add_option("--profile-for-new-jobs", args->profiles_for_new_jobs,
                  "Profile CSV for new jobs (repeatable, one per stage count S): its frontier is computed at "
                  "start-up with the default planner settings (needs --microbatches), and a job registered "
                  "with pp_degree S and those settings gets it at once, so its first schedule fetch is the "
                  "plan (Zeus clients fetch once)")
      ->type_name("CSV")
      ->allow_extra_args(false);
  cmd->callback([args, &status] { status.exit_code = Run(*args); });
}

}  // namespace wattcut::cli
