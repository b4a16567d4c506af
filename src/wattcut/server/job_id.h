// The id a registered job gets, as Zeus's server makes it:
//   YYYY-MM-DD-HH-MM-SS+dpD+ppP+tpT+perseus+SEQ[+METADATA]
// the registration's UTC time, the job's degrees, the store's sequence number, and its metadata
// with every character outside [A-Za-z0-9._-] written as '_'.
#pragma once

#include <cstdint>
#include <string>

#include "wattcut/server/http_api.h"

namespace wattcut::server {

std::string JobIdFor(const JobInfo& info, int64_t seq, double now_unix_s);

}  // namespace wattcut::server
