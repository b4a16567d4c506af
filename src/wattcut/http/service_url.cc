#include "wattcut/http/service_url.h"

#include <cctype>

#include "wattcut/base/printable_text.h"

namespace wattcut::http {

namespace {

bool IsHostNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '-' || c == '_';
}

bool IsIpv6Char(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0 || c == ':' || c == '.'; }

}  // namespace

Result<ServiceUrl> SplitServiceUrl(std::string_view url, std::string_view what, const ServiceUrlForm& form) {
  const std::string shown = std::string(what) + " '" + PrintableText(url, 200) + "'";
  const std::string port_form = form.default_port.empty() ? ":PORT" : "[:PORT]";
  const std::string expected = form.https ? "expected http://HOST" + port_form + " or https://HOST" + port_form
                                          : "expected http://HOST" + port_form;
  ServiceUrl split;
  std::string_view rest;
  if (url.substr(0, 7) == "http://") {
    rest = url.substr(7);
  } else if (url.substr(0, 8) == "https://") {
    if (!form.https) {
      return Error{shown + ": " + expected + " (plain HTTP: https is not supported here; put a TLS proxy in front)"};
    }
    split.https = true;
    rest = url.substr(8);
  } else {
    return Error{shown + ": " + expected + (form.https ? " (the scheme is http or https)" : " (the scheme is http)")};
  }
  if (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  if (rest.find('/') != std::string_view::npos || rest.find('?') != std::string_view::npos) {
    return Error{shown + ": " + expected + " (no path: the API is under /v1 of it)"};
  }
  std::string_view host;
  std::string_view port;
  bool has_port = true;
  if (!rest.empty() && rest.front() == '[') {
    const size_t close = rest.find(']');
    if (close == std::string_view::npos) return Error{shown + ": " + expected + " (no ']')"};
    host = rest.substr(1, close - 1);
    if (host.empty()) return Error{shown + ": " + expected + " (an empty IPv6 address)"};
    for (char c : host) {
      if (!IsIpv6Char(c)) return Error{shown + ": " + expected + " (a bad IPv6 address)"};
    }
    if (close + 1 == rest.size()) {
      has_port = false;
    } else if (rest[close + 1] != ':') {
      return Error{shown + ": " + expected + " (':PORT' after ']')"};
    } else {
      port = rest.substr(close + 2);
    }
  } else {
    const size_t colon = rest.rfind(':');
    if (colon == std::string_view::npos) {
      host = rest;
      has_port = false;
    } else {
      host = rest.substr(0, colon);
      port = rest.substr(colon + 1);
    }
    if (host.empty()) return Error{shown + ": " + expected + " (no host)"};
    for (char c : host) {
      if (!IsHostNameChar(c)) {
        return Error{shown + ": " + expected + " (the host holds '" + PrintableText(std::string(1, c)) + "')"};
      }
    }
  }
  if (!has_port) {
    if (form.default_port.empty()) return Error{shown + ": " + expected + " (no port)"};
    port = form.default_port;
  }
  int port_number = 0;
  bool digits = !port.empty() && port.size() <= 5;
  for (char c : port) {
    if (!std::isdigit(static_cast<unsigned char>(c))) digits = false;
    if (digits) port_number = port_number * 10 + (c - '0');
  }
  if (!digits || port_number < 1 || port_number > 65535) {
    return Error{shown + ": " + expected + " (a port of 1-65535)"};
  }
  split.url = std::string(url.substr(0, url.size() - (url.back() == '/' ? 1 : 0)));
  split.host = std::string(host);
  split.port = std::string(port);
  return split;
}

}  // namespace wattcut::http
