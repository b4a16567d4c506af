// zeusd's power streams (server-sent events, never ending): GET /gpu/stream_power and
// /cpu/stream_power. Each stream polls at zeusd's rate and sends a device's sample when it differs
// from the one it sent last (the first always), as zeusd's pollers do; after StreamWriter's
// heartbeat without one, an SSE comment. A stream holds no worker (http/periodic_streams.h); they
// count against the listener's kMaxReadingStreams with /v1's.
#pragma once

#include <httplib.h>

#include "wattcut/agent/agent_routes.h"
#include "wattcut/agent/zeusd_routes.h"

namespace wattcut::agent {

// Each answers the request, admitted (zeusd_admission.h), from its query on.
void ServeGpuPowerStream(const httplib::Request& req, httplib::Response& res, const AgentRouteContext& context,
                         const ZeusdApiContext& zeusd, const OpenStreams& open_streams);
void ServeCpuPowerStream(const httplib::Request& req, httplib::Response& res, const AgentRouteContext& context,
                         const ZeusdApiContext& zeusd, const OpenStreams& open_streams);

// The GPUs' and CPUs' indices zeusd's device lists name.
std::vector<int> GpuIds(const NodeAgent& node);
std::vector<int> CpuIds(const ZeusdApiContext& zeusd);

}  // namespace wattcut::agent
