// The process's limit on open descriptors (RLIMIT_NOFILE), which bounds the connections a
// server holds: every waiting long poll and every idle keep-alive connection is one. A server
// raises its soft limit to the hard one at start (the soft default, 1,024 on many systems, is
// for programs that do not expect many connections); the hard limit is the administrator's
// (systemd's LimitNOFILE=, `ulimit -Hn`).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace wattcut::http {

struct DescriptorLimit {
  uint64_t soft = 0;  // after raising
  uint64_t hard = 0;
};

// Raises the soft limit to the hard one (capped at 1,048,576); what the limits are now.
DescriptorLimit RaiseDescriptorLimit();

// A warning when `needed` descriptors (the connections a server is configured to hold, and a
// margin for its files) do not fit in `limit.soft`; nullopt when they do. `what` names the
// setting: "--max-long-polls 16384".
std::optional<std::string> DescriptorLimitWarning(const DescriptorLimit& limit, uint64_t needed,
                                                  const std::string& what);

}  // namespace wattcut::http
