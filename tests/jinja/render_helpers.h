// Helpers for the Jinja engine tests: render a template source in one call.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/jinja/template.h"

namespace radixserve::jinja::testing {

using nlohmann::ordered_json;

// 2026-01-15 12:00:00 UTC, the moment of the reference renders.
inline std::chrono::system_clock::time_point ReferenceNow() {
  return std::chrono::system_clock::time_point(std::chrono::seconds(1768478400));
}

inline Result<std::string> TryRender(std::string_view source, const ordered_json& context = ordered_json::object(),
                                     RenderLimits limits = {}) {
  auto tmpl = Template::Parse(source, limits);
  if (!tmpl.ok()) return tmpl.status();
  RenderOptions options;
  options.now = ReferenceNow();
  options.limits = limits;
  return tmpl->Render(context, options);
}

// The rendered text, or "ERROR <code>: <message>" so that a failure shows in EXPECT_EQ.
inline std::string Render(std::string_view source, const ordered_json& context = ordered_json::object()) {
  auto r = TryRender(source, context);
  return r.ok() ? *r : "ERROR " + r.status().ToString();
}

// The error of a render that must fail (OK when it did not).
inline Status RenderError(std::string_view source, const ordered_json& context = ordered_json::object(),
                          RenderLimits limits = {}) {
  auto r = TryRender(source, context, limits);
  return r.ok() ? Status::Ok() : r.status();
}

}  // namespace radixserve::jinja::testing
