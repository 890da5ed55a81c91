// JSON Schema front-end: expansion of conjunctions (references, allOf, groups, booleans) into
// bags and groups, negation pushed down to keywords, and the quick disjointness test that tells
// whether a oneOf is exact as an anyOf. See json_schema_compiler.h.
#include <algorithm>

#include "core/grammar/json_schema_compiler.h"
#include "core/grammar/json_schema_formats.h"

namespace radixserve::grammar::internal {

namespace {

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

}  // namespace

// ---------------------------------------------------------------------------------------------
// Expansion.

SchemaCompiler::BranchInfo SchemaCompiler::Probe(const Entry& alt, int depth) {
  BranchInfo info;
  Atoms probe;
  if (!Expand(alt, &probe, depth + 1).ok() || !probe.groups.empty() || !probe.opaque.empty()) return info;
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
        else if (s == "integer" || s == "number") m |= kTNumber;
      };
      if (t->is_array()) {
        for (const auto& x : *t) add(x);
      } else {
        add(*t);
      }
      info.types &= m;
    }
    const Json* values = Get(*bag.node, "enum");
    const Json* one = Get(*bag.node, "const");
    if (one || (values && values->is_array())) {
      std::vector<const Json*> list;
      if (one) {
        list.push_back(one);
      } else {
        for (const auto& v : *values) list.push_back(&v);
      }
      uint8_t types = 0;
      for (const Json* v : list) types |= (TypeOf(*v) & kTNumber) ? static_cast<uint8_t>(kTNumber) : TypeOf(*v);
      info.types &= types;
      if (!info.values) info.values = list;
    }
    if (const Json* req = Get(*bag.node, "required"))
      if (req->is_array())
        for (const auto& r : *req)
          if (r.is_string()) info.required.insert(r.get<std::string>());
    if (const Json* props = Get(*bag.node, "properties")) {
      if (!props->is_object()) continue;
      for (const auto& [name, sub] : props->items()) {
        // A property pinned to listed values (a discriminator), through a $ref.
        Atoms sp;
        if (!Expand(Entry{&sub, bag.path}, &sp, depth + 1).ok() || !sp.groups.empty()) continue;
        for (const Bag& b2 : sp.bags) {
          const Json* pv = Get(*b2.node, "enum");
          const Json* pc = Get(*b2.node, "const");
          if (pc) {
            info.prop_values[name] = {pc};
          } else if (pv && pv->is_array()) {
            std::vector<const Json*> list;
            for (const auto& v : *pv) list.push_back(&v);
            info.prop_values[name] = list;
          }
        }
      }
    }
  }
  return info;
}

bool SchemaCompiler::CheapNegation(const Json& s, int depth) {
  if (s.is_boolean()) return true;
  if (!s.is_object() || depth > 3) return false;
  for (const auto& [k, v] : s.items()) {
    if (!Active(k)) continue;
    if (k == "type" || k == "enum" || k == "const" || k == "required" || k == "minLength" || k == "maxLength" ||
        k == "minimum" || k == "maximum" || k == "exclusiveMinimum" || k == "exclusiveMaximum" || k == "minItems" ||
        k == "maxItems" || k == "minProperties" || k == "maxProperties" || k == "not") {
      continue;
    } else if (k == "uniqueItems") {
      if (!(v.is_boolean() && !v.get<bool>())) return false;
    } else if (k == "properties") {
      if (Get(s, "patternProperties") || Get(s, "additionalProperties") || Get(s, "unevaluatedProperties") ||
          !v.is_object())
        return false;
      for (const auto& [name, sub] : v.items())
        if (!CheapNegation(sub, depth + 1)) return false;
    } else if (k == "$ref") {
      if (!v.is_string()) return false;
      auto t = Resolve(v.get<std::string>(), &s, "");
      if (!t.ok() || !CheapNegation(*t->node, depth + 1)) return false;
      if (static_cast<int>(draft_) <= 7) return true;
    } else if (k == "allOf" || k == "anyOf") {
      if (!v.is_array()) return false;
      for (const auto& sub : v)
        if (!CheapNegation(sub, depth + 1)) return false;
    } else if (IsLocalKeyword(k) || k == "oneOf" || k == "if" || k == "dependentSchemas" || k == "dependencies" ||
               k == "$dynamicRef" || k == "$recursiveRef") {
      return false;  // patterns, formats, items, additionalProperties, ...: possible but not cheap
    }
  }
  return true;
}

