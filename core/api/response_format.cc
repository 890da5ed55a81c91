#include "core/api/response_format.h"

#include <nlohmann/json.hpp>

#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/api/json_member.h"
#include "core/grammar/compile.h"

#include "core/api/json_type_name.h"

namespace radixserve::api {
namespace {

using grammar::GrammarKind;
using grammar::GrammarSpec;
using nlohmann::json;
using nlohmann::ordered_json;


// A member of an object; null counts as absent, as everywhere in the parser.

// One constraint found in the body.
struct Constraint {
  std::string name;   // as the client wrote it, for the "two constraints" error ("response_format")
  std::string field;  // the param of its errors ("response_format.json_schema.schema")
  GrammarKind kind = GrammarKind::kNone;
  const json* value = nullptr;     // the schema (object or string), pattern, grammar or choices
  std::vector<std::string> path;   // keys from the body's root to an object schema
};

// Collects the constraint of one body; the first error wins and later calls are no-ops.
class Collector {
 public:
  explicit Collector(ApiError* error) : error_(error) {}

  bool ok() const { return ok_; }
  bool Fail(const std::string& field, const std::string& message) {
    if (ok_) *error_ = ApiError::BadRequest(field, field + ": " + message);
    ok_ = false;
    return false;
  }
  // A second constraint is refused rather than one of them silently winning.
  void Add(Constraint c) {
    if (!ok_) return;
    if (found_) {
      Fail(c.name, "at most one structured-output constraint per request, got " + found_->name + " and " + c.name);
      return;
    }
    found_ = std::move(c);
  }
  const std::optional<Constraint>& found() const { return found_; }

