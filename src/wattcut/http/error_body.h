// The JSON body of every error answer of wattcut's HTTP services: {"error": message}, with any
// invalid UTF-8 of the message replaced (a message may quote what a client sent).
#pragma once

#include <string>

namespace wattcut::http {

std::string ErrorBody(const std::string& message);

}  // namespace wattcut::http
