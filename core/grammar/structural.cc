#include "core/grammar/structural.h"

#include <chrono>
#include <cstdint>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/grammar/json_schema.h"

namespace radixserve::grammar {

namespace {

using Json = nlohmann::ordered_json;

constexpr int64_t kMaxWhitespace = 64;
constexpr size_t kMaxTriggerBytes = 128;  // real triggers are markers of a few to 30 bytes

struct CallSpec {
  std::string begin, end;
  const Json* schema = nullptr;  // null: any JSON object
};

struct StructuralSpec {
  std::vector<CallSpec> calls;
  std::string prefix, separator, suffix, trigger;
  bool lazy = false;
  int64_t min_calls = 1;
  int64_t max_calls = -1;
  int64_t max_whitespace = 0;
};

// `s` as a JSON string, for messages (never throws on bad UTF-8).
std::string Quoted(const std::string& s) { return Json(s).dump(-1, ' ', false, Json::error_handler_t::replace); }

Status CheckKeys(const Json& obj, std::initializer_list<const char*> known, const std::string& where) {
  for (const auto& [key, value] : obj.items()) {
    bool ok = false;
    for (const char* k : known) ok |= key == k;
    if (ok) continue;
    std::string list;
    for (const char* k : known) list += (list.empty() ? "" : ", ") + std::string(k);
    return Status::InvalidArgument(where + key + ": unknown key (the keys are " + list + ")");
  }
  return Status::Ok();
}

Status ReadString(const Json& obj, const char* key, const std::string& field, std::string* out) {
  auto it = obj.find(key);
  if (it == obj.end()) return Status::Ok();
  if (!it->is_string()) return Status::InvalidArgument(field + ": must be a string");
  *out = it->get<std::string>();
  return Status::Ok();
}

// An integer key in [lo, hi]; `range` says the bounds in the message.
Status ReadInteger(const Json& obj, const char* key, int64_t lo, int64_t hi, const std::string& range,
                   int64_t* out) {
  auto it = obj.find(key);
  if (it == obj.end()) return Status::Ok();
  const std::string bad = std::string(key) + ": must be an integer " + range;
  if (!it->is_number_integer()) return Status::InvalidArgument(bad);
  if (it->is_number_unsigned() && it->get<uint64_t>() > static_cast<uint64_t>(hi)) return Status::InvalidArgument(bad);
  const int64_t v = it->get<int64_t>();
  if (v < lo || v > hi) return Status::InvalidArgument(bad);
  *out = v;
  return Status::Ok();
}

Status ReadCall(const Json& c, const std::string& field, CallSpec* out) {
  if (!c.is_object()) return Status::InvalidArgument(field + ": must be an object");
  if (Status s = CheckKeys(c, {"begin", "schema", "end"}, field + "."); !s.ok()) return s;
  if (Status s = ReadString(c, "begin", field + ".begin", &out->begin); !s.ok()) return s;
  if (Status s = ReadString(c, "end", field + ".end", &out->end); !s.ok()) return s;
  auto it = c.find("schema");
  if (it != c.end()) out->schema = &*it;  // its type is the schema compiler's to check
  return Status::Ok();
}

Status ReadSpec(const Json& j, const GrammarLimits& limits, StructuralSpec* spec) {
  if (!j.is_object()) return Status::InvalidArgument("the structural spec must be a JSON object");
  if (Status s = CheckKeys(j, {"calls", "prefix", "separator", "suffix", "min_calls", "max_calls", "max_whitespace",
                               "trigger"},
                           "");
      !s.ok())
    return s;
  auto calls = j.find("calls");
  if (calls == j.end()) return Status::InvalidArgument("calls: missing (an array of at least one call)");
  if (!calls->is_array() || calls->empty())
    return Status::InvalidArgument("calls: must be an array of at least one call");
  for (size_t i = 0; i < calls->size(); ++i) {
    CallSpec c;
    if (Status s = ReadCall((*calls)[i], "calls[" + std::to_string(i) + "]", &c); !s.ok()) return s;
    spec->calls.push_back(std::move(c));
  }
  for (auto [key, out] : {std::pair{"prefix", &spec->prefix}, std::pair{"separator", &spec->separator},
                          std::pair{"suffix", &spec->suffix}})
    if (Status s = ReadString(j, key, key, out); !s.ok()) return s;
  const int64_t max_repeat = static_cast<int64_t>(std::min<size_t>(limits.max_repeat, INT64_MAX));
  const std::string up_to = std::to_string(max_repeat);
  if (Status s = ReadInteger(j, "min_calls", 0, max_repeat, "from 0 to " + up_to, &spec->min_calls); !s.ok())
    return s;
  const int64_t least = std::max<int64_t>(1, spec->min_calls);
  if (Status s = ReadInteger(j, "max_calls", -1, max_repeat,
                             "from " + std::to_string(least) + " (min_calls) to " + up_to + ", or -1 (unbounded)",
                             &spec->max_calls);
      !s.ok())
    return s;
  if (spec->max_calls >= 0 && spec->max_calls < least)
    return Status::InvalidArgument("max_calls: must be an integer from " + std::to_string(least) + " (min_calls) to " +
                                   up_to + ", or -1 (unbounded)");
  if (Status s = ReadInteger(j, "max_whitespace", 0, kMaxWhitespace, "from 0 to " + std::to_string(kMaxWhitespace),
                             &spec->max_whitespace);
      !s.ok())
    return s;
  spec->lazy = j.contains("trigger");
  if (!spec->lazy) return Status::Ok();
  if (Status s = ReadString(j, "trigger", "trigger", &spec->trigger); !s.ok()) return s;
  if (spec->trigger.empty() || spec->trigger.size() > kMaxTriggerBytes)
    return Status::InvalidArgument("trigger: must be a string of 1 to " + std::to_string(kMaxTriggerBytes) + " bytes");
  // The matcher feeds the grammar the output from the trigger's first byte: every call must start there.
  for (size_t i = 0; i < spec->calls.size(); ++i) {
    const std::string field = "calls[" + std::to_string(i) + "]";
    const std::string start = spec->prefix + spec->calls[i].begin;
    if (start.empty())
      return Status::InvalidArgument(field + ".begin: empty, and so is prefix: in lazy mode every call must start "
                                     "with the trigger " + Quoted(spec->trigger));
    if (start.rfind(spec->trigger, 0) != 0)
      return Status::InvalidArgument("trigger: " + Quoted(spec->trigger) + " does not start " + field +
                                     " (its prefix + begin is " + Quoted(start) + ")");
  }
  return Status::Ok();
}

// The grammar of one call's value (its schema's, or any object), compiled with what is left of
// the compile time budget.
Result<Grammar> CompileCallValue(const CallSpec& c, const std::string& field, const JsonSchemaOptions& options,
                                 const GrammarLimits& limits, std::chrono::steady_clock::time_point deadline) {
  using std::chrono::milliseconds;
  const auto left = std::chrono::ceil<milliseconds>(deadline - std::chrono::steady_clock::now());
  if (left <= milliseconds(0))
    return Status::ResourceExhausted("grammar compile ran past its time cap of " +
                                     std::to_string(limits.max_compile_time.count()) + " ms");
  GrammarLimits rest = limits;
  rest.max_compile_time = left;
  Result<Grammar> g =
      c.schema != nullptr ? CompileJsonSchema(*c.schema, options, rest) : CompileJsonObject(rest, options);
  if (g.ok()) return g;
  // The schema compiler's messages start with a JSON pointer ("/properties/x: ...") or ": ".
  return Status(g.status().code(), field + ".schema" + g.status().message());
}

}  // namespace

Result<Grammar> CompileStructural(std::string_view spec_text, const GrammarLimits& limits) {
  if (spec_text.size() > limits.max_source_bytes)
    return Status::ResourceExhausted("the structural spec is " + std::to_string(spec_text.size()) +
                                     " bytes, over the cap of " + std::to_string(limits.max_source_bytes));
  const Json j = Json::parse(spec_text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::InvalidArgument("the structural spec is not valid JSON");
  StructuralSpec spec;
  if (Status s = ReadSpec(j, limits, &spec); !s.ok()) return s;

  const auto deadline = std::chrono::steady_clock::now() + limits.max_compile_time;
  GrammarBuilder b(limits);
  JsonSchemaOptions options;
  options.integer_point_zero = false;  // as GrammarKind::kJsonSchema: 42, never 42.0
  options.max_whitespace = static_cast<int>(spec.max_whitespace);
  // Calls of one tool format often share a schema (or none): each distinct one is compiled once.
  std::unordered_map<std::string, Symbol> value_of;
  const uint32_t call = b.NewRule("call");
  for (size_t i = 0; i < spec.calls.size(); ++i) {
    const CallSpec& c = spec.calls[i];
    const std::string key = c.schema != nullptr ? c.schema->dump(-1, ' ', false, Json::error_handler_t::replace) : "";
    auto it = value_of.find(key);
    if (it == value_of.end()) {
      Result<Grammar> g = CompileCallValue(c, "calls[" + std::to_string(i) + "]", options, limits, deadline);
      if (!g.ok()) return g.status();
      it = value_of.emplace(key, b.Embed(*g)).first;
    }
    Sequence seq = b.Literal(c.begin);
    seq.push_back(it->second);
    for (const Symbol& s : b.Literal(c.end)) seq.push_back(s);
    b.AddAlternative(call, std::move(seq));
  }
  // group ::= prefix call (separator call){min-1,max-1} suffix
  const uint32_t group = b.NewRule("calls");
  Sequence seq = b.Literal(spec.prefix);
  seq.push_back(Symbol::Rule(call));
  const int64_t least = std::max<int64_t>(spec.min_calls, 1);
  if (spec.max_calls != 1) {
    Sequence more = b.Literal(spec.separator);
    more.push_back(Symbol::Rule(call));
    seq.push_back(b.Repeat(more, least - 1, spec.max_calls < 0 ? -1 : spec.max_calls - 1, "more-calls"));
  }
  for (const Symbol& s : b.Literal(spec.suffix)) seq.push_back(s);
  b.AddAlternative(group, std::move(seq));
  uint32_t root = group;
  if (spec.min_calls == 0) {
    root = b.NewRule("root");
    b.AddAlternative(root, {Symbol::Rule(group)});
    b.AddAlternative(root, {});
  }
  if (spec.lazy) b.SetTrigger(spec.trigger);
  // The literal markup: the special tokens of a vocabulary that lie within it are the grammar's
  // markup tokens (compiled_grammar.h).
  b.AddMarkupText(spec.prefix);
  for (const CallSpec& c : spec.calls) {
    b.AddMarkupText(c.begin);
    b.AddMarkupText(c.end);
  }
  if (spec.max_calls != 1) b.AddMarkupText(spec.separator);
  b.AddMarkupText(spec.suffix);
  b.AddMarkupText(spec.trigger);
  return b.Finish(root);
}

}  // namespace radixserve::grammar