 private:
  ApiError* error_;
  bool ok_ = true;
  std::optional<Constraint> found_;
};

// The extension fields, the same set on every endpoint (top level of /v1/*, sampling_params of
// /generate). Refused ones change the output in ways the engine does not implement.
constexpr const char* kExtensionFields[] = {"guided_json",        "guided_regex", "guided_grammar", "guided_choice",
                                            "structured_outputs", "json_schema",  "regex",          "ebnf"};
constexpr const char* kRefusedExtensionFields[] = {"guided_whitespace_pattern", "structural_tag"};

// A schema: an object, or (where `allow_string`) its text as a string (checked when it is used).
void ReadSchema(Collector& c, const json& obj, const char* key, bool allow_object, const std::string& prefix,
                std::vector<std::string> path) {
  const json* v = JsonMember(obj, key);
  if (!c.ok() || !v) return;
  const std::string field = prefix + key;
  if (v->is_string() || (allow_object && v->is_object())) {
    path.push_back(key);
    c.Add({field, field, GrammarKind::kJsonSchema, v, v->is_object() ? std::move(path) : std::vector<std::string>{}});
  } else if (allow_object) {
    c.Fail(field, std::string("expected a JSON schema (an object, or its text as a string), got ") + JsonTypeName(*v));
  } else {
    c.Fail(field, std::string("expected a string holding a JSON schema, got ") + JsonTypeName(*v) +
                      (v->is_object() ? " (a schema object goes in response_format json_schema or guided_json)" : ""));
  }
}

// A regular expression or a grammar: a string.
void ReadText(Collector& c, const json& obj, const char* key, GrammarKind kind, const std::string& prefix) {
  const json* v = JsonMember(obj, key);
  if (!c.ok() || !v) return;
  const std::string field = prefix + key;
  if (!v->is_string()) {
    c.Fail(field, std::string("expected a string, got ") + JsonTypeName(*v));
    return;
  }
  c.Add({field, field, kind, v, {}});
}

// A choice: a non-empty array of strings.
void ReadChoice(Collector& c, const json& obj, const char* key, const std::string& prefix) {
  const json* v = JsonMember(obj, key);
  if (!c.ok() || !v) return;
  const std::string field = prefix + key;
  if (!v->is_array()) {
    c.Fail(field, std::string("expected an array of strings, got ") + JsonTypeName(*v));
    return;
  }
  if (v->empty()) {
    c.Fail(field, "must contain at least one string");
    return;
  }
  for (size_t i = 0; i < v->size(); ++i)
    if (!(*v)[i].is_string()) {
      c.Fail(field + "[" + std::to_string(i) + "]", std::string("expected a string, got ") + JsonTypeName((*v)[i]));
      return;
    }
  c.Add({field, field, GrammarKind::kChoice, v, {}});
}

// vLLM's structured_outputs object: one of json, regex, grammar, choice, json_object.
void ReadStructuredOutputs(Collector& c, const json& obj, const std::string& prefix, std::vector<std::string> path) {
  const json* so = JsonMember(obj, "structured_outputs");
  if (!c.ok() || !so) return;
  const std::string field = prefix + "structured_outputs";
  if (!so->is_object()) {
    c.Fail(field, std::string("expected an object, got ") + JsonTypeName(*so));
    return;
  }
  path.push_back("structured_outputs");
  const std::string sub = field + ".";
  ReadSchema(c, *so, "json", /*allow_object=*/true, sub, path);
  ReadText(c, *so, "regex", GrammarKind::kRegex, sub);
  ReadText(c, *so, "grammar", GrammarKind::kGbnf, sub);
  ReadChoice(c, *so, "choice", sub);
  if (const json* jo = JsonMember(*so, "json_object"); c.ok() && jo) {
    if (!jo->is_boolean()) c.Fail(sub + "json_object", std::string("expected a boolean, got ") + JsonTypeName(*jo));
    else if (jo->get<bool>()) c.Add({sub + "json_object", sub + "json_object", GrammarKind::kJsonObject, jo, {}});
  }
  // Options that would change the output; the engine's whitespace between JSON tokens is its own
  // (bounded) and additionalProperties follows the schema.
  for (const char* key : {"structural_tag", "whitespace_pattern"})
    if (c.ok() && JsonMember(*so, key)) c.Fail(sub + key, "is not supported");
  for (const char* key : {"disable_any_whitespace", "disable_additional_properties"})
    if (const json* v = JsonMember(*so, key); c.ok() && v && !(v->is_boolean() && !v->get<bool>()))
      c.Fail(sub + key, "is not supported");
}

void ReadExtensions(Collector& c, const json& obj, const std::string& prefix, const std::vector<std::string>& path) {
  ReadSchema(c, obj, "guided_json", /*allow_object=*/true, prefix, path);
  ReadText(c, obj, "guided_regex", GrammarKind::kRegex, prefix);
  ReadText(c, obj, "guided_grammar", GrammarKind::kGbnf, prefix);
  ReadChoice(c, obj, "guided_choice", prefix);
  ReadStructuredOutputs(c, obj, prefix, path);
  ReadSchema(c, obj, "json_schema", /*allow_object=*/false, prefix, path);
  ReadText(c, obj, "regex", GrammarKind::kRegex, prefix);
  ReadText(c, obj, "ebnf", GrammarKind::kGbnf, prefix);
  for (const char* key : kRefusedExtensionFields)
    if (c.ok() && JsonMember(obj, key)) c.Fail(prefix + key, "is not supported");
}

bool ValidSchemaName(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (char ch : name)
    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '-'))
      return false;
  return true;
}

