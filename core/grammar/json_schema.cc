// JSON Schema front-end: the driver, references, expansion of conjunctions (allOf, $ref, not,
// groups) and the memo of compiled conjunctions. See json_schema.h for what is supported and
// json_schema_compiler.h for the pipeline.
#include "core/grammar/json_schema.h"

#include <algorithm>
#include <cstdio>

#include "core/grammar/json_schema_compiler.h"
#include "core/grammar/json_schema_formats.h"

namespace radixserve::grammar {

namespace internal {

namespace {

// Keywords whose value constrains the instance at this place directly (the rest of a schema
// object is applicators, which Expand handles, and annotations).
bool IsLocalKeyword(std::string_view k) {
  static const char* const kLocal[] = {
      "type",          "enum",          "const",         "minLength",       "maxLength",        "pattern",
      "format",        "minimum",       "maximum",       "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
      "properties",    "patternProperties", "additionalProperties", "unevaluatedProperties", "required",
      "propertyNames", "minProperties", "maxProperties", "dependentRequired", "items",           "prefixItems",
      "additionalItems", "minItems",    "maxItems",      "uniqueItems",     "contains",         "minContains",
      "maxContains",   "unevaluatedItems", "$rs-exclude", "$rs-notpattern",  "$rs-notformat", "$rs-contains"};
  for (const char* l : kLocal)
    if (k == l) return true;
  return false;
}

// Whether a subschema accepts every value (true, or an object with no constraining keyword).
bool TriviallyTrue(const Json& s) {
  if (s.is_boolean()) return s.get<bool>();
  if (!s.is_object()) return false;
  for (const auto& [k, v] : s.items()) {
    if (IsLocalKeyword(k) || k == "$ref" || k == "allOf" || k == "anyOf" || k == "oneOf" || k == "not" ||
        k == "if" || k == "dependentSchemas" || k == "dependencies" || k == "$rs-loc" || k == "$dynamicRef" ||
        k == "$recursiveRef")
      return false;
  }
  return true;
}

std::string PercentDecode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out.push_back(static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16)));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

const char* TypeName(uint8_t bit) {
  switch (bit) {
    case kTNull: return "null";
    case kTBool: return "boolean";
    case kTObject: return "object";
    case kTArray: return "array";
    case kTString: return "string";
  }
  return "";
}

}  // namespace

SchemaCompiler::SchemaCompiler(const Json& root, const JsonSchemaOptions& options, GrammarBuilder* b,
                               JsonSchemaReport* report)
    : root_(root), options_(options), b_(b), report_(report) {
  if (root.is_object()) {
    auto it = root.find("$schema");
    if (it != root.end() && it->is_string()) {
      const std::string s = it->get<std::string>();
      if (s.find("draft-03") != std::string::npos || s.find("draft-04") != std::string::npos) {
        draft_ = Draft::k4;
      } else if (s.find("draft-06") != std::string::npos) {
        draft_ = Draft::k6;
      } else if (s.find("draft-07") != std::string::npos) {
        draft_ = Draft::k7;
      } else if (s.find("2019-09") != std::string::npos) {
        draft_ = Draft::k2019;
      }
    }
  }
  strings_ = std::make_unique<JsonStringEmitter>(b_);
  numbers_ = std::make_unique<NumberEmitter>(b_, NumberOptions{options.integer_point_zero});
  IndexIds(root_, "", 0);
}

Status SchemaCompiler::Fail(StatusCode code, const std::string& path, const std::string& what) const {
  return Status(code, path + ": " + what);
}

