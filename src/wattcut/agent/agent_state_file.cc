#include "wattcut/agent/agent_state_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "wattcut/base/json_object.h"
#include "wattcut/base/unix_time.h"

namespace wattcut::agent {

using nlohmann::json;

std::string AgentStatePath(const std::string& state_dir) { return state_dir + "/agent-state.json"; }

namespace {

Result<AgentStateFile> Parse(const std::string& text) {
  json doc = ParseJsonOrDiscarded(text);
  if (doc.is_discarded() || !doc.is_object()) return Error::Corruption("not a JSON object");
  if (doc.value("schema_version", 0) != 1) return Error::Corruption("schema_version is not 1");
  AgentStateFile state;
  try {
    for (const json& c : doc.at("ceilings")) {
      StoredCeiling ceiling;
      ceiling.gpu = c.at("gpu").get<int>();
      ceiling.mhz = c.at("mhz").get<int>();
      ceiling.reason = c.at("reason").get<std::string>();
      ceiling.expires_at_unix_s = c.at("expires_at_unix_s").get<double>();
      state.ceilings.push_back(ceiling);
    }
    for (const json& g : doc.at("power_limit_changed_gpus")) state.power_limit_changed_gpus.push_back(g.get<int>());
    for (const json& j : doc.value("jobs", json::array())) {
      NodeJob job;
      job.id = j.at("id").get<std::string>();
      job.uid = j.at("uid").get<int>();
      job.gpus = j.at("gpus").get<std::vector<int>>();
      job.credential = j.at("credential").get<std::string>();
      job.started_at_unix_s = j.at("started_at_unix_s").get<double>();
      job.touched = j.at("touched").get<bool>();
      for (const auto& [gpu, mj] : j.at("energy_at_start_mj").items()) {
        job.energy_at_start_mj[std::stoi(gpu)] =
            mj.is_null() ? std::nullopt : std::optional<int64_t>(mj.get<int64_t>());
      }
      state.jobs.push_back(std::move(job));
    }
  } catch (const std::exception& e) {  // json's, or std::stoi's on a GPU key that is no number
    return Error::Corruption(e.what());
  }
  return state;
}

}  // namespace

Result<AgentStateFile> LoadAgentState(const std::string& state_dir, std::string& warning) {
  warning.clear();
  const std::string path = AgentStatePath(state_dir);
  std::ifstream in(path);
  if (!in) {
    if (errno == ENOENT) return AgentStateFile{};
    return Error::IOError("cannot read " + path + ": " + std::strerror(errno));
  }
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto state = Parse(text);
  if (state.ok()) return state;
  const std::string aside = path + ".corrupt-" + std::to_string(static_cast<int64_t>(UnixNowS()));
  ::rename(path.c_str(), aside.c_str());
  warning =
      path + " cannot be read (" + state.error().message + "): kept as " + aside + "; starting without stored ceilings";
  return AgentStateFile{};
}

Status SaveAgentState(const std::string& state_dir, const AgentStateFile& state) {
  json doc = {{"schema_version", 1}, {"ceilings", json::array()}, {"power_limit_changed_gpus", json::array()}};
  for (const StoredCeiling& c : state.ceilings) {
    doc["ceilings"].push_back(
        {{"gpu", c.gpu}, {"mhz", c.mhz}, {"reason", c.reason}, {"expires_at_unix_s", c.expires_at_unix_s}});
  }
  for (int gpu : state.power_limit_changed_gpus) doc["power_limit_changed_gpus"].push_back(gpu);
  doc["jobs"] = json::array();
  for (const NodeJob& job : state.jobs) {
    json energy = json::object();
    for (const auto& [gpu, mj] : job.energy_at_start_mj) energy[std::to_string(gpu)] = mj ? json(*mj) : json(nullptr);
    doc["jobs"].push_back({{"id", job.id},
                           {"uid", job.uid},
                           {"gpus", job.gpus},
                           {"credential", job.credential},
                           {"started_at_unix_s", job.started_at_unix_s},
                           {"touched", job.touched},
                           {"energy_at_start_mj", energy}});
  }
  const std::string text = doc.dump(2) + "\n";
  const std::string path = AgentStatePath(state_dir);
  const std::string temporary = path + ".tmp";
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Error::IOError("cannot write " + temporary + ": " + std::strerror(errno));
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && ::fsync(fd) == 0;
  const int write_errno = errno;
  ok = ::close(fd) == 0 && ok;
  if (!ok || ::rename(temporary.c_str(), path.c_str()) != 0) {
    ::unlink(temporary.c_str());
    return Error::IOError("cannot write " + path + ": " + std::strerror(ok ? errno : write_errno));
  }
  return Status::Ok();
}

}  // namespace wattcut::agent
