// The SPANK plugin's own settings, the words after its path on its plugstack.conf line:
//
//   required /usr/lib/wattcut/wattcut_spank.so server=http://10.0.0.5:7787 default=fastest
//
//   server=URL          the planning server the jobs' ranks use (a job may give its own with
//                       --wattcut-server); none: jobs run unmanaged unless they give one
//   default=MODE        what a job gets without --wattcut (wattcut_mode.h); default off, so that
//                       installing the plugin changes no job until its user or the admin asks
//   agent_socket=PATH   the node agent's socket (default /run/wattcut/agent.sock)
//   server_token_file=PATH  a token of the planning server (its `serve --token-file`), for the
//                       epilog's report of a job's GPU energy; none: reported without one
//   scontrol=PATH       Slurm's scontrol, that the epilog records a job's energy with in its
//                       AdminComment (default /usr/bin/scontrol)
#pragma once

#include <string>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/slurm/wattcut_mode.h"

namespace wattcut::slurm {

inline constexpr const char* kDefaultAgentSocket = "/run/wattcut/agent.sock";
inline constexpr const char* kDefaultScontrol = "/usr/bin/scontrol";

struct PluginConfig {
  std::string server_url;
  WattcutMode default_mode{WattcutMode::Kind::kOff, 0};
  std::string agent_socket = kDefaultAgentSocket;
  std::string server_token_file;
  std::string scontrol = kDefaultScontrol;
};

// The words of the plugstack.conf line; an unknown or malformed word is an error naming it and
// listing the accepted ones.
Result<PluginConfig> ParsePluginConfig(const std::vector<std::string>& words);

// A planning server's URL as a job may give it: the form the job's ranks take it in
// (http::kPlanServerUrlForm: http://HOST[:PORT], no path), so that what sbatch accepts they do too.
Status CheckServerUrl(const std::string& url, const std::string& what);

}  // namespace wattcut::slurm