// OpenAI's response_format.
void ReadResponseFormat(Collector& c, const json& root) {
  const json* fmt = JsonMember(root, "response_format");
  if (!c.ok() || !fmt) return;
  if (!fmt->is_object()) {
    c.Fail("response_format", std::string("expected an object, got ") + JsonTypeName(*fmt));
    return;
  }
  const json* type = JsonMember(*fmt, "type");
  if (!type) {
    c.Fail("response_format.type", "is required (\"text\", \"json_object\" or \"json_schema\")");
    return;
  }
  if (!type->is_string()) {
    c.Fail("response_format.type", std::string("expected a string, got ") + JsonTypeName(*type));
    return;
  }
  const std::string& t = type->get_ref<const std::string&>();
  if (t == "text") return;
  if (t == "json_object") {
    c.Add({"response_format", "response_format", GrammarKind::kJsonObject, fmt, {}});
    return;
  }
  if (t != "json_schema") {
    c.Fail("response_format.type", "expected \"text\", \"json_object\" or \"json_schema\", got \"" +
                                       (t.size() <= 64 ? t : t.substr(0, 64) + "...") + "\"");
    return;
  }
  const json* js = JsonMember(*fmt, "json_schema");
  if (!js) {
    c.Fail("response_format.json_schema", "is required when type is \"json_schema\"");
    return;
  }
  if (!js->is_object()) {
    c.Fail("response_format.json_schema", std::string("expected an object, got ") + JsonTypeName(*js));
    return;
  }
  // OpenAI requires the name and restricts its characters; clients that target OpenAI send one.
  const json* name = JsonMember(*js, "name");
  if (!name) {
    c.Fail("response_format.json_schema.name", "is required");
    return;
  }
  if (!name->is_string()) {
    c.Fail("response_format.json_schema.name", std::string("expected a string, got ") + JsonTypeName(*name));
    return;
  }
  const std::string& n = name->get_ref<const std::string&>();
  if (!ValidSchemaName(n)) {
    c.Fail("response_format.json_schema.name",
           "must be 1 to 64 characters of a-z, A-Z, 0-9, '_' and '-', got " +
               (n.size() <= 64 ? "\"" + n + "\"" : "a string of " + std::to_string(n.size()) + " bytes"));
    return;
  }
  // strict: the schema is enforced either way (the output is grammatical by construction).
  if (const json* strict = JsonMember(*js, "strict"); strict && !strict->is_boolean()) {
    c.Fail("response_format.json_schema.strict", std::string("expected a boolean, got ") + JsonTypeName(*strict));
    return;
  }
  if (const json* d = JsonMember(*js, "description"); d && !d->is_string()) {
    c.Fail("response_format.json_schema.description", std::string("expected a string, got ") + JsonTypeName(*d));
    return;
  }
  const json* schema = JsonMember(*js, "schema");
  if (!schema) {
    c.Fail("response_format.json_schema.schema", "is required");
    return;
  }
  if (!schema->is_object()) {
    // `true` is a valid JSON schema (any value) but a client sending it most likely means JSON mode.
    c.Fail("response_format.json_schema.schema",
           std::string("expected a JSON schema object, got ") + JsonTypeName(*schema) +
               (schema->is_boolean() ? " (boolean schemas are not accepted; for any JSON object use "
                                       "response_format {\"type\": \"json_object\"})"
                                     : ""));
    return;
  }
  c.Add({"response_format", "response_format.json_schema.schema", GrammarKind::kJsonSchema, schema,
         {"response_format", "json_schema", "schema"}});
}

// /generate reads constraints from sampling_params only; the same names at the top level would be
// silently ignored otherwise.
void RefuseTopLevelOnGenerate(Collector& c, const json& root) {
  if (JsonMember(root, "response_format"))
    c.Fail("response_format", "is not read by /generate: put the constraint in sampling_params "
                              "(json_schema, regex, ebnf, guided_json, ...)");
  for (const char* key : kExtensionFields)
    if (c.ok() && JsonMember(root, key))
      c.Fail(key, std::string("belongs inside sampling_params on /generate (sampling_params.") + key + ")");
}

const char* KindNoun(GrammarKind kind) {
  switch (kind) {
    case GrammarKind::kJsonSchema: return "the schema";
    case GrammarKind::kRegex: return "the regular expression";
    case GrammarKind::kGbnf: return "the grammar";
    case GrammarKind::kChoice: return "the list of choices";
    default: return "the constraint";
  }
}

