// One segment of a request path, percent-encoded: every byte but the unreserved ones (letters,
// digits, '-', '_', '.', '~') as %XX, so that a job id's '+' or ':' reaches the server as itself.
#pragma once

#include <string>
#include <string_view>

namespace wattcut::http {

std::string EncodePathSegment(std::string_view segment);

}  // namespace wattcut::http
