// ApiError: an HTTP error in the OpenAI error format.
//
// Every client-visible failure of the api node is one of these: the HTTP
// status plus {"error": {"message", "type", "param", "code"}}. Plain value
// type, thread-compatible.
#pragma once

#include <string>

#include "core/util/status.h"

namespace radixserve::api {

struct ApiError {
  int http_status = 400;
  std::string type = "invalid_request_error";  // OpenAI's error "type"
  std::string param;                           // the offending field, empty when none
  std::string message;                         // says which field and what was expected
  int retry_after_s = 0;                       // > 0: sent as a Retry-After header (overload, 503)

  static ApiError BadRequest(std::string param, std::string message);
  static ApiError Unauthorized(std::string message);
  static ApiError NotFound(std::string message);
  // 503 with Retry-After: 1 (not ready, shutting down, queue full: worth retrying shortly).
  static ApiError Unavailable(std::string message);
  static ApiError Internal(std::string message);
  // Maps a Status from a lower layer (backend, tokenizer) to an HTTP error; Unavailable → 503 with Retry-After.
  static ApiError FromStatus(const Status& status, std::string param = "");

  // {"error": {"message", "type", "param", "code"}}; param is null when empty, code is the status.
  std::string ToJson() const;
};

}  // namespace radixserve::api