// The spec's text from the constraint; false (error in *c) when a schema's text is not a JSON object.
bool BuildSpec(std::string_view body, const Constraint& k, const ApiLimits& limits, GrammarSpec* spec, Collector& c) {
  spec->kind = k.kind;
  spec->text.clear();
  switch (k.kind) {
    case GrammarKind::kJsonObject:
      return true;
    case GrammarKind::kRegex:
    case GrammarKind::kGbnf:
      spec->text = k.value->get<std::string>();
      break;
    case GrammarKind::kChoice:
      spec->text = k.value->dump(-1, ' ', false, json::error_handler_t::replace);
      break;
    case GrammarKind::kJsonSchema:
      if (k.value->is_string()) {
        // The client's text is kept as it is (its key order included); it must hold an object.
        spec->text = k.value->get<std::string>();
        if (spec->text.size() > limits.grammar.max_source_bytes) break;  // the size check below names it
        bool too_deep = false;
        const int32_t max_depth = limits.max_json_depth;
        // Values past the depth cap are discarded as they are read, so a hostile text never
        // builds (or later recursively destroys) a deep tree.
        json parsed = json::parse(
            spec->text,
            [&](int depth, json::parse_event_t, json&) {
              if (depth > max_depth) too_deep = true;
              return depth <= max_depth;
            },
            /*allow_exceptions=*/false);
        if (too_deep)
          return c.Fail(k.field,
                        "the schema nests arrays/objects deeper than " + std::to_string(max_depth) + " levels");
        if (parsed.is_discarded()) return c.Fail(k.field, "is not valid JSON (expected a JSON schema as text)");
        if (!parsed.is_object())
          return c.Fail(k.field, std::string("expected the text of a JSON schema object, got ") + JsonTypeName(parsed));
      } else {
        // Re-read the body in document order and take the same value: the parsed body's objects
        // sort their keys, and property order is the order the output follows.
        ordered_json doc = ordered_json::parse(body, nullptr, /*allow_exceptions=*/false);
        const ordered_json* cur = &doc;
        for (const std::string& key : k.path) {
          if (!cur->is_object() || cur->find(key) == cur->end()) {
            cur = nullptr;
            break;
          }
          cur = &*cur->find(key);
        }
        // The body parsed the first time, so the path is there; sorted keys are the fallback.
        spec->text = cur && cur->is_object() ? cur->dump(-1, ' ', false, ordered_json::error_handler_t::replace)
                                             : k.value->dump(-1, ' ', false, json::error_handler_t::replace);
      }
      break;
    default:
      return true;
  }
  if (spec->text.size() > limits.grammar.max_source_bytes)
    return c.Fail(k.field, std::string(KindNoun(k.kind)) + " is " + std::to_string(spec->text.size()) +
                               " bytes, the limit is " + std::to_string(limits.grammar.max_source_bytes));
  return true;
}

// Whether an RFC 6901 pointer names a place in `doc`.
bool PointerResolves(const json& doc, std::string_view ptr) {
  const json* cur = &doc;
  size_t pos = 0;
  while (pos < ptr.size()) {
    if (ptr[pos] != '/') return false;
    size_t end = ptr.find('/', pos + 1);
    if (end == std::string_view::npos) end = ptr.size();
    std::string token;
    for (size_t i = pos + 1; i < end; ++i) {
      if (ptr[i] == '~' && i + 1 < end && (ptr[i + 1] == '0' || ptr[i + 1] == '1')) {
        token += ptr[i + 1] == '0' ? '~' : '/';
        ++i;
      } else {
        token += ptr[i];
      }
    }
    if (cur->is_object()) {
      auto it = cur->find(token);
      if (it == cur->end()) return false;
      cur = &*it;
    } else if (cur->is_array()) {
      if (token.empty() || token.size() > 9 || (token.size() > 1 && token[0] == '0')) return false;
      size_t index = 0;
      for (char ch : token) {
        if (ch < '0' || ch > '9') return false;
        index = index * 10 + static_cast<size_t>(ch - '0');
      }
      if (index >= cur->size()) return false;
      cur = &(*cur)[index];
    } else {
      return false;
    }
    pos = end;
  }
  return true;
}

}  // namespace