bool SchemaCompiler::ExclusiveOneOf(const Json& list, const std::string& lpath, int depth, Group* g) {
  const size_t n = list.size();
  if (n > 4) return false;
  for (size_t j = 0; j < n; ++j)
    if (!CheapNegation(list[j], 0)) return false;
  // The disjuncts each negation splits into.
  std::vector<size_t> ways(n);
  for (size_t j = 0; j < n; ++j) {
    Atoms trial;
    if (!Expand(Entry{&list[j], Child(lpath, j), true}, &trial, depth + 1).ok() || !trial.opaque.empty()) return false;
    size_t w = 1;
    for (const Group& tg : trial.groups) w *= tg.alts.size();
    if (w > 8) return false;
    ways[j] = w;
  }
  for (size_t i = 0; i < n; ++i) {
    size_t combos = 1;
    for (size_t j = 0; j < n; ++j)
      if (j != i) combos *= ways[j];
    if (combos > 16) return false;
  }
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j)
      if (j != i) g->alts[i].push_back(Entry{&list[j], Child(lpath, j), true});
  return true;
}

bool SchemaCompiler::Disjoint(const BranchInfo& a, const BranchInfo& b) {
  const uint8_t common = a.types & b.types;
  if (common == 0) return true;
  auto disjoint_values = [](const std::vector<const Json*>& x, const std::vector<const Json*>& y) {
    for (const Json* u : x)
      for (const Json* v : y)
        if (JsonEqual(*u, *v)) return false;
    return true;
  };
  if (a.values && b.values && disjoint_values(*a.values, *b.values)) return true;
  // Objects told apart by a property one of them requires, with disjoint listed values.
  if ((common & ~kTObject) == 0) {
    for (const auto& [name, va] : a.prop_values) {
      auto it = b.prop_values.find(name);
      if (it == b.prop_values.end()) continue;
      if (!a.required.count(name) && !b.required.count(name)) continue;
      if (disjoint_values(va, it->second)) return true;
    }
  }
  return false;
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
  RS_RETURN_IF_ERROR(CheckReserved(node, e.path));
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
  // Keywords of other drafts are not keywords here (the reference validator ignores them too);
  // say so rather than drop them silently.
  for (const auto& [k, v] : node.items()) {
    if (Active(k)) continue;
    NotEnforced(Child(e.path, k), "'" + k + "' is not a keyword of the schema's draft (" +
                                      std::to_string(static_cast<int>(draft_)) + ") and is ignored");
  }
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
        std::vector<BranchInfo> infos;
        for (size_t i = 0; i < v.size() && disjoint; ++i) {
          infos.push_back(Probe(Entry{&v[i], Child(lpath, i)}, depth));
          for (size_t j = 0; j + 1 < infos.size() && disjoint; ++j) disjoint = Disjoint(infos[j], infos.back());
        }
        if (!disjoint) {
          // Exactly one: branch i and the negation of every other branch, when those negations
          // are cheap (a few disjuncts each, none opaque); otherwise anyOf, reported.
          if (ExclusiveOneOf(v, lpath, depth, &g)) {
            g.order = order();
            out->groups.push_back(std::move(g));
            continue;
          }
          NotEnforced(lpath, "oneOf exclusivity is not enforced (compiled as anyOf)");
        }
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
      auto add = [&](const Json& t) { m |= TypeBitsOf(t.is_string() ? t.get<std::string>() : ""); };
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
    } else if (k == "propertyNames") {
      // Some key is not a name the schema allows: when the names it refuses are a short list,
      // that is "one of them is present".
      auto names = KeyNamesDfa({Entry{&v, Child(path, k)}}, Child(path, k));
      std::optional<std::vector<std::u32string>> refused;
      if (names.ok()) refused = names->Complement().FiniteStrings(64);
      if (!refused) return unsupported(k);
      for (const auto& name : *refused) {
        std::string utf8;
        for (char32_t c : name) AppendUtf8(static_cast<uint32_t>(c), &utf8);
        out->push_back(Json{{"type", "object"}, {"required", Json::array({utf8})}});
      }
    } else if (k == "additionalProperties" || k == "patternProperties" || k == "unevaluatedProperties" ||
               k == "items" || k == "prefixItems" || k == "additionalItems" ||
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

}  // namespace radixserve::grammar::internal
