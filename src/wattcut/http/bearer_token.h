// Bearer tokens (RFC 6750) as the server and the node agent check them: the credentials of an
// "Authorization: Bearer <token>" header, compared in constant time.
#pragma once

#include <optional>
#include <string_view>

namespace wattcut::http {

// Equal strings, in time that depends only on the lengths.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

// The token of an Authorization header value: the scheme "Bearer" in any case (RFC 7235), one
// or more spaces, the token with surrounding blanks removed. nullopt for any other header.
std::optional<std::string_view> BearerCredentials(std::string_view authorization_header);

}  // namespace wattcut::http
