// JSON Schema front-end: an instance validator.
//
// Where a subschema lists its values (`enum` / `const`), the grammar is those values that pass
// every other constraint there; deciding that needs a validator, and having one makes every
// keyword (uniqueItems, contains, any multipleOf, not of anything) exact in that position. It
// follows the reference validator (Python jsonschema) in its semantics: the document's draft
// decides which keywords exist, 1 == 1.0 but true != 1, string lengths count code points,
// `pattern` searches, multipleOf with a fractional divisor divides in doubles. Regexes and
// formats go through the same automata the grammar uses.
#include <cmath>
#include <functional>
#include <set>

#include "core/grammar/json_schema_compiler.h"
#include "core/grammar/json_schema_formats.h"

namespace radixserve::grammar::internal {

namespace {

bool IsNumber(const Json& v) { return v.is_number(); }

int64_t CodepointLength(const std::string& s) {
  int64_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

}  // namespace

uint8_t SchemaCompiler::TypeOf(const Json& v) {
  if (v.is_null()) return kTNull;
  if (v.is_boolean()) return kTBool;
  if (v.is_object()) return kTObject;
  if (v.is_array()) return kTArray;
  if (v.is_string()) return kTString;
  if (v.is_number_integer() || v.is_number_unsigned()) return kTInt;
  if (v.is_number_float()) {
    const double d = v.get<double>();
    return std::isfinite(d) && std::trunc(d) == d ? kTInt : kTFrac;
  }
  return 0;
}

bool SchemaCompiler::JsonEqual(const Json& a, const Json& b) {
  if (a.is_string() || b.is_string()) return a.is_string() && b.is_string() && a.get_ref<const std::string&>() == b.get_ref<const std::string&>();
  if (a.is_array() || b.is_array()) {
    if (!a.is_array() || !b.is_array() || a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!JsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (a.is_object() || b.is_object()) {
    if (!a.is_object() || !b.is_object() || a.size() != b.size()) return false;
    for (const auto& [k, v] : a.items()) {
      auto it = b.find(k);
      if (it == b.end() || !JsonEqual(v, *it)) return false;
    }
    return true;
  }
  if (a.is_boolean() || b.is_boolean()) return a.is_boolean() && b.is_boolean() && a.get<bool>() == b.get<bool>();
  if (a.is_null() || b.is_null()) return a.is_null() && b.is_null();
  auto da = Decimal::FromJson(a), db = Decimal::FromJson(b);
  return da && db && Compare(*da, *db) == 0;
}

Result<bool> SchemaCompiler::ValidateAtoms(const Atoms& atoms, const Json& inst) {
  if (atoms.unsat) return false;
  for (const Bag& bag : atoms.bags) {
    RS_ASSIGN_OR_RETURN(bool ok, ValidateLocal(*bag.node, bag.path, inst, 0));
    if (!ok) return false;
  }
  for (const Entry& e : atoms.opaque) {
    RS_ASSIGN_OR_RETURN(bool ok, Validate(*e.node, e.path, inst, 0));
    if (ok == e.neg) return false;
  }
  for (const Group& g : atoms.groups) {
    bool any = false;
    for (const auto& alt : g.alts) {
      bool all = true;
      for (const Entry& e : alt) {
        RS_ASSIGN_OR_RETURN(bool ok, Validate(*e.node, e.path, inst, 0));
        if (ok == e.neg) {
          all = false;
          break;
        }
      }
      if (all) {
        any = true;
        break;
      }
    }
    if (!any) return false;
  }
  return true;
}

Result<bool> SchemaCompiler::Validate(const Json& schema, const std::string& path, const Json& inst, int depth) {
  if (depth > 200) return Fail(StatusCode::kResourceExhausted, path, "validation nests more than 200 deep");
  if (schema.is_boolean()) return schema.get<bool>();
  if (!schema.is_object()) return Fail(StatusCode::kInvalidArgument, path, "a schema must be an object or a boolean");
  RS_RETURN_IF_ERROR(CheckReserved(schema, path));
  if (schema.contains("$rs-loc")) {
    const Entry e = LocAt(schema);
    return Validate(*e.node, e.path, inst, depth + 1);
  }
  for (const char* k : {"$dynamicRef", "$recursiveRef"})
    if (Get(schema, k)) return Fail(StatusCode::kUnsupported, Child(path, k), std::string("'") + k + "' is not supported");
  if (const Json* ref = Get(schema, "$ref")) {
    if (!ref->is_string()) return Fail(StatusCode::kInvalidArgument, Child(path, "$ref"), "must be a string");
    RS_ASSIGN_OR_RETURN(Entry t, Resolve(ref->get<std::string>(), &schema, path));
    RS_ASSIGN_OR_RETURN(bool ok, Validate(*t.node, t.path, inst, depth + 1));
    if (!ok) return false;
    if (static_cast<int>(draft_) <= 7) return true;
  }
  RS_ASSIGN_OR_RETURN(bool local, ValidateLocal(schema, path, inst, depth));
  if (!local) return false;
  for (const char* k : {"allOf", "anyOf", "oneOf"})
    if (const Json* list = Get(schema, k); list && !list->is_array())
      return Fail(StatusCode::kInvalidArgument, Child(path, k), "must be an array");
  if (const Json* all = Get(schema, "allOf")) {
    for (size_t i = 0; i < all->size(); ++i) {
      RS_ASSIGN_OR_RETURN(bool ok, Validate((*all)[i], Child(Child(path, "allOf"), i), inst, depth + 1));
      if (!ok) return false;
    }
  }
  if (const Json* any = Get(schema, "anyOf")) {
    bool found = false;
    for (size_t i = 0; i < any->size() && !found; ++i) {
      RS_ASSIGN_OR_RETURN(bool ok, Validate((*any)[i], Child(Child(path, "anyOf"), i), inst, depth + 1));
      found = ok;
    }
    if (!found) return false;
  }
  if (const Json* one = Get(schema, "oneOf")) {
    int n = 0;
    for (size_t i = 0; i < one->size(); ++i) {
      RS_ASSIGN_OR_RETURN(bool ok, Validate((*one)[i], Child(Child(path, "oneOf"), i), inst, depth + 1));
      n += ok;
    }
    if (n != 1) return false;
  }
  if (const Json* n = Get(schema, "not")) {
    RS_ASSIGN_OR_RETURN(bool ok, Validate(*n, Child(path, "not"), inst, depth + 1));
    if (ok) return false;
  }
  if (const Json* cond = Get(schema, "if")) {
    RS_ASSIGN_OR_RETURN(bool c, Validate(*cond, Child(path, "if"), inst, depth + 1));
    const Json* branch = Get(schema, c ? "then" : "else");
    if (branch) {
      RS_ASSIGN_OR_RETURN(bool ok, Validate(*branch, Child(path, c ? "then" : "else"), inst, depth + 1));
      if (!ok) return false;
    }
  }
  if (inst.is_object()) {
    for (const char* k : {"dependentSchemas", "dependencies"}) {
      const Json* deps = Get(schema, k);
      if (!deps || !deps->is_object()) continue;
      for (const auto& [name, sub] : deps->items()) {
        if (sub.is_array() || !inst.contains(name)) continue;
        RS_ASSIGN_OR_RETURN(bool ok, Validate(sub, Child(Child(path, k), name), inst, depth + 1));
        if (!ok) return false;
      }
    }
  }
  if (inst.is_object()) {
    if (const Json* un = Get(schema, "unevaluatedProperties")) {
      // Keys covered by this schema's and its in-place subschemas' property keywords.
      std::function<void(const Json&, const std::string&, int, std::set<std::string>*, bool*)> collect =
          [&](const Json& s, const std::string& p, int d, std::set<std::string>* keys, bool* all) {
            if (d > 50 || !s.is_object()) return;
            if (const Json* props = Get(s, "properties"))
              if (props->is_object())
                for (const auto& [k, v] : props->items()) keys->insert(k);
            if (Get(s, "additionalProperties")) *all = true;
            if (const Json* pp = Get(s, "patternProperties")) {
              if (pp->is_object())
                for (const auto& [pat, v] : pp->items()) {
                  auto dfa = PatternDfa(pat, p);
                  if (!dfa.ok()) continue;
                  for (const auto& [k, v2] : inst.items()) {
                    std::u32string k32;
                    if (DecodeUtf8String(k, &k32) && (*dfa)->Matches(k32)) keys->insert(k);
                  }
                }
            }
            if (const Json* ref = Get(s, "$ref"))
              if (ref->is_string()) {
                auto t = Resolve(ref->get<std::string>(), &s, p);
                if (t.ok()) collect(*t->node, t->path, d + 1, keys, all);
              }
            for (const char* k : {"allOf", "anyOf", "oneOf"})
              if (const Json* list = Get(s, k); list && list->is_array())
                for (size_t i = 0; i < list->size(); ++i) {
                  auto ok = Validate((*list)[i], p, inst, depth + 1);
                  if (ok.ok() && *ok) collect((*list)[i], p, d + 1, keys, all);
                }
          };
      std::set<std::string> keys;
      bool all = false;
      collect(schema, path, 0, &keys, &all);
      if (!all)
        for (const auto& [k, v] : inst.items()) {
          if (keys.count(k)) continue;
          RS_ASSIGN_OR_RETURN(bool ok, Validate(*un, Child(path, "unevaluatedProperties"), v, depth + 1));
          if (!ok) return false;
        }
    }
  }
  return true;
}

Result<bool> SchemaCompiler::ValidateLocal(const Json& s, const std::string& path, const Json& inst, int depth) {
  if (!s.is_object()) return Validate(s, path, inst, depth + 1);
  RS_RETURN_IF_ERROR(CheckReserved(s, path));
  uint8_t t = TypeOf(inst);
  // Draft 4: a number written with a fraction (1.0) is not an integer.
  if (draft_ == Draft::k4 && inst.is_number_float()) t = kTFrac;
  for (const auto& [k, v] : s.items()) {
    if (!Active(k)) continue;
    const std::string kp = Child(path, k);
    if (k == "type") {
      uint8_t m = 0;
      auto add = [&](const Json& x) {
        const std::string n = x.is_string() ? x.get<std::string>() : "";
        if (n == "null") m |= kTNull;
        else if (n == "boolean") m |= kTBool;
        else if (n == "object") m |= kTObject;
        else if (n == "array") m |= kTArray;
        else if (n == "string") m |= kTString;
        else if (n == "integer") m |= kTInt;
        else if (n == "number") m |= kTNumber;
        else if (n == "$rs-fraction") m |= kTFrac;
      };
      if (v.is_array()) {
        for (const auto& x : v) add(x);
      } else {
        add(v);
      }
      if (!(m & t)) return false;
    } else if (k == "enum") {
      if (!v.is_array()) return Fail(StatusCode::kInvalidArgument, kp, "must be an array");
      bool found = false;
      for (const auto& x : v) found |= JsonEqual(x, inst);
      if (!found) return false;
    } else if (k == "const") {
      if (!JsonEqual(v, inst)) return false;
    } else if (k == "$rs-exclude") {
      for (const auto& x : v)
        if (JsonEqual(x, inst)) return false;
    } else if (inst.is_string() && (k == "minLength" || k == "maxLength")) {
      if (!IsNumber(v)) return Fail(StatusCode::kInvalidArgument, kp, "must be a number");
      const int64_t len = CodepointLength(inst.get_ref<const std::string&>());
      if (k == "minLength" ? len < v.get<double>() : len > v.get<double>()) return false;
    } else if (inst.is_string() && (k == "pattern" || k == "$rs-notpattern")) {
      if (!v.is_string()) return Fail(StatusCode::kInvalidArgument, kp, "must be a string");
      RS_ASSIGN_OR_RETURN(const CharDfa* d, PatternDfa(v.get<std::string>(), kp));
      std::u32string s32;
      DecodeUtf8String(inst.get_ref<const std::string&>(), &s32);
      if (d->Matches(s32) != (k == "pattern")) return false;
    } else if (inst.is_string() && (k == "format" || k == "$rs-notformat")) {
      if (!v.is_string()) continue;
      const CharDfa* d = FormatDfa(v.get<std::string>());
      if (!d) continue;
      std::u32string s32;
      DecodeUtf8String(inst.get_ref<const std::string&>(), &s32);
      if (d->Matches(s32) != (k == "format")) return false;
    } else if ((t & kTNumber) && (k == "minimum" || k == "maximum" || k == "exclusiveMinimum" || k == "exclusiveMaximum")) {
      if (v.is_boolean()) continue;
      auto bound = Decimal::FromJson(v);
      auto x = Decimal::FromJson(inst);
      if (!bound || !x) return Fail(StatusCode::kInvalidArgument, kp, "must be a number");
      const int c = Compare(*x, *bound);
      bool excl = k == "exclusiveMinimum" || k == "exclusiveMaximum";
      if (static_cast<int>(draft_) == 4 && excl) continue;  // draft 4: only a modifier
      if (!excl) {
        const Json* ex = Get(s, k == "minimum" ? "exclusiveMinimum" : "exclusiveMaximum");
        excl = ex && ((ex->is_boolean() && ex->get<bool>()) ||
                      (static_cast<int>(draft_) == 4 && ex->is_number() && ex->get<double>() != 0));
      }
      const bool is_min = k == "minimum" || k == "exclusiveMinimum";
      if (is_min ? (c < 0 || (c == 0 && excl)) : (c > 0 || (c == 0 && excl))) return false;
    } else if ((t & kTNumber) && k == "multipleOf") {
      if (!IsNumber(v)) return Fail(StatusCode::kInvalidArgument, kp, "must be a number");
      bool failed;
      if (v.is_number_float()) {
        const double q = inst.get<double>() / v.get<double>();
        failed = !std::isfinite(q) || std::trunc(q) != q;
      } else if (inst.is_number_integer() || inst.is_number_unsigned()) {
        const int64_t d = v.get<int64_t>();
        failed = d == 0 || inst.get<int64_t>() % d != 0;
      } else {
        failed = std::fmod(inst.get<double>(), v.get<double>()) != 0;
      }
      if (failed) return false;
    } else if (inst.is_object() && k == "properties") {
      if (!v.is_object()) return Fail(StatusCode::kInvalidArgument, kp, "must be an object");
      for (const auto& [name, sub] : v.items()) {
        auto it = inst.find(name);
        if (it == inst.end()) continue;
        RS_ASSIGN_OR_RETURN(bool ok, Validate(sub, Child(kp, name), *it, depth + 1));
        if (!ok) return false;
      }
    } else if (inst.is_object() && (k == "patternProperties" || k == "additionalProperties")) {
      if (k == "additionalProperties" || !Get(s, "additionalProperties")) {
        // Both keywords together, once.
        const Json* pp = Get(s, "patternProperties");
        const Json* props = Get(s, "properties");
        if ((pp && !pp->is_object()) || (props && !props->is_object()))
          return Fail(StatusCode::kInvalidArgument, kp, "properties and patternProperties must be objects");
        const Json* add = Get(s, "additionalProperties");
        for (const auto& [name, val] : inst.items()) {
          bool matched = false;
          std::u32string n32;
          DecodeUtf8String(name, &n32);
          if (pp) {
            for (const auto& [pat, sub] : pp->items()) {
              const std::string ppath = Child(Child(path, "patternProperties"), pat);
              RS_ASSIGN_OR_RETURN(const CharDfa* d, PatternDfa(pat, ppath));
              if (!d->Matches(n32)) continue;
              matched = true;
              RS_ASSIGN_OR_RETURN(bool ok, Validate(sub, ppath, val, depth + 1));
              if (!ok) return false;
            }
          }
          if (add && !matched && !(props && props->contains(name))) {
            RS_ASSIGN_OR_RETURN(bool ok, Validate(*add, Child(path, "additionalProperties"), val, depth + 1));
            if (!ok) return false;
          }
        }
      }
    } else if (inst.is_object() && k == "required") {
      for (const auto& name : v)
        if (name.is_string() && !inst.contains(name.get<std::string>())) return false;
    } else if (inst.is_object() && k == "propertyNames") {
      for (const auto& [name, val] : inst.items()) {
        RS_ASSIGN_OR_RETURN(bool ok, Validate(v, kp, Json(name), depth + 1));
        if (!ok) return false;
      }
    } else if (inst.is_object() && (k == "minProperties" || k == "maxProperties")) {
      if (!IsNumber(v)) return Fail(StatusCode::kInvalidArgument, kp, "must be a number");
      const double n = static_cast<double>(inst.size());
      if (k == "minProperties" ? n < v.get<double>() : n > v.get<double>()) return false;
    } else if (inst.is_object() && (k == "dependentRequired" || k == "dependencies")) {
      if (!v.is_object()) return Fail(StatusCode::kInvalidArgument, kp, "must be an object");
      for (const auto& [name, deps] : v.items()) {
        if (!deps.is_array() || !inst.contains(name)) continue;
        for (const auto& d : deps)
          if (d.is_string() && !inst.contains(d.get<std::string>())) return false;
      }
    } else if (inst.is_array() && (k == "items" || k == "prefixItems" || k == "additionalItems")) {
      if (k != "items" && Get(s, "items")) continue;  // handled with items
      const Json* items = Get(s, "items");
      const Json* prefix = nullptr;
      const Json* rest = nullptr;
      std::string prefix_path, rest_path;
      if (items && items->is_array()) {
        prefix = items, prefix_path = Child(path, "items");
        rest = Get(s, "additionalItems"), rest_path = Child(path, "additionalItems");
      } else {
        prefix = Get(s, "prefixItems"), prefix_path = Child(path, "prefixItems");
        rest = items, rest_path = Child(path, "items");
      }
      if (prefix && !prefix->is_array()) return Fail(StatusCode::kInvalidArgument, prefix_path, "must be an array");
      for (size_t i = 0; i < inst.size(); ++i) {
        if (prefix && i < prefix->size()) {
          RS_ASSIGN_OR_RETURN(bool ok, Validate((*prefix)[i], Child(prefix_path, i), inst[i], depth + 1));
          if (!ok) return false;
        } else if (rest) {
          RS_ASSIGN_OR_RETURN(bool ok, Validate(*rest, rest_path, inst[i], depth + 1));
          if (!ok) return false;
        }
      }
    } else if (inst.is_array() && (k == "minItems" || k == "maxItems")) {
      if (!IsNumber(v)) return Fail(StatusCode::kInvalidArgument, kp, "must be a number");
      const double n = static_cast<double>(inst.size());
      if (k == "minItems" ? n < v.get<double>() : n > v.get<double>()) return false;
    } else if (inst.is_array() && k == "uniqueItems") {
      if (v.is_boolean() && v.get<bool>())
        for (size_t i = 0; i < inst.size(); ++i)
          for (size_t j = i + 1; j < inst.size(); ++j)
            if (JsonEqual(inst[i], inst[j])) return false;
    } else if (inst.is_array() && (k == "contains" || k == "$rs-contains")) {
      int64_t n = 0;
      for (const auto& x : inst) {
        RS_ASSIGN_OR_RETURN(bool ok, Validate(v, kp, x, depth + 1));
        n += ok;
      }
      const Json* mn = Get(s, "minContains");
      const Json* mx = Get(s, "maxContains");
      const double lo = mn && IsNumber(*mn) ? mn->get<double>() : 1;
      if (n < lo) return false;
      if (mx && IsNumber(*mx) && n > mx->get<double>()) return false;
    } else if (inst.is_array() && k == "unevaluatedItems") {
      const Json* items = Get(s, "items");
      if (items && !items->is_array()) continue;  // every item evaluated
      size_t covered = 0;
      if (items && items->is_array()) covered = Get(s, "additionalItems") ? inst.size() : items->size();
      if (const Json* p = Get(s, "prefixItems"); p && p->is_array()) covered = std::max(covered, p->size());
      for (size_t i = covered; i < inst.size(); ++i) {
        RS_ASSIGN_OR_RETURN(bool ok, Validate(v, kp, inst[i], depth + 1));
        if (!ok) return false;
      }
    }
  }
  return true;
}

}  // namespace radixserve::grammar::internal
