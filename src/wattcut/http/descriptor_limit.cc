#include "wattcut/http/descriptor_limit.h"

#include <sys/resource.h>

#include <algorithm>

namespace wattcut::http {

namespace {
constexpr uint64_t kMostRaised = uint64_t{1} << 20;
}  // namespace

DescriptorLimit RaiseDescriptorLimit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return {};
  const rlim_t target = std::min<rlim_t>(limit.rlim_max, kMostRaised);
  if (limit.rlim_cur < target) {
    rlimit raised = limit;
    raised.rlim_cur = target;
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
  }
  return {static_cast<uint64_t>(limit.rlim_cur), static_cast<uint64_t>(limit.rlim_max)};
}

std::optional<std::string> DescriptorLimitWarning(const DescriptorLimit& limit, uint64_t needed,
                                                  const std::string& what) {
  if (limit.soft == 0 || needed <= limit.soft) return std::nullopt;
  return "the open-file limit (" + std::to_string(limit.soft) + ", hard " + std::to_string(limit.hard) +
         ") is below the " + std::to_string(needed) + " descriptors " + what +
         " may hold: connections beyond it are refused by the kernel (raise LimitNOFILE= or ulimit -n)";
}

}  // namespace wattcut::http
