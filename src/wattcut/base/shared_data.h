// Where the authors' measured data (../shared/data) lives. Tests and the bench use it;
// the product never needs it.
#pragma once

#include <string>

namespace wattcut {

// $WATTCUT_SHARED_DIR if set, else the path configured at build time (repo/../shared).
std::string SharedDir();
// SharedDir() + "/data/" + relative.
std::string SharedDataPath(const std::string& relative);
// True when running under CI (CI=true in the environment).
bool RunningUnderCi();

}  // namespace wattcut
