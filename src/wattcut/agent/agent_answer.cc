#include "wattcut/agent/agent_answer.h"

#include "wattcut/base/error_code.h"
#include "wattcut/http/error_body.h"
#include "wattcut/http/http_status.h"

namespace wattcut::agent {

std::string JsonText(const nlohmann::json& doc) {
  return doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string JsonText(const nlohmann::ordered_json& doc) {
  return doc.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

void Answer(httplib::Response& res, int status, const nlohmann::json& doc) {
  res.status = status;
  res.set_content(JsonText(doc) + "\n", "application/json");
}

void AnswerError(httplib::Response& res, int status, const std::string& code, const std::string& message) {
  Answer(res, status, nlohmann::json{{"error", message}, {"code", code}});
}

void AnswerError(httplib::Response& res, const Error& error) {
  AnswerError(res, http::HttpStatusFor(error.code), std::string(ErrorCodeName(error.code)), error.message);
}

void AnswerZeusd(httplib::Response& res, int status, const nlohmann::ordered_json& doc) {
  res.status = status;
  res.set_content(JsonText(doc), "application/json");
}

void AnswerZeusdError(httplib::Response& res, int status, const std::string& message) {
  res.status = status;
  res.set_content(http::ErrorBody(message), "application/json");
}

void AnswerZeusdText(httplib::Response& res, int status, const std::string& text) {
  res.status = status;
  res.set_content(text, "text/plain; charset=utf-8");
}

}  // namespace wattcut::agent
