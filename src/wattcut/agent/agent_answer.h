// How the node agent's two HTTP APIs write an answer (agent_routes.h's /v1, zeusd_routes.h's
// zeusd API): the body, its status and type, and the one error answer of each dialect. Any invalid
// UTF-8 in a value (a message may quote what a client sent) is replaced, never a throw.
#pragma once

#include <string>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "wattcut/base/result.h"

namespace wattcut::agent {

// Compact JSON text of `doc`.
std::string JsonText(const nlohmann::json& doc);
std::string JsonText(const nlohmann::ordered_json& doc);

// /v1: `doc` as JSON with a newline.
void Answer(httplib::Response& res, int status, const nlohmann::json& doc);
// /v1's error: {"error": message, "code": code}, with the status of the code (http/http_status.h)
// or the one given.
void AnswerError(httplib::Response& res, const Error& error);
void AnswerError(httplib::Response& res, int status, const std::string& code, const std::string& message);
// The error of `value` answered when it has one; false then.
template <typename T>
bool Unwrap(Result<T>& value, httplib::Response& res) {
  if (value.ok()) return true;
  AnswerError(res, value.error());
  return false;
}

// zeusd's dialect: `doc` as JSON without a newline, as zeusd writes it; its error {"error": message};
// its query refusals and some write errors as plain text.
void AnswerZeusd(httplib::Response& res, int status, const nlohmann::ordered_json& doc);
void AnswerZeusdError(httplib::Response& res, int status, const std::string& message);
void AnswerZeusdText(httplib::Response& res, int status, const std::string& text);

}  // namespace wattcut::agent
