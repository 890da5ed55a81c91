// The JSON Schema front-end over shared/jsonschema/cases.jsonl (2,000 real-world schemas with
// valid and invalid instances; see its README): every schema is compiled, and each instance is
// checked for membership in the grammar's language with the test-only byte recognizer.
//
// Printed per family: schemas compiled, refusals by keyword, valid instances accepted, valid
// instances rejected only because their keys are out of the schema's property order (the
// grammar fixes the order, as OpenAI's strict mode does: counted apart, not as failures),
// invalid instances rejected, and invalid instances accepted where the cause is a documented
// gap (a format the grammar does not enforce on an `invalid_format_only` line, or a keyword the
// compile reported as not enforced).
//
// Asserted (the bar of issue 39): at least 98 % of the schemas compile; no valid instance of a
// compiled schema is rejected except for key order; no invalid instance is accepted except for
// a documented gap.
#include <gtest/gtest.h>

#include "tests/grammar/sanitized_stride.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/grammar/json_schema.h"
#include "core/grammar/json_schema_formats.h"
#include "tests/grammar/byte_recognizer.h"

namespace radixserve::grammar {
namespace {


using Json = nlohmann::ordered_json;

std::string CasesPath() { return std::string(RADIXSERVE_SHARED_DIR) + "/jsonschema/cases.jsonl"; }

// The keyword a refusal names: the last token of the JSON pointer its message starts with.
std::string RefusedKeyword(const std::string& message) {
  const size_t colon = message.find(": ");
  std::string pointer = colon == std::string::npos ? "" : message.substr(0, colon);
  const size_t slash = pointer.rfind('/');
  std::string k = slash == std::string::npos ? "(root)" : pointer.substr(slash + 1);
  if (message.find("regex") != std::string::npos && message.find("unsupported construct") != std::string::npos)
    k += " (regex)";
  return k.empty() ? "(root)" : k;
}

// Resolves a local $ref for the key-order walk.
const Json* Deref(const Json& root, const Json& s, int depth = 0) {
  if (depth > 20 || !s.is_object()) return &s;
  auto it = s.find("$ref");
  if (it == s.end() || !it->is_string()) return &s;
  const std::string ref = it->get<std::string>();
  if (ref.rfind("#", 0) != 0) return &s;
  try {
    const Json& t = root.at(Json::json_pointer(ref.substr(1)));
    return Deref(root, t, depth + 1);
  } catch (...) {
    return &s;
  }
}

// The property names a schema lists at this place, in the order the compiler follows: keywords
// in document order, through $ref, allOf and if / then / else, and of anyOf / oneOf the branch
// that lists most of the instance's keys (the branch the instance takes).
void ListedKeys(const Json& root, const Json& s_in, const Json& inst, std::vector<std::string>* out, int depth) {
  if (depth > 20) return;
  const Json& s = *Deref(root, s_in);
  if (!s.is_object()) return;
  for (const auto& [k, v] : s.items()) {
    if (k == "properties" && v.is_object()) {
      for (const auto& [name, sub] : v.items())
        if (std::find(out->begin(), out->end(), name) == out->end()) out->push_back(name);
    } else if (k == "allOf" && v.is_array()) {
      for (const auto& x : v) ListedKeys(root, x, inst, out, depth + 1);
    } else if ((k == "anyOf" || k == "oneOf") && v.is_array()) {
      const Json* best = nullptr;
      int best_score = -1;
      for (const auto& x : v) {
        std::vector<std::string> keys;
        ListedKeys(root, x, inst, &keys, depth + 1);
        int score = 0;
        for (const auto& key : keys) score += inst.contains(key);
        if (score > best_score) best = &x, best_score = score;
      }
      if (best) ListedKeys(root, *best, inst, out, depth + 1);
    } else if (k == "if" || k == "then" || k == "else") {
      ListedKeys(root, v, inst, out, depth + 1);
    }
  }
}

bool KeyMatches(const std::string& pattern, const std::string& key) {
  try {
    return std::regex_search(key, std::regex(pattern, std::regex::ECMAScript));
  } catch (...) {
    return false;
  }
}

// The subschemas that apply to the value of `key` at this place.
void ValueSchemas(const Json& root, const Json& s_in, const std::string& key, std::vector<const Json*>* out, int depth) {
  if (depth > 20) return;
  const Json& s = *Deref(root, s_in);
  if (!s.is_object()) return;
  bool listed = false;
  if (auto p = s.find("properties"); p != s.end() && p->is_object() && p->contains(key)) {
    out->push_back(&(*p)[key]);
    listed = true;
  }
  if (auto pp = s.find("patternProperties"); pp != s.end() && pp->is_object())
    for (const auto& [pat, sub] : pp->items())
      if (KeyMatches(pat, key)) out->push_back(&sub), listed = true;
  if (auto ap = s.find("additionalProperties"); !listed && ap != s.end() && ap->is_object()) out->push_back(&*ap);
  for (const char* k : {"allOf", "anyOf", "oneOf"})
    if (auto a = s.find(k); a != s.end() && a->is_array())
      for (const auto& x : *a) ValueSchemas(root, x, key, out, depth + 1);
  for (const char* k : {"then", "else"})
    if (auto a = s.find(k); a != s.end()) ValueSchemas(root, *a, key, out, depth + 1);
}

// The item schemas at this place.
void ItemSchemas(const Json& root, const Json& s_in, size_t index, std::vector<const Json*>* out, int depth) {
  if (depth > 20) return;
  const Json& s = *Deref(root, s_in);
  if (!s.is_object()) return;
  if (auto it = s.find("items"); it != s.end()) {
    if (it->is_object()) out->push_back(&*it);
    if (it->is_array() && index < it->size()) out->push_back(&(*it)[index]);
  }
  if (auto it = s.find("prefixItems"); it != s.end() && it->is_array() && index < it->size())
    out->push_back(&(*it)[index]);
  for (const char* k : {"allOf", "anyOf", "oneOf"})
    if (auto a = s.find(k); a != s.end() && a->is_array())
      for (const auto& x : *a) ItemSchemas(root, x, index, out, depth + 1);
}

// The instance with every object's keys put in the order its schema lists them.
Json Reorder(const Json& root, const std::vector<const Json*>& schemas, const Json& v, int depth = 0) {
  if (depth > 40) return v;
  if (v.is_object()) {
    std::vector<std::string> order;
    for (const Json* s : schemas) ListedKeys(root, *s, v, &order, 0);
    Json out = Json::object();
    auto put = [&](const std::string& k) {
      std::vector<const Json*> sub;
      for (const Json* s : schemas) ValueSchemas(root, *s, k, &sub, 0);
      out[k] = Reorder(root, sub, v.at(k), depth + 1);
    };
    for (const auto& k : order)
      if (v.contains(k)) put(k);
    for (const auto& [k, x] : v.items())
      if (!out.contains(k)) put(k);
    return out;
  }
  if (v.is_array()) {
    Json out = Json::array();
    for (size_t i = 0; i < v.size(); ++i) {
      std::vector<const Json*> items;
      for (const Json* s : schemas) ItemSchemas(root, *s, i, &items, 0);
      out.push_back(Reorder(root, items, v[i], depth + 1));
    }
    return out;
  }
  return v;
}

// Whether some array in `v` holds two equal items.
bool HasRepeatedItem(const Json& v) {
  if (v.is_array()) {
    for (size_t i = 0; i < v.size(); ++i)
      for (size_t j = i + 1; j < v.size(); ++j)
        if (v[i] == v[j]) return true;
    for (const auto& x : v)
      if (HasRepeatedItem(x)) return true;
  }
  if (v.is_object())
    for (const auto& [k, x] : v.items())
      if (HasRepeatedItem(x)) return true;
  return false;
}

struct FamilyStats {
  int schemas = 0, compiled = 0;
  int valid = 0, valid_accepted = 0, valid_order = 0, valid_bug = 0;
  int invalid = 0, invalid_rejected = 0, invalid_format_gap = 0, invalid_not_enforced = 0, invalid_bug = 0;
};

TEST(JsonSchemaCorpus, MeetsTheBar) {
  std::ifstream in(CasesPath());
  ASSERT_TRUE(in) << "no " << CasesPath();
  std::map<std::string, FamilyStats> families;
  std::map<std::string, int> refused_by_keyword;
  std::map<std::string, int> not_enforced_by_keyword;
  std::vector<std::string> bugs, refusals;
  std::vector<double> compile_ms;
  const bool verbose = getenv("JSON_SCHEMA_CORPUS_VERBOSE") != nullptr;
  std::string line;
  for (size_t line_no = 0; std::getline(in, line); ++line_no) {
    if (line_no % kSanitizedStride != 0) continue;  // a sample under the sanitizers
    const Json c = Json::parse(line);
    const std::string id = c["id"].get<std::string>();
    FamilyStats& f = families[c["family"].get<std::string>()];
    ++f.schemas;
    JsonSchemaReport report;
    const auto t0 = std::chrono::steady_clock::now();
    auto g = CompileJsonSchema(c["schema"], JsonSchemaOptions{}, GrammarLimits{}, &report);
    compile_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    if (!g.ok()) {
      ++refused_by_keyword[RefusedKeyword(g.status().message())];
      refusals.push_back(id + ": " + g.status().ToString());
      continue;
    }
    ++f.compiled;
    testing::ByteRecognizer rec(*g);
    Grammar any_order_grammar;
    std::unique_ptr<testing::ByteRecognizer> any_order;
    for (const auto& v : c["valid"]) {
      const std::string text = v.get<std::string>();
      ++f.valid;
      if (rec.Recognizes(text)) {
        ++f.valid_accepted;
        continue;
      }
      // Out of the schema's key order? Then the same instance in order is accepted, or the
      // grammar that lets properties come in any order accepts it (the instance is valid, so it
      // has what required / minProperties ask: only the order can differ).
      const Json parsed = Json::parse(text);
      const std::string ordered = Reorder(c["schema"], {&c["schema"]}, parsed).dump();
      if (!any_order) {
        JsonSchemaOptions relaxed;
        relaxed.strict_property_order = false;
        auto ga = CompileJsonSchema(c["schema"], relaxed);
        if (ga.ok()) {
          any_order_grammar = std::move(ga).value();
          any_order = std::make_unique<testing::ByteRecognizer>(any_order_grammar);
        }
      }
      if (rec.Recognizes(ordered) || (any_order && any_order->Recognizes(text))) {
        ++f.valid_order;
        if (verbose) printf("order %s: %s\n", id.c_str(), text.substr(0, 300).c_str());
        continue;
      }
      ++f.valid_bug;
      bugs.push_back(id + ": valid instance rejected: " + text.substr(0, 300));
    }
    std::map<size_t, std::vector<std::string>> format_only;
    if (c.contains("invalid_format_only"))
      for (const auto& e : c["invalid_format_only"]) format_only[e["i"].get<size_t>()] = e["formats"];
    for (size_t i = 0; i < c["invalid"].size(); ++i) {
      const std::string text = c["invalid"][i].get<std::string>();
      ++f.invalid;
      if (!rec.Recognizes(text)) {
        ++f.invalid_rejected;
        continue;
      }
      if (format_only.count(i)) {
        bool all_enforced = true;
        for (const auto& fmt : format_only[i])
          all_enforced &= internal::ClassifyFormat(fmt) == internal::FormatKind::kEnforced;
        if (!all_enforced) {
          ++f.invalid_format_gap;
          continue;
        }
      }
      // A documented gap explains the acceptance only if the instance can break it: uniqueItems
      // only with a repeated item somewhere, a format only with a string.
      std::set<std::string> kws;
      const Json parsed = Json::parse(text);
      for (const auto& ne : report.not_enforced) {
        const std::string k = RefusedKeyword(ne);
        if (k == "uniqueItems" && !HasRepeatedItem(parsed)) continue;
        // Keywords of another draft: the reference validator ignores them as well.
        if (ne.find("is not a keyword of the schema's draft") != std::string::npos) continue;
        kws.insert(k);
      }
      if (!kws.empty()) {
        ++f.invalid_not_enforced;
        for (const auto& k : kws) ++not_enforced_by_keyword[k];
        if (verbose) printf("not enforced %s: %s\n", id.c_str(), text.substr(0, 200).c_str());
        continue;
      }
      ++f.invalid_bug;
      bugs.push_back(id + ": invalid instance accepted: " + text.substr(0, 300));
    }
  }
  FamilyStats total;
  printf("\n%-16s %7s %8s %13s %6s %6s %13s %7s %7s %5s\n", "family", "schemas", "compiled", "valid acc/all",
         "order", "v.bug", "invalid rej", "fmt.gap", "not.enf", "i.bug");
  for (const auto& [name, f] : families) {
    printf("%-16s %7d %8d %6d/%-6d %6d %6d %6d/%-6d %7d %7d %5d\n", name.c_str(), f.schemas, f.compiled,
           f.valid_accepted, f.valid, f.valid_order, f.valid_bug, f.invalid_rejected, f.invalid, f.invalid_format_gap,
           f.invalid_not_enforced, f.invalid_bug);
    total.schemas += f.schemas, total.compiled += f.compiled, total.valid += f.valid;
    total.valid_accepted += f.valid_accepted, total.valid_order += f.valid_order, total.valid_bug += f.valid_bug;
    total.invalid += f.invalid, total.invalid_rejected += f.invalid_rejected;
    total.invalid_format_gap += f.invalid_format_gap, total.invalid_not_enforced += f.invalid_not_enforced;
    total.invalid_bug += f.invalid_bug;
  }
  printf("%-16s %7d %8d %6d/%-6d %6d %6d %6d/%-6d %7d %7d %5d\n", "total", total.schemas, total.compiled,
         total.valid_accepted, total.valid, total.valid_order, total.valid_bug, total.invalid_rejected, total.invalid,
         total.invalid_format_gap, total.invalid_not_enforced, total.invalid_bug);
  printf("\nrefused, by keyword:");
  for (const auto& [k, n] : refused_by_keyword) printf(" %s %d;", k.c_str(), n);
  printf("\ninvalid accepted where a keyword is reported not enforced, by keyword:");
  for (const auto& [k, n] : not_enforced_by_keyword) printf(" %s %d;", k.c_str(), n);
  std::sort(compile_ms.begin(), compile_ms.end());
  if (!compile_ms.empty())
    printf("\ncompile ms: p50 %.2f p99 %.2f max %.2f\n", compile_ms[compile_ms.size() / 2],
           compile_ms[compile_ms.size() * 99 / 100], compile_ms.back());
  for (const auto& r : refusals) printf("refused %s\n", r.c_str());
  for (const auto& b : bugs) printf("BUG %s\n", b.c_str());

  EXPECT_GE(total.compiled * 100, total.schemas * 98) << "fewer than 98 % of the schemas compile";
  EXPECT_EQ(total.valid_bug, 0) << "valid instances rejected (not for key order)";
  EXPECT_EQ(total.invalid_bug, 0) << "invalid instances accepted (not for a documented gap)";
}

}  // namespace
}  // namespace radixserve::grammar
