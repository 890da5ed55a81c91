// Fuzz target: arbitrary bytes as the JSON body of every endpoint's request parser.
// Properties: no crash; a rejected body always carries a 4xx status and a message.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/api/request_parser.h"
#include "fuzz/fuzz_check.h"

namespace api = radixserve::api;

namespace {

void CheckError(bool ok, const api::ApiError& error) {
  if (ok) return;
  FUZZ_CHECK(error.http_status >= 400 && error.http_status < 500);
  FUZZ_CHECK(!error.message.empty());
  (void)error.ToJson();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view body(reinterpret_cast<const char*>(data), size);
  api::ApiLimits limits;
  {
    api::GenerateRequest req;
    api::ApiError error;
    CheckError(api::ParseCompletionRequest(body, limits, &req, &error), error);
  }
  {
    api::GenerateRequest req;
    api::ApiError error;
    bool ok = api::ParseChatCompletionRequest(body, limits, &req, &error);
    CheckError(ok, error);
    if (ok) {
      FUZZ_CHECK(req.n >= 1 && req.n <= limits.max_n);
      FUZZ_CHECK(static_cast<int32_t>(req.spec.stop_strs.size()) <= limits.max_stop_strings);
    }
  }
  {
    api::GenerateRequest req;
    api::ApiError error;
    CheckError(api::ParseNativeGenerateRequest(body, limits, &req, &error), error);
  }
  {
    api::TokenizeRequest req;
    api::ApiError error;
    CheckError(api::ParseTokenizeRequest(body, limits, &req, &error), error);
  }
  {
    api::DetokenizeRequest req;
    api::ApiError error;
    CheckError(api::ParseDetokenizeRequest(body, limits, &req, &error), error);
  }
  return 0;
}
