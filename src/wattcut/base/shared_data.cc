#include "wattcut/base/shared_data.h"

#include <cstdlib>
#include <string_view>

namespace wattcut {

std::string SharedDir() {
  if (const char* env = std::getenv("WATTCUT_SHARED_DIR"); env != nullptr && *env != '\0') {
    return env;
  }
  return WATTCUT_SHARED_DIR_DEFAULT;
}

std::string SharedDataPath(const std::string& relative) { return SharedDir() + "/data/" + relative; }

bool RunningUnderCi() {
  const char* env = std::getenv("CI");
  return env != nullptr && (std::string_view(env) == "true" || std::string_view(env) == "1");
}

}  // namespace wattcut
