#include "wattcut/http/error_body.h"

#include <nlohmann/json.hpp>

namespace wattcut::http {

std::string ErrorBody(const std::string& message) {
  return nlohmann::json{{"error", message}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace wattcut::http