std::string SchemaCompiler::Child(const std::string& path, std::string_view key) {
  std::string out = path + "/";
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

bool SchemaCompiler::Active(std::string_view k) const {
  const int d = static_cast<int>(draft_);
  if (k == "const" || k == "contains" || k == "propertyNames") return d >= 6;
  if (k == "if" || k == "then" || k == "else") return d >= 7;
  if (k == "dependencies") return d <= 7;
  if (k == "dependentRequired" || k == "dependentSchemas" || k == "unevaluatedProperties" ||
      k == "unevaluatedItems" || k == "minContains" || k == "maxContains" || k == "$recursiveRef")
    return d >= 2019;
  if (k == "prefixItems" || k == "$dynamicRef") return d >= 2020;
  return true;
}

const Json* SchemaCompiler::Get(const Json& node, std::string_view k) const {
  if (!node.is_object()) return nullptr;
  auto it = node.find(k);
  if (it == node.end() || !Active(k)) return nullptr;
  return &*it;
}

void SchemaCompiler::NotEnforced(const std::string& path, const std::string& what) {
  const std::string line = path + ": " + what;
  if (!reported_.insert(line).second) return;
  if (report_) report_->not_enforced.push_back(line);
}

void SchemaCompiler::Ws(Sequence* seq) {
  if (options_.max_whitespace <= 0) return;
  if (!ws_) {
    ByteSet ws;
    for (char c : {' ', '\t', '\n', '\r'}) ws.Add(static_cast<uint8_t>(c));
    ws_ = b_->Repeat({b_->Bytes(ws)}, 0, options_.max_whitespace, "ws");
  }
  seq->push_back(*ws_);
}

// ---------------------------------------------------------------------------------------------
// References.

void SchemaCompiler::IndexIds(const Json& node, const std::string& path, int depth) {
  if (depth > 200 || !node.is_object()) return;
  for (const char* key : {"$id", "id"}) {
    auto it = node.find(key);
    if (it == node.end() || !it->is_string()) continue;
    std::string id = it->get<std::string>();
    if (!id.empty() && id[0] == '#') {
      anchors_.emplace(id.substr(1), Entry{&node, path});
    } else {
      while (!id.empty() && id.back() == '#') id.pop_back();
      ids_.emplace(id, Entry{&node, path});
    }
  }
  for (const char* key : {"$anchor", "$dynamicAnchor"}) {
    auto it = node.find(key);
    if (it != node.end() && it->is_string()) anchors_.emplace(it->get<std::string>(), Entry{&node, path});
  }
  for (const auto& [k, v] : node.items()) {
    if (k == "properties" || k == "patternProperties" || k == "definitions" || k == "$defs" ||
        k == "dependentSchemas" || k == "dependencies") {
      if (v.is_object())
        for (const auto& [name, sub] : v.items()) IndexIds(sub, Child(Child(path, k), name), depth + 1);
    } else if (k == "items" || k == "prefixItems" || k == "allOf" || k == "anyOf" || k == "oneOf") {
      if (v.is_array()) {
        for (size_t i = 0; i < v.size(); ++i) IndexIds(v[i], Child(Child(path, k), i), depth + 1);
      } else {
        IndexIds(v, Child(path, k), depth + 1);
      }
    } else if (k == "not" || k == "if" || k == "then" || k == "else" || k == "additionalProperties" ||
               k == "additionalItems" || k == "contains" || k == "propertyNames" || k == "unevaluatedProperties" ||
               k == "unevaluatedItems") {
      IndexIds(v, Child(path, k), depth + 1);
    }
  }
}

Result<Entry> SchemaCompiler::Resolve(const std::string& ref, const Json* from, const std::string& path) {
  (void)from;
  const size_t hash = ref.find('#');
  const std::string base = hash == std::string::npos ? ref : ref.substr(0, hash);
  const std::string frag = hash == std::string::npos ? "" : PercentDecode(ref.substr(hash + 1));
  Entry start{&root_, ""};
  if (!base.empty()) {
    auto it = ids_.find(base);
    if (it == ids_.end()) {
      // A relative reference to an $id: match its last path segment.
      for (const auto& [id, e] : ids_) {
        if (id.size() > base.size() && id.compare(id.size() - base.size(), base.size(), base) == 0 &&
            id[id.size() - base.size() - 1] == '/') {
          it = ids_.find(id);
          break;
        }
      }
    }
    if (it == ids_.end())
      return Fail(StatusCode::kUnsupported, Child(path, "$ref"),
                  "remote $ref '" + ref + "' is not supported (only references inside the schema)");
    start = it->second;
  }
  if (frag.empty()) return start;
  if (frag[0] != '/') {
    auto it = anchors_.find(frag);
    if (it == anchors_.end())
      return Fail(StatusCode::kInvalidArgument, Child(path, "$ref"), "$ref '" + ref + "' names no $anchor of the schema");
    return it->second;
  }
  const Json* cur = start.node;
  std::string cur_path = start.path;
  size_t pos = 0;
  while (pos < frag.size()) {
    size_t end = frag.find('/', pos + 1);
    if (end == std::string::npos) end = frag.size();
    std::string token;
    for (size_t i = pos + 1; i < end; ++i) {
      if (frag[i] == '~' && i + 1 < end && (frag[i + 1] == '0' || frag[i + 1] == '1')) {
        token.push_back(frag[i + 1] == '0' ? '~' : '/');
        ++i;
      } else {
        token.push_back(frag[i]);
      }
    }
    const Json* next = nullptr;
    if (cur->is_object()) {
      auto it = cur->find(token);
      if (it != cur->end()) next = &*it;
    } else if (cur->is_array() && !token.empty() && token.find_first_not_of("0123456789") == std::string::npos &&
               token.size() < 10) {
      const size_t index = std::stoul(token);
      if (index < cur->size()) next = &(*cur)[index];
    }
    if (!next)
      return Fail(StatusCode::kInvalidArgument, Child(path, "$ref"), "$ref '" + ref + "' points to nothing in the schema");
    cur = next;
    cur_path = Child(cur_path, token);
    pos = end;
  }
  return Entry{cur, cur_path};
}

Json SchemaCompiler::LocRef(const Json* node, const std::string& path) {
  auto key = std::make_pair(node, path);
  auto it = loc_index_.find(key);
  size_t index;
  if (it == loc_index_.end()) {
    index = locs_.size();
    locs_.push_back(Entry{node, path});
    loc_index_.emplace(key, index);
  } else {
    index = it->second;
  }
  return Json{{"$rs-loc", index}};
}

Entry SchemaCompiler::LocAt(const Json& ref_node) const {
  return locs_[ref_node.at("$rs-loc").get<size_t>()];
}

const Json* SchemaCompiler::Synth(Json j) {
  std::string key = j.dump();
  auto it = synth_index_.find(key);
  if (it != synth_index_.end()) return it->second;
  arena_.push_back(std::move(j));
  const Json* p = &arena_.back();
  synth_index_.emplace(std::move(key), p);
  return p;
}

// ---------------------------------------------------------------------------------------------
// Expansion.

uint8_t SchemaCompiler::OneOfTypes(const Entry& alt, int depth) {
  Atoms probe;
  if (!Expand(alt, &probe, depth + 1).ok() || !probe.groups.empty() || !probe.opaque.empty()) return kTAll;
  uint8_t types = kTAll;
  bool has_enum = false;
  uint8_t enum_types = 0;
  for (const Bag& bag : probe.bags) {
    if (const Json* t = Get(*bag.node, "type")) {
      uint8_t m = 0;
      auto add = [&](const Json& n) {
        const std::string s = n.is_string() ? n.get<std::string>() : "";
        if (s == "null") m |= kTNull;
        else if (s == "boolean") m |= kTBool;
        else if (s == "object") m |= kTObject;
        else if (s == "array") m |= kTArray;
        else if (s == "string") m |= kTString;
        else if (s == "integer") m |= kTInt;
        else if (s == "number") m |= kTNumber;
      };
      if (t->is_array()) {
        for (const auto& x : *t) add(x);
      } else {
        add(*t);
      }
      types &= m;
    }
    for (const char* ek : {"enum", "const"}) {
      const Json* ev = Get(*bag.node, ek);
      if (!ev) continue;
      has_enum = true;
      if (std::string_view(ek) == "const") {
        enum_types |= TypeOf(*ev);
      } else if (ev->is_array()) {
        for (const auto& x : *ev) enum_types |= TypeOf(x);
      }
    }
  }
  if (has_enum) types &= enum_types;
  // Integers and other numbers overlap (1 and 1.0 are equal): count numbers as one type.
  if (types & kTNumber) types |= kTNumber;
  return types;
}

Status SchemaCompiler::Expand(const Entry& e, Atoms* out, int depth) {
  if (depth > 400) return Fail(StatusCode::kResourceExhausted, e.path, "schema references nest more than 400 deep");
  if (!b_->CheckDeadline()) return Status(b_->status().code(), e.path + ": " + b_->status().message());
  const Json& node = *e.node;
  if (node.is_boolean()) {
    if (node.get<bool>() == e.neg) {
      out->unsat = true;
      if (out->unsat_reason.empty()) out->unsat_reason = e.path + ": the schema is " + (e.neg ? "'not' of true" : "false");
    }
    return Status::Ok();
  }
  if (!node.is_object()) return Fail(StatusCode::kInvalidArgument, e.path, "a schema must be an object or a boolean");
  if (node.contains("$rs-loc")) {
    Entry t = LocAt(node);
    t.neg = e.neg;
    return Expand(t, out, depth + 1);
  }
  if (e.neg) {
    Atoms trial = *out;
    Status s = Negate(node, e.path, &trial, depth);
    if (s.code() == StatusCode::kUnsupported) {
      // Kept whole: a listed value (enum / const) elsewhere in the conjunction may still be
      // checked against it; otherwise compiling the conjunction fails with this error.
      out->opaque.push_back(e);
      if (out->opaque_error.ok()) out->opaque_error = s;
      return Status::Ok();
    }
    if (s.ok()) *out = std::move(trial);
    return s;
  }

  for (const char* k : {"$dynamicRef", "$recursiveRef"})
    if (Get(node, k)) return Fail(StatusCode::kUnsupported, Child(e.path, k), std::string("'") + k + "' is not supported");
  auto order = [&] {
    std::vector<uint32_t> o = out->base;
    o.push_back(out->next_seq++);
    return o;
  };
  if (const Json* ref = Get(node, "$ref")) {
    // Drafts 4 to 7: keywords next to $ref are ignored.
    if (static_cast<int>(draft_) <= 7) {
      if (!ref->is_string()) return Fail(StatusCode::kInvalidArgument, Child(e.path, "$ref"), "must be a string");
      RS_ASSIGN_OR_RETURN(Entry target, Resolve(ref->get<std::string>(), e.node, e.path));
      return Expand(target, out, depth + 1);
    }
  }
  // Keywords in the order they are written, so that properties merged from several subschemas
  // keep the document's order.
  // The node's own keywords sit where its `properties` is written (else its first keyword).
  std::optional<std::vector<uint32_t>> bag_order, props_order;
  for (const auto& [k, v] : node.items()) {
    if (!Active(k)) continue;
    if (IsLocalKeyword(k)) {
      if (!bag_order) bag_order = order();
      if (k == "properties") props_order = order();
    } else if (k == "$ref") {
      if (!v.is_string()) return Fail(StatusCode::kInvalidArgument, Child(e.path, "$ref"), "must be a string");
      RS_ASSIGN_OR_RETURN(Entry target, Resolve(v.get<std::string>(), e.node, e.path));
      RS_RETURN_IF_ERROR(Expand(target, out, depth + 1));
    } else if (k == "allOf") {
      if (!v.is_array()) return Fail(StatusCode::kInvalidArgument, Child(e.path, "allOf"), "must be an array");
      for (size_t i = 0; i < v.size(); ++i)
        RS_RETURN_IF_ERROR(Expand(Entry{&v[i], Child(Child(e.path, "allOf"), i)}, out, depth + 1));
    } else if (k == "anyOf" || k == "oneOf") {
      const std::string lpath = Child(e.path, k);
      if (!v.is_array() || v.empty()) return Fail(StatusCode::kInvalidArgument, lpath, "must be a non-empty array");
      Group g{&v, lpath, {}, {}};
      bool trivial = false;
      for (size_t i = 0; i < v.size(); ++i) {
        if (TriviallyTrue(v[i])) trivial = true;
        g.alts.push_back({Entry{&v[i], Child(lpath, i)}});
      }
      if (k == "oneOf" && v.size() > 1) {
        // Exclusivity holds by construction when the branches allow disjoint types.
        bool disjoint = !trivial;
        uint8_t seen = 0;
        for (size_t i = 0; i < v.size() && disjoint; ++i) {
          const uint8_t t = OneOfTypes(Entry{&v[i], Child(lpath, i)}, depth);
          if (t & seen) disjoint = false;
          seen |= t;
        }
        if (!disjoint) NotEnforced(lpath, "oneOf exclusivity is not enforced (compiled as anyOf)");
      }
      if (trivial && k == "anyOf") continue;
      if (g.alts.size() == 1) {
        RS_RETURN_IF_ERROR(Expand(g.alts[0][0], out, depth + 1));
      } else {
        g.order = order();
        out->groups.push_back(std::move(g));
      }
    } else if (k == "not") {
      RS_RETURN_IF_ERROR(Expand(Entry{&v, Child(e.path, "not"), true}, out, depth + 1));
    } else if (k == "if") {
      const Json* then_s = Get(node, "then");
      const Json* else_s = Get(node, "else");
      if (!then_s && !else_s) continue;
      const std::string ipath = Child(e.path, "if");
      std::vector<Entry> yes{Entry{&v, ipath}}, no{Entry{&v, ipath, true}};
      if (then_s) yes.push_back(Entry{then_s, Child(e.path, "then")});
      if (else_s) no.push_back(Entry{else_s, Child(e.path, "else")});
      out->groups.push_back(Group{&v, ipath, {yes, no}, order()});
    } else if (k == "dependentSchemas" || k == "dependencies") {
      const std::string dpath = Child(e.path, k);
      if (!v.is_object()) return Fail(StatusCode::kInvalidArgument, dpath, "must be an object");
      for (const auto& [name, sub] : v.items()) {
        if (sub.is_array()) {
          if (!bag_order) bag_order = order();  // dependentRequired
          continue;
        }
        if (TriviallyTrue(sub)) continue;
        // Either the property is absent, or it is present and the subschema holds.
        const Json* absent = Synth(Json{{"properties", Json{{name, false}}}});
        const Json* present = Synth(Json{{"required", Json::array({name})}});
        out->groups.push_back(Group{&sub, Child(dpath, name),
                                    {{Entry{absent, Child(dpath, name)}},
                                     {Entry{present, Child(dpath, name)}, Entry{&sub, Child(dpath, name)}}},
                                    order()});
      }
    }
  }
  if (bag_order) out->bags.push_back(Bag{e.node, e.path, props_order ? *props_order : *bag_order});
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// Negation: not S is the disjunction of the negations of S's constraints, each written as a
// small positive schema.

Status SchemaCompiler::NegateKeywords(const Json& node, const std::string& path, std::vector<Json>* out) {
  auto number = [&](const char* k) -> const Json* {
    const Json* v = Get(node, k);
    return v && v->is_number() ? v : nullptr;
  };
  auto count = [&](const char* k, int64_t* n) -> Status {
    const Json* v = Get(node, k);
    if (!v) return Status::Ok();
    if (!v->is_number() || v->get<double>() < 0 || v->get<double>() != static_cast<double>(v->get<int64_t>()))
      return Fail(StatusCode::kInvalidArgument, Child(path, k), "must be a non-negative integer");
    *n = v->get<int64_t>();
    return Status::Ok();
  };
  auto unsupported = [&](const std::string& k) {
    return Fail(StatusCode::kUnsupported, Child(path, k), "'not' of '" + k + "' is not supported");
  };
  for (const auto& [k, v] : node.items()) {
    if (!Active(k)) continue;
    if (k == "type") {
      uint8_t m = 0;
      auto add = [&](const Json& t) {
        const std::string s = t.is_string() ? t.get<std::string>() : "";
        if (s == "null") m |= kTNull;
        else if (s == "boolean") m |= kTBool;
        else if (s == "object") m |= kTObject;
        else if (s == "array") m |= kTArray;
        else if (s == "string") m |= kTString;
        else if (s == "integer") m |= kTInt;
        else if (s == "number") m |= kTNumber;
        else if (s == "$rs-fraction") m |= kTFrac;
      };
      if (v.is_array()) {
        for (const auto& t : v) add(t);
      } else {
        add(v);
      }
      const uint8_t c = static_cast<uint8_t>(kTAll & ~m);
      if (c == 0) continue;
      Json names = Json::array();
      for (uint8_t bit : {kTNull, kTBool, kTObject, kTArray, kTString})
        if (c & bit) names.push_back(TypeName(bit));
      if ((c & kTNumber) == kTNumber) {
        names.push_back("number");
      } else if (c & kTInt) {
        names.push_back("integer");
      } else if (c & kTFrac) {
        names.push_back("$rs-fraction");
      }
      out->push_back(Json{{"type", names}});
    } else if (k == "enum") {
      if (!v.is_array()) return Fail(StatusCode::kInvalidArgument, Child(path, k), "must be an array");
      out->push_back(Json{{"$rs-exclude", v}});
    } else if (k == "const") {
      out->push_back(Json{{"$rs-exclude", Json::array({v})}});
    } else if (k == "$rs-exclude") {
      out->push_back(Json{{"enum", v}});
    } else if (k == "minLength" || k == "maxLength" || k == "minItems" || k == "maxItems" || k == "minProperties" ||
               k == "maxProperties") {
      int64_t n = 0;
      RS_RETURN_IF_ERROR(count(k.c_str(), &n));
      const bool is_min = k.rfind("min", 0) == 0;
      const std::string what = k.substr(3);
      const char* type = what == "Length" ? "string" : (what == "Items" ? "array" : "object");
      if (is_min) {
        if (n > 0) out->push_back(Json{{"type", type}, {"max" + what, n - 1}});
      } else {
        out->push_back(Json{{"type", type}, {"min" + what, n + 1}});
      }
    } else if (k == "pattern") {
      out->push_back(Json{{"type", "string"}, {"$rs-notpattern", v}});
    } else if (k == "$rs-notpattern") {
      out->push_back(Json{{"type", "string"}, {"pattern", v}});
    } else if (k == "format") {
      if (v.is_string() && ClassifyFormat(v.get<std::string>()) == FormatKind::kEnforced)
        out->push_back(Json{{"type", "string"}, {"$rs-notformat", v}});
      else if (v.is_string() && ClassifyFormat(v.get<std::string>()) == FormatKind::kNotEnforced)
        return unsupported("format");
    } else if (k == "$rs-notformat") {
      out->push_back(Json{{"type", "string"}, {"format", v}});
    } else if (k == "minimum" || k == "maximum") {
      const Json* m = number(k.c_str());
      if (!m) return Fail(StatusCode::kInvalidArgument, Child(path, k), "must be a number");
      const bool is_min = k == "minimum";
      const Json* ex = Get(node, is_min ? "exclusiveMinimum" : "exclusiveMaximum");
      const bool excl = ex && ex->is_boolean() && ex->get<bool>();
      // not (x >= m) is x < m; not (x > m) is x <= m.
      out->push_back(Json{{"type", "number"},
                          {is_min ? "maximum" : "minimum", *m},
                          {is_min ? "exclusiveMaximum" : "exclusiveMinimum", !excl}});
    } else if (k == "exclusiveMinimum" || k == "exclusiveMaximum") {
      if (v.is_boolean()) continue;  // a modifier of minimum / maximum
      if (!v.is_number()) return Fail(StatusCode::kInvalidArgument, Child(path, k), "must be a number");
      const bool is_min = k == "exclusiveMinimum";
      out->push_back(Json{{"type", "number"}, {is_min ? "maximum" : "minimum", v}});
    } else if (k == "required") {
      if (!v.is_array()) return Fail(StatusCode::kInvalidArgument, Child(path, k), "must be an array");
      for (const auto& name : v) {
        if (!name.is_string()) return Fail(StatusCode::kInvalidArgument, Child(path, k), "must list strings");
        out->push_back(Json{{"type", "object"}, {"properties", Json{{name.get<std::string>(), false}}}});
      }
    } else if (k == "properties") {
      for (const char* other : {"patternProperties", "additionalProperties", "unevaluatedProperties"})
        if (Get(node, other)) return unsupported(other);
      if (!v.is_object()) return Fail(StatusCode::kInvalidArgument, Child(path, k), "must be an object");
      for (const auto& [name, sub] : v.items()) {
        if (TriviallyTrue(sub)) continue;
        out->push_back(Json{{"type", "object"},
                            {"required", Json::array({name})},
                            {"properties", Json{{name, Json{{"not", LocRef(&sub, Child(Child(path, k), name))}}}}}});
      }
    } else if (k == "contains" || k == "$rs-contains") {
      if (Get(node, "minContains") || Get(node, "maxContains")) return unsupported("minContains");
      out->push_back(Json{{"type", "array"}, {"items", Json{{"not", LocRef(&v, Child(path, k))}}}});
    } else if (k == "items" && !v.is_array() && !Get(node, "prefixItems")) {
      // Some item fails the item schema.
      out->push_back(Json{{"type", "array"}, {"$rs-contains", Json{{"not", LocRef(&v, Child(path, k))}}}});
    } else if (k == "uniqueItems") {
      if (v.is_boolean() && v.get<bool>()) return unsupported(k);
    } else if (k == "additionalProperties" || k == "patternProperties" || k == "unevaluatedProperties" ||
               k == "propertyNames" || k == "items" || k == "prefixItems" || k == "additionalItems" ||
               k == "unevaluatedItems" || k == "multipleOf" || k == "dependentRequired" || k == "minContains" ||
               k == "maxContains") {
      if (k == "additionalProperties" && Get(node, "properties")) continue;  // reported with properties
      if ((k == "patternProperties" || k == "unevaluatedProperties") && Get(node, "properties")) continue;
      if (k == "additionalItems" && !(Get(node, "items") && Get(node, "items")->is_array())) continue;
      return unsupported(k);
    } else if (k == "dependencies") {
      if (v.is_object())
        for (const auto& [name, dep] : v.items())
          if (dep.is_array()) return unsupported(k);
    }
  }
  return Status::Ok();
}

Status SchemaCompiler::Negate(const Json& node, const std::string& path, Atoms* out, int depth) {
  for (const char* k : {"$dynamicRef", "$recursiveRef"})
    if (Get(node, k)) return Fail(StatusCode::kUnsupported, Child(path, k), std::string("'") + k + "' is not supported");
  std::vector<Json> disjuncts;
  if (const Json* ref = Get(node, "$ref")) {
    if (!ref->is_string()) return Fail(StatusCode::kInvalidArgument, Child(path, "$ref"), "must be a string");
    RS_ASSIGN_OR_RETURN(Entry target, Resolve(ref->get<std::string>(), &node, path));
    if (static_cast<int>(draft_) <= 7) {
      target.neg = true;
      return Expand(target, out, depth + 1);
    }
    disjuncts.push_back(Json{{"not", LocRef(target)}});
  }
  RS_RETURN_IF_ERROR(NegateKeywords(node, path, &disjuncts));
  if (const Json* all = Get(node, "allOf")) {
    if (!all->is_array()) return Fail(StatusCode::kInvalidArgument, Child(path, "allOf"), "must be an array");
    for (size_t i = 0; i < all->size(); ++i)
      disjuncts.push_back(Json{{"not", LocRef(&(*all)[i], Child(Child(path, "allOf"), i))}});
  }
  if (const Json* any = Get(node, "anyOf")) {
    if (!any->is_array()) return Fail(StatusCode::kInvalidArgument, Child(path, "anyOf"), "must be an array");
    Json conj = Json::array();
    for (size_t i = 0; i < any->size(); ++i)
      conj.push_back(Json{{"not", LocRef(&(*any)[i], Child(Child(path, "anyOf"), i))}});
    disjuncts.push_back(Json{{"allOf", conj}});
  }
  if (const Json* one = Get(node, "oneOf")) {
    // Not exactly one: none of the branches, or two of them at once.
    if (!one->is_array() || one->empty() || one->size() > 8)
      return Fail(StatusCode::kUnsupported, Child(path, "oneOf"), "'not' of 'oneOf' with more than 8 branches is not supported");
    std::vector<Json> refs;
    for (size_t i = 0; i < one->size(); ++i) refs.push_back(LocRef(&(*one)[i], Child(Child(path, "oneOf"), i)));
    Json none = Json::array();
    for (const Json& r : refs) none.push_back(Json{{"not", r}});
    disjuncts.push_back(Json{{"allOf", none}});
    for (size_t i = 0; i < refs.size(); ++i)
      for (size_t j = i + 1; j < refs.size(); ++j) disjuncts.push_back(Json{{"allOf", Json::array({refs[i], refs[j]})}});
  }
  if (const Json* inner = Get(node, "not")) disjuncts.push_back(LocRef(inner, Child(path, "not")));
  if (const Json* cond = Get(node, "if")) {
    const Json a = LocRef(cond, Child(path, "if"));
    if (const Json* t = Get(node, "then"))
      disjuncts.push_back(Json{{"allOf", Json::array({a, Json{{"not", LocRef(t, Child(path, "then"))}}})}});
    if (const Json* f = Get(node, "else"))
      disjuncts.push_back(
          Json{{"allOf", Json::array({Json{{"not", a}}, Json{{"not", LocRef(f, Child(path, "else"))}}})}});
  }
  for (const char* k : {"dependentSchemas", "dependencies"}) {
    const Json* deps = Get(node, k);
    if (!deps || !deps->is_object()) continue;
    for (const auto& [name, sub] : deps->items()) {
      if (sub.is_array()) continue;
      disjuncts.push_back(Json{{"allOf", Json::array({Json{{"type", "object"}, {"required", Json::array({name})}},
                                                      Json{{"not", LocRef(&sub, Child(Child(path, k), name))}}})}});
    }
  }
  if (disjuncts.empty()) {
    out->unsat = true;
    if (out->unsat_reason.empty()) out->unsat_reason = path + ": 'not' of a schema that every value satisfies";
    return Status::Ok();
  }
  if (disjuncts.size() == 1) return Expand(Entry{Synth(std::move(disjuncts[0])), path}, out, depth + 1);
  return Expand(Entry{Synth(Json{{"anyOf", std::move(disjuncts)}}), path}, out, depth + 1);
}

// ---------------------------------------------------------------------------------------------
// Compilation with memo.

Result<std::optional<Symbol>> SchemaCompiler::CompileEntries(const std::vector<Entry>& entries) {
  Atoms atoms;
  for (const Entry& e : entries) RS_RETURN_IF_ERROR(Expand(e, &atoms, 0));
  return CompileAtoms(atoms, entries.empty() ? "" : entries[0].path);
}

Result<std::optional<Symbol>> SchemaCompiler::CompileAtoms(const Atoms& atoms, const std::string& name_path) {
  if (atoms.unsat) {
    NoteUnsat(atoms.unsat_reason);
    return std::optional<Symbol>();
  }
  if (atoms.bags.empty() && atoms.groups.empty() && atoms.opaque.empty()) return std::optional<Symbol>(AnyValue());
  std::vector<uintptr_t> bag_keys, group_keys;
  for (const Bag& bag : atoms.bags) bag_keys.push_back(reinterpret_cast<uintptr_t>(bag.node));
  for (const Group& g : atoms.groups) group_keys.push_back(reinterpret_cast<uintptr_t>(g.key));
  std::sort(bag_keys.begin(), bag_keys.end());
  bag_keys.erase(std::unique(bag_keys.begin(), bag_keys.end()), bag_keys.end());
  std::sort(group_keys.begin(), group_keys.end());
  group_keys.erase(std::unique(group_keys.begin(), group_keys.end()), group_keys.end());
  std::vector<std::string> opaque_keys;
  for (const Entry& e : atoms.opaque)
    opaque_keys.push_back(std::to_string(reinterpret_cast<uintptr_t>(e.node)) + (e.neg ? "n" : "p"));
  std::sort(opaque_keys.begin(), opaque_keys.end());
  std::string key;
  for (uintptr_t k : bag_keys) key.append("b").append(std::to_string(k));
  for (uintptr_t k : group_keys) key.append("g").append(std::to_string(k));
  for (const auto& k : opaque_keys) key.append("o").append(k);
  auto it = memo_.find(key);
  if (it != memo_.end()) {
    if (it->second.in_progress) it->second.referenced_in_progress = true;
    return it->second.symbol;
  }
  if (++compiles_ > 100000)
    return Fail(StatusCode::kResourceExhausted, name_path, "the schema expands to more than 100000 distinct subschemas");
  if (!b_->CheckDeadline()) return Status(b_->status().code(), ": " + b_->status().message());
  const uint32_t rule = b_->NewRule("v");
  memo_[key] = Memo{Symbol::Rule(rule), true, false};
  // Deduplicate bags and groups (the same subschema reached twice).
  Atoms unique;
  unique.opaque = atoms.opaque;
  unique.opaque_error = atoms.opaque_error;
  unique.next_seq = atoms.next_seq;
  std::set<const void*> seen;
  for (const Bag& bag : atoms.bags)
    if (seen.insert(bag.node).second) unique.bags.push_back(bag);
  for (const Group& g : atoms.groups)
    if (seen.insert(g.key).second) unique.groups.push_back(g);
  std::stable_sort(unique.bags.begin(), unique.bags.end(), [](const Bag& x, const Bag& y) { return x.order < y.order; });
  auto body = CompileBody(unique, name_path);
  Memo& m = memo_[key];
  m.in_progress = false;
  if (!body.ok()) return body.status();
  if (body->empty()) {
    if (m.referenced_in_progress)
      return Fail(StatusCode::kInvalidArgument, name_path,
                  "the schema is unsatisfiable: it refers to itself with no way to end (" + first_unsat_ + ")");
    m.symbol = std::nullopt;
    return std::optional<Symbol>();
  }
  if (body->size() == 1 && (*body)[0].size() == 1 && !m.referenced_in_progress) {
    // Alias instead of a rule of one symbol (the declared rule stays unreachable).
    m.symbol = (*body)[0][0];
    return m.symbol;
  }
  for (Sequence& seq : *body) b_->AddAlternative(rule, std::move(seq));
  return m.symbol;
}

namespace {

// Whether every reachable rule can derive a string: a recursion without a way out would leave the
// matcher in a state with nothing allowed.
bool AllProductive(const Grammar& g) {
  const auto& rules = g.rules();
  std::vector<char> productive(rules.size(), 0);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t r = 0; r < rules.size(); ++r) {
      if (productive[r]) continue;
      for (const Sequence& seq : rules[r].alternatives) {
        bool ok = true;
        for (const Symbol& s : seq)
          if (s.kind == Symbol::kRule && !productive[s.index]) ok = false;
        if (ok) {
          productive[r] = 1;
          changed = true;
          break;
        }
      }
    }
  }
  for (size_t r = 0; r < rules.size(); ++r)
    for (const Sequence& seq : rules[r].alternatives)
      for (const Symbol& s : seq)
        if (s.kind == Symbol::kRule && !productive[s.index]) return false;
  return true;
}

}  // namespace

