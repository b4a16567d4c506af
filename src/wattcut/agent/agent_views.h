// The node agent's state as its /v1 API shows it (docs/agent.md, openapi.yaml): a GPU's
// description, readings and controls, a lease and its holder, a batch job and its energy. Views
// only: they read what they are given, and change nothing.
#pragma once

#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "wattcut/agent/node_agent.h"

namespace wattcut::agent {

nlohmann::json RangeJson(const std::optional<ClockRange>& range);
nlohmann::json HolderJson(const LeaseHolder& holder);
nlohmann::json LeaseJson(const Lease& lease);
// `node` tells how long the ceiling has left.
nlohmann::json ControlJson(const NodeAgent& node, const GpuControl& control);
// A registered job; its credential only for the admin that registered it.
nlohmann::json JobJson(const NodeJob& job, bool with_credential);
nlohmann::json JobEnergyJson(const JobEnergy& energy);
nlohmann::json JobEndJson(const JobEnd& end);
nlohmann::json GpuJson(const GpuDescription& d);
// Each GPU's readings, a value that could not be read null and its error under "errors".
nlohmann::json GpuReadingsJson(const std::vector<GpuReading>& readings);

}  // namespace wattcut::agent
