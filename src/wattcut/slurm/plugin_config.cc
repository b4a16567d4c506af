#include "wattcut/slurm/plugin_config.h"

#include "wattcut/base/printable_text.h"
#include "wattcut/http/service_url.h"

namespace wattcut::slurm {

Status CheckServerUrl(const std::string& url, const std::string& what) {
  auto split = http::SplitServiceUrl(url, what, http::kPlanServerUrlForm);
  if (!split.ok()) return split.error();
  return Status::Ok();
}

Result<PluginConfig> ParsePluginConfig(const std::vector<std::string>& words) {
  constexpr const char* kAccepted =
      "expected server=URL, default=MODE, agent_socket=PATH, server_token_file=PATH or scontrol=PATH";
  PluginConfig config;
  for (const std::string& word : words) {
    const size_t eq = word.find('=');
    const std::string key = eq == std::string::npos ? word : word.substr(0, eq);
    const std::string value = eq == std::string::npos ? std::string() : word.substr(eq + 1);
    const std::string shown = "wattcut plugin argument '" + PrintableText(word, 200) + "'";
    if (eq == std::string::npos) return Error{shown + ": " + kAccepted};
    if (key == "server") {
      if (Status s = CheckServerUrl(value, "wattcut plugin argument server="); !s) return s.error();
      config.server_url = value;
    } else if (key == "default") {
      auto mode = ParseWattcutMode(value);
      if (!mode) return Error{shown + ": " + mode.error().message};
      config.default_mode = *mode;
    } else if (key == "agent_socket" || key == "server_token_file" || key == "scontrol") {
      if (value.empty() || value[0] != '/') return Error{shown + ": expected an absolute path"};
      (key == "agent_socket" ? config.agent_socket
       : key == "scontrol"   ? config.scontrol
                             : config.server_token_file) = value;
    } else {
      return Error{shown + ": unknown; " + kAccepted};
    }
  }
  return config;
}

}  // namespace wattcut::slurm