Result<Grammar> SchemaCompiler::CompileRoot() {
  auto sym = CompileEntries({Entry{&root_, ""}});
  if (!sym.ok()) return sym.status();
  if (!*sym) {
    const std::string why = first_unsat_.empty() ? ": no value satisfies the schema" : first_unsat_;
    return Status::InvalidArgument(why + " (the schema accepts no value)");
  }
  const uint32_t top = b_->NewRule("root");
  Sequence seq;
  Ws(&seq);
  seq.push_back(**sym);
  Ws(&seq);
  b_->AddAlternative(top, std::move(seq));
  auto g = b_->Finish(top);
  if (!g.ok()) {
    const std::string& m = g.status().message();
    if (!m.empty() && (m[0] == '/' || m.rfind(": ", 0) == 0)) return g.status();
    return Status(g.status().code(), ": " + m);
  }
  if (!AllProductive(*g))
    return Status::InvalidArgument(": the schema is unsatisfiable in part: a recursive reference can never end");
  return g;
}

Result<Grammar> SchemaCompiler::CompileAnyObject() {
  AnyValue();
  const uint32_t top = b_->NewRule("root");
  Sequence seq;
  Ws(&seq);
  seq.push_back(*any_object_);
  Ws(&seq);
  b_->AddAlternative(top, std::move(seq));
  return b_->Finish(top);
}

}  // namespace internal

