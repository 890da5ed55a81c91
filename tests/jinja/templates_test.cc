// Renders the 22 real chat templates of ../shared/templates against the 13 reference
// conversations and compares each result with what Python jinja2 3.1.6 produced
// (expected.json): the text byte for byte, or the error (raise_exception's message exactly;
// for Python's own TypeError/UndefinedError it is enough that rendering fails).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "core/jinja/template.h"

namespace radixserve::jinja {
namespace {

using nlohmann::ordered_json;

const std::string kDir = std::string(RADIXSERVE_SHARED_DIR) + "/templates/";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

ordered_json ReadJson(const std::string& name) { return ordered_json::parse(ReadFile(kDir + name)); }

// 2026-01-15 12:00:00 UTC, the moment strftime_now formats in the reference renders.
std::chrono::system_clock::time_point ReferenceNow() {
  return std::chrono::system_clock::time_point(std::chrono::seconds(1768478400));
}

// "first difference at byte N" with a little of both texts around it.
std::string Difference(const std::string& want, const std::string& got) {
  size_t i = 0;
  while (i < want.size() && i < got.size() && want[i] == got[i]) ++i;
  const size_t from = i > 40 ? i - 40 : 0;
  return "first difference at byte " + std::to_string(i) + " (expected " + std::to_string(want.size()) +
         " bytes, got " + std::to_string(got.size()) + ")\n  expected: " + ordered_json(want.substr(from, 100)).dump() +
         "\n  got:      " + ordered_json(got.substr(from, 100)).dump();
}

TEST(JinjaTemplatesTest, EveryReferencePairRendersLikeJinja2) {
  const ordered_json expected = ReadJson("expected.json");
  const ordered_json conversations = ReadJson("conversations.json");
  std::map<std::string, const ordered_json*> cases;
  for (const auto& c : conversations["cases"]) cases[c["id"].get<std::string>()] = &c;

  RenderOptions options;
  options.now = ReferenceNow();
  int total = 0, passed = 0;
  for (const auto& [name, results] : expected.items()) {
    auto tmpl = Template::Parse(ReadFile(kDir + name + ".jinja"));
    ASSERT_TRUE(tmpl.ok()) << name << ": " << tmpl.status().ToString();
    for (const auto& [key, result] : results.items()) {
      SCOPED_TRACE(name + " " + key);
      ++total;
      const ordered_json& conv = *cases.at(result["case"].get<std::string>());
      ordered_json context = ordered_json::object();
      context["messages"] = conv["messages"];
      context["add_generation_prompt"] = result["add_generation_prompt"];
      context["bos_token"] = result["bos_token"];
      context["eos_token"] = result["eos_token"];
      if (result["tools_passed"].get<bool>()) context["tools"] = conv["tools"];
      if (result.contains("extra_context")) {
        for (const auto& [k, v] : result["extra_context"].items()) context[k] = v;
      }
      auto rendered = tmpl->Render(context, options);
      bool ok;
      if (result.contains("rendered")) {
        const std::string want = result["rendered"].get<std::string>();
        ok = rendered.ok() && *rendered == want;
        if (!rendered.ok()) {
          ADD_FAILURE() << "render failed: " << rendered.status().ToString();
        } else {
          EXPECT_EQ(*rendered, want) << Difference(want, *rendered);
        }
      } else if (result["error_type"] == "TemplateError") {  // raise_exception: exact message
        const std::string want = result["error"].get<std::string>();
        ok = !rendered.ok() && rendered.status().code() == StatusCode::kInvalidArgument &&
             rendered.status().message() == want;
        EXPECT_TRUE(ok) << "want raise_exception(" << want << "), got "
                        << (rendered.ok() ? "a render" : rendered.status().ToString());
      } else {  // a Python runtime error: rendering must fail, not with raise_exception's code
        ok = !rendered.ok() && rendered.status().code() == StatusCode::kFailedPrecondition;
        EXPECT_TRUE(ok) << "want " << result["error_type"].get<std::string>() << ": "
                        << result["error"].get<std::string>() << ", got "
                        << (rendered.ok() ? "a render" : rendered.status().ToString());
      }
      passed += ok ? 1 : 0;
    }
  }
  std::printf("[ jinja ] %d of %d reference (template, conversation) pairs match jinja2\n", passed, total);
  EXPECT_EQ(total, 352);
  EXPECT_EQ(passed, total);
}

}  // namespace
}  // namespace radixserve::jinja
