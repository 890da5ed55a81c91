#include "core/api/api_error.h"

#include <nlohmann/json.hpp>

namespace radixserve::api {

ApiError ApiError::BadRequest(std::string param, std::string message) {
  return {400, "invalid_request_error", std::move(param), std::move(message)};
}
ApiError ApiError::Unauthorized(std::string message) {
  return {401, "authentication_error", "", std::move(message)};
}
ApiError ApiError::NotFound(std::string message) { return {404, "not_found_error", "", std::move(message)}; }
ApiError ApiError::Unavailable(std::string message) {
  return {503, "service_unavailable_error", "", std::move(message), /*retry_after_s=*/1};
}
ApiError ApiError::Internal(std::string message) { return {500, "internal_server_error", "", std::move(message)}; }

ApiError ApiError::FromStatus(const Status& status, std::string param) {
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kOutOfRange:
    case StatusCode::kUnsupported:
      return BadRequest(std::move(param), status.message());
    case StatusCode::kNotFound:
      return {404, "not_found_error", std::move(param), status.message()};
    case StatusCode::kResourceExhausted:
      return {429, "rate_limit_error", std::move(param), status.message(), /*retry_after_s=*/1};
    case StatusCode::kUnavailable:
      return {503, "service_unavailable_error", std::move(param), status.message(), /*retry_after_s=*/1};
    case StatusCode::kFailedPrecondition:
      return {503, "service_unavailable_error", std::move(param), status.message()};
    default:
      return {500, "internal_server_error", std::move(param), status.message()};
  }
}

std::string ApiError::ToJson() const {
  nlohmann::json error = {{"message", message}, {"type", type}, {"code", http_status}};
  error["param"] = param.empty() ? nlohmann::json(nullptr) : nlohmann::json(param);
  return nlohmann::json{{"error", std::move(error)}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace radixserve::api
