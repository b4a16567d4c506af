#include "wattcut/runtime/watchdog_protocol.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace wattcut::watchdog {
namespace {

constexpr char kReadyOk[] = "ok";
constexpr char kReadyErrorPrefix[] = "error: ";

}  // namespace

std::vector<std::string> HelperCommandLine(const HelperArguments& arguments) {
  std::vector<std::string> args = {"--gpu", std::to_string(arguments.gpu)};
  if (!arguments.nvml_library.empty()) args.insert(args.end(), {"--nvml-library", arguments.nvml_library});
  if (arguments.dry_run) args.push_back("--dry-run");
  if (arguments.require_memory_lock) args.push_back("--require-memory-lock");
  args.insert(args.end(), {"--poll-interval-us", std::to_string(arguments.poll_interval_us)});
  return args;
}

Result<HelperArguments> ParseHelperCommandLine(int argc, char** argv) {
  HelperArguments arguments;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--gpu" && i + 1 < argc) {
      arguments.gpu = std::atoi(argv[++i]);
    } else if (arg == "--nvml-library" && i + 1 < argc) {
      arguments.nvml_library = argv[++i];
    } else if (arg == "--poll-interval-us" && i + 1 < argc) {
      arguments.poll_interval_us = std::atol(argv[++i]);
    } else if (arg == "--dry-run") {
      arguments.dry_run = true;
    } else if (arg == "--require-memory-lock") {
      arguments.require_memory_lock = true;
    } else {
      return Error{"unknown argument '" + arg + "' (this program is started by wattcut's frequency setter)"};
    }
  }
  return arguments;
}

std::string ReadyReply(const Status& started) {
  return started.ok() ? std::string(kReadyOk) : kReadyErrorPrefix + started.error().message;
}

std::optional<Status> ParseReadyReply(const std::string& reply) {
  if (reply == kReadyOk) return Status::Ok();
  if (reply.rfind(kReadyErrorPrefix, 0) == 0) return Status(Error{reply.substr(std::strlen(kReadyErrorPrefix))});
  return std::nullopt;
}

void CopyErrorText(char* out, const std::string& message) {
  const size_t n = std::min(message.size(), static_cast<size_t>(kErrorSize - 1));
  std::memcpy(out, message.data(), n);
  out[n] = '\0';
}

void WriteLastError(Shared& shared, const std::string& message) {
  shared.error_seq.fetch_add(1);
  CopyErrorText(shared.last_error, message);
  shared.error_seq.fetch_add(1);
}

std::string ReadLastError(const Shared& shared) {
  char copy[kErrorSize];
  uint32_t before, after;
  do {
    before = shared.error_seq.load();
    std::memcpy(copy, shared.last_error, sizeof copy);
    after = shared.error_seq.load();
  } while (before != after || (before & 1u) != 0);
  copy[kErrorSize - 1] = '\0';
  return copy;
}

}  // namespace wattcut::watchdog