Result<Grammar> CompileJsonSchema(const nlohmann::ordered_json& schema, const JsonSchemaOptions& options,
                                  const GrammarLimits& limits, JsonSchemaReport* report) {
  if (!schema.is_object() && !schema.is_boolean())
    return Status::InvalidArgument(": a schema must be a JSON object or a boolean");
  GrammarBuilder b(limits);
  internal::SchemaCompiler c(schema, options, &b, report);
  return c.CompileRoot();
}

Result<Grammar> CompileJsonSchemaText(std::string_view text, const JsonSchemaOptions& options,
                                      const GrammarLimits& limits, JsonSchemaReport* report) {
  if (text.size() > limits.max_source_bytes)
    return Status::ResourceExhausted(": the schema is " + std::to_string(text.size()) + " bytes, over the cap of " +
                                     std::to_string(limits.max_source_bytes));
  nlohmann::ordered_json schema = nlohmann::ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (schema.is_discarded()) return Status::InvalidArgument(": the schema is not valid JSON");
  return CompileJsonSchema(schema, options, limits, report);
}

Result<Grammar> CompileJsonObject(const GrammarLimits& limits, const JsonSchemaOptions& options) {
  GrammarBuilder b(limits);
  const nlohmann::ordered_json empty = nlohmann::ordered_json::object();
  internal::SchemaCompiler c(empty, options, &b, nullptr);
  return c.CompileAnyObject();
}

}  // namespace radixserve::grammar
