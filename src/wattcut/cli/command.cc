#include "wattcut/cli/command.h"

#include <iostream>

namespace wattcut::cli {

int ReportError(const std::string& command_name, const Error& error) {
  std::cerr << "wattcut " << command_name << ": error: " << error.message << "\n";
  return 1;
}

void ReportWarning(const std::string& command_name, const std::string& message) {
  std::cerr << "wattcut " << command_name << ": warning: " << message << "\n";
}

}  // namespace wattcut::cli