Status CompileToValidate(const grammar::GrammarSpec& spec, const grammar::GrammarLimits& limits) {
  // Specs that compiled lately are not compiled again (clients send one schema many times); the
  // worker compiles through its own cache. Bounded: the oldest key goes first.
  static std::mutex mu;
  static std::unordered_set<std::string> known;
  static std::deque<std::string> order;
  constexpr size_t kKnownSpecs = 256;
  std::string key(1, static_cast<char>(spec.kind));
  key += spec.text;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (known.count(key)) return Status::Ok();
  }
  Result<grammar::Grammar> g = grammar::CompileSpec(spec, limits);
  if (!g.ok()) return g.status();
  std::lock_guard<std::mutex> lock(mu);
  if (known.insert(key).second) {
    order.push_back(std::move(key));
    if (order.size() > kKnownSpecs) {
      known.erase(order.front());
      order.pop_front();
    }
  }
  return Status::Ok();
}

bool CheckConstrainedSampling(const GenerateRequest& request, ApiError* error) {
  if (!request.spec.grammar.active() || !request.spec.sampling.ignore_eos) return true;
  *error = ApiError::BadRequest("ignore_eos", "ignore_eos: a request with a response_format or grammar ends where the "
                                              "grammar does and cannot ignore EOS");
  return false;
}

ApiError StructuredOutputError(const std::string& field, GrammarKind kind, std::string_view schema_text,
                               const Status& status) {
  const std::string& message = status.message();
  std::string pointer;
  std::string rest = message;
  if (kind == GrammarKind::kJsonSchema) {
    if (message.rfind(": ", 0) == 0) {
      rest = message.substr(2);  // the root: an empty pointer
    } else if (!message.empty() && message[0] == '/' && message.find(": ") != std::string::npos) {
      // A property name may itself contain ": ": take the first split whose pointer exists.
      const json schema = json::parse(schema_text, nullptr, /*allow_exceptions=*/false);
      size_t split = message.find(": ");
      for (size_t pos = split; pos != std::string::npos; pos = message.find(": ", pos + 1)) {
        if (PointerResolves(schema, std::string_view(message).substr(0, pos))) {
          split = pos;
          break;
        }
      }
      pointer = message.substr(0, split);
      rest = message.substr(split + 2);
    }
  }
  const std::string param = field + pointer;
  ApiError error = ApiError::BadRequest(param, param + ": " + rest);
  if (status.code() == StatusCode::kInternal) {  // a bug in the compiler, not in the request
    error.http_status = 500;
    error.type = "internal_server_error";
  }
  return error;
}

bool ParseStructuredOutput(std::string_view body, const json& root, Endpoint endpoint, const ApiLimits& limits,
                           GrammarSpec* spec, ApiError* error, const GrammarValidator& validate) {
  *spec = GrammarSpec{};
  Collector c(error);
  if (endpoint == Endpoint::kGenerate) {
    RefuseTopLevelOnGenerate(c, root);
    if (const json* sp = JsonMember(root, "sampling_params"); sp && sp->is_object())
      ReadExtensions(c, *sp, "sampling_params.", {"sampling_params"});
  } else {
    ReadResponseFormat(c, root);
    ReadExtensions(c, root, "", {});
  }
  if (!c.ok()) return false;
  if (!c.found()) return true;
  const Constraint& k = *c.found();
  GrammarSpec built;
  if (!BuildSpec(body, k, limits, &built, c)) return false;
  Status s = validate(built, limits.grammar);
  if (!s.ok()) {
    *error = StructuredOutputError(k.field, k.kind, built.text, s);
    return false;
  }
  *spec = std::move(built);
  return true;
}

}  // namespace radixserve::api
