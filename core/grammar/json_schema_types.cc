// JSON Schema front-end: the body of a compiled conjunction (enum filtering, group splitting,
// merging bags), the grammars of scalars, any value and literal values. Strings, arrays and
// objects are in files of their own.
#include <algorithm>
#include <functional>

#include "core/grammar/json_schema_compiler.h"
#include "core/grammar/json_schema_formats.h"

namespace radixserve::grammar::internal {

namespace {

Result<int64_t> Count(const SchemaCompiler& c, const Json& v, const std::string& path) {
  if (v.is_number_unsigned() || v.is_number_integer()) {
    if (v.get<int64_t>() < 0) return c.Fail(StatusCode::kInvalidArgument, path, "must be a non-negative integer");
    return v.get<int64_t>();
  }
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (d >= 0 && d == static_cast<double>(static_cast<int64_t>(d)) && d < 9e18) return static_cast<int64_t>(d);
  }
  return c.Fail(StatusCode::kInvalidArgument, path, "must be a non-negative integer");
}

Result<uint8_t> TypeMask(const SchemaCompiler& c, const Json& v, const std::string& path) {
  uint8_t m = 0;
  auto add = [&](const Json& t) -> Status {
    if (!t.is_string()) return c.Fail(StatusCode::kInvalidArgument, path, "type names must be strings");
    const std::string s = t.get<std::string>();
    const uint8_t bits = TypeBitsOf(s);
    if (bits == 0) return c.Fail(StatusCode::kInvalidArgument, path, "unknown type '" + s + "'");
    m |= bits;
    return Status::Ok();
  };
  if (v.is_array()) {
    for (const auto& t : v) RS_RETURN_IF_ERROR(add(t));
  } else {
    RS_RETURN_IF_ERROR(add(v));
  }
  return m;
}

bool DecodeString(const Json& v, std::u32string* out) { return DecodeUtf8String(v.get_ref<const std::string&>(), out); }

}  // namespace

std::string SchemaCompiler::KeyLiteral(const std::string& key) {
  return Json(key).dump(-1, ' ', false, Json::error_handler_t::replace);
}

// ---------------------------------------------------------------------------------------------
// The body of a conjunction.

Result<std::vector<Sequence>> SchemaCompiler::CompileBody(const Atoms& atoms, const std::string& path) {
  // 1. A finite set of values: those listed that pass everything else.
  const Bag* enum_bag = nullptr;
  for (const Bag& bag : atoms.bags)
    if (Get(*bag.node, "enum") || Get(*bag.node, "const")) {
      enum_bag = &bag;
      break;
    }
  if (enum_bag) {
    std::vector<const Json*> candidates;
    if (const Json* c = Get(*enum_bag->node, "const")) {
      candidates.push_back(c);
    } else {
      const Json* e = Get(*enum_bag->node, "enum");
      if (!e->is_array() || e->empty())
        return Fail(StatusCode::kInvalidArgument, Child(enum_bag->path, "enum"), "must be a non-empty array");
      for (const auto& v : *e) candidates.push_back(&v);
    }
    std::vector<const Json*> kept;
    for (const Json* v : candidates) {
      bool dup = false;
      for (const Json* k : kept) dup |= JsonEqual(*k, *v);
      if (dup) continue;
      RS_ASSIGN_OR_RETURN(bool ok, ValidateAtoms(atoms, *v));
      if (ok) kept.push_back(v);
    }
    if (kept.empty()) {
      NoteUnsat(Child(enum_bag->path, Get(*enum_bag->node, "const") ? "const" : "enum") +
                ": no value of 'enum' / 'const' passes the other keywords");
      return std::vector<Sequence>();
    }
    return EmitValues(kept);
  }
  // 2. A disjunction: one alternative per branch, each with everything else.
  if (!atoms.groups.empty()) {
    const Group& g = atoms.groups[0];
    Atoms rest = atoms;
    rest.groups.erase(rest.groups.begin());
    std::vector<Sequence> alts;
    for (const auto& alt : g.alts) {
      Atoms a = rest;
      a.base = g.order;  // the branch's keywords sit where the group is written
      for (const Entry& e : alt) RS_RETURN_IF_ERROR(Expand(e, &a, 0));
      RS_ASSIGN_OR_RETURN(std::optional<Symbol> s, CompileAtoms(a, alt.empty() ? g.path : alt[0].path));
      if (s) alts.push_back({*s});
    }
    if (alts.empty()) NoteUnsatBecause(g.path + ": no branch can be satisfied together with the rest of the schema");
    return alts;
  }
  // 3. Merge the bags (a negation no grammar expresses can only be checked against listed values).
  if (!atoms.opaque.empty()) return atoms.opaque_error;
  MergedIr ir;
  for (const Bag& bag : atoms.bags) RS_RETURN_IF_ERROR(ReadBag(bag, &ir));
  // An excluded object or array matters only if the rest could produce it.
  std::vector<const Json*> excluded;
  for (const Json* v : ir.excluded) {
    if (v->is_object() || v->is_array()) {
      RS_ASSIGN_OR_RETURN(bool possible, ValidateAtoms(atoms, *v));
      if (possible)
        return Fail(StatusCode::kUnsupported, ir.excluded_path,
                    "'not' of an object or array value ('enum' / 'const') is not supported");
      continue;
    }
    excluded.push_back(v);
  }
  ir.excluded = std::move(excluded);
  return EmitMerged(ir, path);
}

Status SchemaCompiler::ReadBag(const Bag& bag, MergedIr* ir) {
  const Json& node = *bag.node;
  const std::string& path = bag.path;
  std::optional<Decimal> bag_lo, bag_hi;
  std::string lo_path, hi_path;
  auto tighten_lo = [&](const Decimal& d, bool excl, const std::string& p) {
    NumberSpec& n = ir->num;
    const int c = n.lo ? Compare(d, *n.lo) : 1;
    if (!n.lo || c > 0 || (c == 0 && excl)) n.lo = d, n.lo_excl = excl;
    if (!bag_lo || Compare(d, *bag_lo) > 0) bag_lo = d, lo_path = p;
    ir->num_path = p;
  };
  auto tighten_hi = [&](const Decimal& d, bool excl, const std::string& p) {
    NumberSpec& n = ir->num;
    const int c = n.hi ? Compare(d, *n.hi) : -1;
    if (!n.hi || c < 0 || (c == 0 && excl)) n.hi = d, n.hi_excl = excl;
    if (!bag_hi || Compare(d, *bag_hi) < 0) bag_hi = d, hi_path = p;
    ir->num_path = p;
  };
  ObjBag ob;
  ob.path = path;
  bool has_obj = false;
  int64_t bag_min_len = 0, bag_max_len = -1, bag_min_items = 0, bag_max_items = -1, bag_min_props = 0,
          bag_max_props = -1;
  for (const auto& [k, v] : node.items()) {
    if (!Active(k)) continue;
    const std::string kp = Child(path, k);
    if (k == "type") {
      RS_ASSIGN_OR_RETURN(uint8_t m, TypeMask(*this, v, kp));
      ir->types &= m;
      ir->type_path = kp;
    } else if (k == "$rs-exclude") {
      for (const auto& x : v) ir->excluded.push_back(&x);
      ir->excluded_path = path;
    } else if (k == "minLength") {
      RS_ASSIGN_OR_RETURN(int64_t n, Count(*this, v, kp));
      ir->str.min_len = std::max(ir->str.min_len, n);
      bag_min_len = n;
      ir->str.len_path = kp;
    } else if (k == "maxLength") {
      RS_ASSIGN_OR_RETURN(int64_t n, Count(*this, v, kp));
      ir->str.max_len = ir->str.max_len < 0 ? n : std::min(ir->str.max_len, n);
      bag_max_len = n;
      ir->str.len_path = kp;
    } else if (k == "pattern" || k == "$rs-notpattern") {
      if (!v.is_string()) return Fail(StatusCode::kInvalidArgument, kp, "must be a string");
      (k == "pattern" ? ir->str.patterns : ir->str.not_patterns).push_back({v.get<std::string>(), kp});
    } else if (k == "format" || k == "$rs-notformat") {
      if (!v.is_string()) return Fail(StatusCode::kInvalidArgument, kp, "must be a string");
      const std::string f = v.get<std::string>();
      switch (ClassifyFormat(f)) {
        case FormatKind::kEnforced:
          (k == "format" ? ir->str.formats : ir->str.not_formats).push_back({f, kp});
          break;
        case FormatKind::kNotEnforced:
          NotEnforced(kp, "format '" + f + "' is not enforced");
          break;
        case FormatKind::kAnnotation:
          break;
      }
    } else if (k == "minimum" || k == "maximum") {
      auto d = Decimal::FromJson(v);
      if (!d) return Fail(StatusCode::kInvalidArgument, kp, "must be a number");
      const Json* ex = Get(node, k == "minimum" ? "exclusiveMinimum" : "exclusiveMaximum");
      // Draft 4's boolean modifier (read in every draft: a boolean means nothing else).
      const bool excl = ex && ((ex->is_boolean() && ex->get<bool>()) ||
                               (static_cast<int>(draft_) == 4 && ex->is_number() && ex->get<double>() != 0));
      if (k == "minimum") tighten_lo(*d, excl, kp);
      else tighten_hi(*d, excl, kp);
    } else if (k == "exclusiveMinimum" || k == "exclusiveMaximum") {
      if (v.is_boolean() || static_cast<int>(draft_) == 4) continue;
      auto d = Decimal::FromJson(v);
      if (!d) return Fail(StatusCode::kInvalidArgument, kp, "must be a number");
      if (k == "exclusiveMinimum") tighten_lo(*d, true, kp);
      else tighten_hi(*d, true, kp);
    } else if (k == "multipleOf") {
      auto d = Decimal::FromJson(v);
      if (!d || d->neg || d->IsZero()) return Fail(StatusCode::kInvalidArgument, kp, "must be a number above 0");
      ir->multiple_of.push_back({*d, kp});
    } else if (k == "properties" || k == "patternProperties") {
      if (!v.is_object()) return Fail(StatusCode::kInvalidArgument, kp, "must be an object");
      (k == "properties" ? ob.properties : ob.pattern_properties) = &v;
      has_obj = true;
    } else if (k == "additionalProperties") {
      ob.additional = &v;
      has_obj = true;
    } else if (k == "unevaluatedProperties") {
      if (v.is_boolean() && v.get<bool>()) continue;
      if (!(v.is_boolean() || (v.is_object() && v.empty())))
        return Fail(StatusCode::kUnsupported, kp,
                    "'unevaluatedProperties' with a schema is not supported (only false or true)");
      if (v.is_object()) continue;  // {} is true
      ob.unevaluated = &v;
      has_obj = true;
    } else if (k == "required") {
      if (!v.is_array()) return Fail(StatusCode::kInvalidArgument, kp, "must be an array of strings");
      for (const auto& name : v) {
        if (!name.is_string()) return Fail(StatusCode::kInvalidArgument, kp, "must be an array of strings");
        ir->obj.required.push_back({name.get<std::string>(), kp});
      }
    } else if (k == "propertyNames") {
      ir->obj.property_names.push_back(Entry{&v, kp});
    } else if (k == "minProperties") {
      RS_ASSIGN_OR_RETURN(int64_t n, Count(*this, v, kp));
      ir->obj.min_props = std::max(ir->obj.min_props, n);
      bag_min_props = n;
      ir->obj.props_path = kp;
    } else if (k == "maxProperties") {
      RS_ASSIGN_OR_RETURN(int64_t n, Count(*this, v, kp));
      ir->obj.max_props = ir->obj.max_props < 0 ? n : std::min(ir->obj.max_props, n);
      bag_max_props = n;
      ir->obj.props_path = kp;
    } else if (k == "dependentRequired" || k == "dependencies") {
      if (!v.is_object()) return Fail(StatusCode::kInvalidArgument, kp, "must be an object");
      for (const auto& [name, dep] : v.items()) {
        if (!dep.is_array()) {
          if (k == "dependentRequired") return Fail(StatusCode::kInvalidArgument, Child(kp, name), "must be an array");
          continue;  // a schema: an applicator, expanded as a group
        }
        std::vector<std::string> names;
        for (const auto& d : dep) {
          if (!d.is_string()) return Fail(StatusCode::kInvalidArgument, Child(kp, name), "must list strings");
          names.push_back(d.get<std::string>());
        }
        ir->obj.dep_required.push_back({name, names});
      }
    } else if (k == "items" || k == "prefixItems") {
      if (k == "prefixItems" && !v.is_array()) return Fail(StatusCode::kInvalidArgument, kp, "must be an array");
      if (k == "prefixItems" && Get(node, "items")) continue;  // read with items
      ArrBag ab;
      ab.path = path;
      const Json* prefix = nullptr;
      const Json* rest = nullptr;
      std::string prefix_path, rest_path;
      if (v.is_array()) {
        prefix = &v, prefix_path = kp;
        if (const Json* add = Get(node, "additionalItems")) rest = add, rest_path = Child(path, "additionalItems");
      } else if (k == "items") {
        rest = &v, rest_path = kp;
        if (const Json* p = Get(node, "prefixItems")) prefix = p, prefix_path = Child(path, "prefixItems");
      }
      if (prefix) {
        if (!prefix->is_array()) return Fail(StatusCode::kInvalidArgument, prefix_path, "must be an array");
        for (size_t i = 0; i < prefix->size(); ++i) ab.prefix.push_back(Entry{&(*prefix)[i], Child(prefix_path, i)});
      }
      if (rest) ab.rest = Entry{rest, rest_path};
      ir->arr.bags.push_back(std::move(ab));
    } else if (k == "minItems") {
      RS_ASSIGN_OR_RETURN(int64_t n, Count(*this, v, kp));
      ir->arr.min_items = std::max(ir->arr.min_items, n);
      bag_min_items = n;
      ir->arr.items_path = kp;
    } else if (k == "maxItems") {
      RS_ASSIGN_OR_RETURN(int64_t n, Count(*this, v, kp));
      ir->arr.max_items = ir->arr.max_items < 0 ? n : std::min(ir->arr.max_items, n);
      bag_max_items = n;
      ir->arr.items_path = kp;
    } else if (k == "uniqueItems") {
      if (v.is_boolean() && v.get<bool>()) NotEnforced(kp, "uniqueItems is not enforced");
    } else if (k == "contains" || k == "$rs-contains") {
      const Json* mn = Get(node, "minContains");
      const Json* mx = Get(node, "maxContains");
      if (mn && mn->is_number() && mn->get<double>() == 0 && !mx) continue;  // always satisfied
      if ((mn && !(mn->is_number() && mn->get<double>() == 1)) || mx)
        return Fail(StatusCode::kUnsupported, Child(path, mx ? "maxContains" : "minContains"),
                    "'minContains' / 'maxContains' are not supported (except next to 'enum' or 'const')");
      ir->arr.contains.push_back(Entry{&v, kp});
    } else if (k == "unevaluatedItems") {
      if (v.is_boolean() && v.get<bool>()) continue;
      return Fail(StatusCode::kUnsupported, kp, "'" + k + "' is not supported (except next to 'enum' or 'const')");
    }
  }
  if (has_obj) ir->obj.bags.push_back(ob);
  // Contradictions inside one schema object are mistakes: refuse them where they are written.
  if (bag_max_len >= 0 && bag_min_len > bag_max_len)
    return Fail(StatusCode::kInvalidArgument, Child(path, "maxLength"),
                "maxLength " + std::to_string(bag_max_len) + " is below minLength " + std::to_string(bag_min_len));
  if (bag_max_items >= 0 && bag_min_items > bag_max_items)
    return Fail(StatusCode::kInvalidArgument, Child(path, "maxItems"),
                "maxItems " + std::to_string(bag_max_items) + " is below minItems " + std::to_string(bag_min_items));
  if (bag_max_props >= 0 && bag_min_props > bag_max_props)
    return Fail(StatusCode::kInvalidArgument, Child(path, "maxProperties"),
                "maxProperties " + std::to_string(bag_max_props) + " is below minProperties " +
                    std::to_string(bag_min_props));
  if (bag_lo && bag_hi && Compare(*bag_lo, *bag_hi) > 0)
    return Fail(StatusCode::kInvalidArgument, hi_path,
                "the upper bound " + bag_hi->ToString() + " is below the lower bound " + bag_lo->ToString());
  return Status::Ok();
}

Result<std::vector<Sequence>> SchemaCompiler::EmitMerged(MergedIr& ir, const std::string& path) {
  GrammarBuilder& b = *b_;
  const size_t notes_before = unsat_notes();
  uint8_t types = ir.types;
  bool no_true = false, no_false = false;
  std::vector<Decimal> excluded_numbers;
  for (const Json* v : ir.excluded) {
    if (v->is_null()) types &= static_cast<uint8_t>(~kTNull);
    if (v->is_boolean()) (v->get<bool>() ? no_true : no_false) = true;
    if (v->is_string()) {
      std::u32string s;
      if (DecodeString(*v, &s)) ir.str.excluded.push_back(std::move(s));
    }
    if (v->is_number()) {
      if (auto d = Decimal::FromJson(*v)) excluded_numbers.push_back(*d);
    }
  }
  std::vector<Sequence> alts;
  if (types & kTNull) alts.push_back(b.Literal("null"));
  if (types & kTBool) {
    if (!no_true) alts.push_back(b.Literal("true"));
    if (!no_false) alts.push_back(b.Literal("false"));
  }
  if (types & kTNumber) {
    NumberSpec spec = ir.num;
    bool integer = (types & kTNumber) == kTInt;
    // Numbers but not integers (from `not: {type: integer}`): a non-zero fraction digit.
    spec.non_integer = (types & kTNumber) == kTFrac;
    for (const auto& [m, mpath] : ir.multiple_of) {
      const bool one = m.ip == "1" && m.fp.empty();
      const bool power = m.ip.empty() && !m.fp.empty() && m.fp.back() == '1' &&
                         m.fp.find_first_not_of('0') == m.fp.size() - 1;
      if (one) {
        integer = true;
      } else if (power) {
        const int d = static_cast<int>(m.fp.size());
        if (spec.max_frac_digits < 0 || d < spec.max_frac_digits) spec.max_frac_digits = d;
      } else {
        return Fail(StatusCode::kUnsupported, mpath,
                    "multipleOf " + m.ToString() + " is not supported (only 1 and 0.1, 0.01, ...; any value inside 'enum')");
      }
    }
    spec.integer = integer;
    if (integer) spec.max_frac_digits = -1;
    // Draft 4 counts only numbers without a fraction as integers (1.0 is not one); later drafts,
    // and a number that must be a multiple of 1, take every integral value.
    spec.point_zero = !(draft_ == Draft::k4 && (types & kTNumber) == kTInt);
    // Excluded values split the range into pieces with exclusive ends.
    std::sort(excluded_numbers.begin(), excluded_numbers.end(),
              [](const Decimal& x, const Decimal& y) { return Compare(x, y) < 0; });
    std::vector<NumberSpec> pieces{spec};
    for (const Decimal& x : excluded_numbers) {
      NumberSpec& last = pieces.back();
      const bool above_lo = !last.lo || Compare(x, *last.lo) > 0 || (Compare(x, *last.lo) == 0 && !last.lo_excl);
      const bool below_hi = !last.hi || Compare(x, *last.hi) < 0 || (Compare(x, *last.hi) == 0 && !last.hi_excl);
      if (!above_lo || !below_hi) continue;
      NumberSpec upper = last;
      last.hi = x, last.hi_excl = true;
      upper.lo = x, upper.lo_excl = true;
      pieces.push_back(upper);
    }
    bool any = false;
    for (const NumberSpec& p : pieces) {
      const bool unbounded = !p.lo && !p.hi && p.max_frac_digits < 0 && !p.integer && !p.non_integer;
      std::optional<Symbol> s = unbounded ? std::optional<Symbol>(AnyNumber()) : numbers_->Emit(p);
      if (s) alts.push_back({*s}), any = true;
    }
    if (!any && !ir.num_path.empty()) NoteUnsat(ir.num_path + ": no number satisfies the bounds");
  }
  if (types & kTString) {
    RS_ASSIGN_OR_RETURN(std::optional<Symbol> s, EmitString(ir.str, path));
    if (s) alts.push_back({*s});
  }
  if (types & kTArray) {
    RS_ASSIGN_OR_RETURN(std::optional<Symbol> s, EmitArray(ir.arr, path));
    if (s) alts.push_back({*s});
  }
  if (types & kTObject) {
    RS_ASSIGN_OR_RETURN(std::optional<Symbol> s, EmitObject(ir.obj, path));
    if (s) alts.push_back({*s});
  }
  if (alts.empty()) {
    if (types == 0) {
      NoteUnsat((ir.type_path.empty() ? path : ir.type_path) + ": the allowed types do not intersect");
    } else if (unsat_notes() == notes_before) {
      NoteUnsat(path + ": no value satisfies all the keywords");
    }
  }
  return alts;
}

// ---------------------------------------------------------------------------------------------
// Any value.

Symbol SchemaCompiler::AnyNumber() {
  if (!any_number_) any_number_ = *numbers_->Emit(NumberSpec{});
  return *any_number_;
}

Symbol SchemaCompiler::AnyValue() {
  if (any_value_) return *any_value_;
  GrammarBuilder& b = *b_;
  const uint32_t value = b.NewRule("value");
  any_value_ = Symbol::Rule(value);
  const uint32_t object = b.NewRule("object");
  any_object_ = Symbol::Rule(object);
  const uint32_t array = b.NewRule("array");
  // Every element is followed by its whitespace; separators are "," then whitespace.
  Sequence sep{b.Byte(',')};
  Ws(&sep);
  Sequence member{PlainString()};
  Ws(&member);
  member.push_back(b.Byte(':'));
  Ws(&member);
  member.push_back(Symbol::Rule(value));
  Ws(&member);
  Sequence more_member = sep;
  more_member.insert(more_member.end(), member.begin(), member.end());
  const Symbol members = b.Star(more_member, "members");
  Sequence open_obj{b.Byte('{')};
  Ws(&open_obj);
  b.AddAlternative(object, [&] {
    Sequence s = open_obj;
    s.push_back(b.Byte('}'));
    return s;
  }());
  b.AddAlternative(object, [&] {
    Sequence s = open_obj;
    s.insert(s.end(), member.begin(), member.end());
    s.push_back(members);
    s.push_back(b.Byte('}'));
    return s;
  }());
  Sequence item{Symbol::Rule(value)};
  Ws(&item);
  Sequence more_item = sep;
  more_item.insert(more_item.end(), item.begin(), item.end());
  const Symbol items = b.Star(more_item, "items");
  Sequence open_arr{b.Byte('[')};
  Ws(&open_arr);
  b.AddAlternative(array, [&] {
    Sequence s = open_arr;
    s.push_back(b.Byte(']'));
    return s;
  }());
  b.AddAlternative(array, [&] {
    Sequence s = open_arr;
    s.insert(s.end(), item.begin(), item.end());
    s.push_back(items);
    s.push_back(b.Byte(']'));
    return s;
  }());
  b.AddAlternative(value, {Symbol::Rule(object)});
  b.AddAlternative(value, {Symbol::Rule(array)});
  b.AddAlternative(value, {PlainString()});
  b.AddAlternative(value, {AnyNumber()});
  b.AddAlternative(value, b.Literal("true"));
  b.AddAlternative(value, b.Literal("false"));
  b.AddAlternative(value, b.Literal("null"));
  return *any_value_;
}


// ---------------------------------------------------------------------------------------------
// Literal values (enum / const).

Result<std::vector<Sequence>> SchemaCompiler::EmitValues(const std::vector<const Json*>& values) {
  std::vector<Sequence> alts;
  std::vector<std::u32string> strings;
  for (const Json* v : values) {
    if (v->is_string()) {
      std::u32string s;
      if (DecodeString(*v, &s)) strings.push_back(std::move(s));
      continue;
    }
    RS_ASSIGN_OR_RETURN(Sequence seq, EmitValue(*v));
    alts.push_back(std::move(seq));
  }
  // All strings as one automaton: a trie, so the matcher never holds one branch per value.
  if (!strings.empty()) alts.push_back({strings_->Emit(CharDfa::Literals(strings), "str")});
  return alts;
}

Result<Sequence> SchemaCompiler::EmitValue(const Json& v) {
  GrammarBuilder& b = *b_;
  if (v.is_null()) return b.Literal("null");
  if (v.is_boolean()) return b.Literal(v.get<bool>() ? "true" : "false");
  if (v.is_number()) {
    auto d = Decimal::FromJson(v);
    if (!d) return Status::InvalidArgument(": a number in 'enum' / 'const' is not finite");
    // The spellings of the value without an exponent: 1.5, 1.50; an integral value as an
    // integer (2, and 2.0 only where integers may carry a zero fraction: in draft 4, 2.0 would
    // fail a `type: integer` next to the enum).
    NumberSpec spec;
    spec.lo = spec.hi = *d;
    spec.integer = d->IsInteger();
    spec.point_zero = draft_ != Draft::k4;
    auto s = numbers_->Emit(spec);
    if (!s) return Status::Internal(": no text for a number");
    return Sequence{*s};
  }
  if (v.is_string()) {
    std::u32string s;
    if (!DecodeString(v, &s)) return Status::InvalidArgument(": a string in 'enum' / 'const' is not UTF-8");
    return Sequence{strings_->Emit(CharDfa::Literals({s}), "str")};
  }
  Sequence seq;
  Sequence sep{b.Byte(',')};
  Ws(&sep);
  if (v.is_array()) {
    seq.push_back(b.Byte('['));
    Ws(&seq);
    bool first = true;
    for (const auto& x : v) {
      if (!first) seq.insert(seq.end(), sep.begin(), sep.end());
      first = false;
      RS_ASSIGN_OR_RETURN(Sequence e, EmitValue(x));
      seq.insert(seq.end(), e.begin(), e.end());
      Ws(&seq);
    }
    seq.push_back(b.Byte(']'));
    return Sequence{b.Choice({seq}, "array")};
  }
  seq.push_back(b.Byte('{'));
  Ws(&seq);
  bool first = true;
  for (const auto& [k, x] : v.items()) {
    if (!first) seq.insert(seq.end(), sep.begin(), sep.end());
    first = false;
    const Sequence key = b.Literal(KeyLiteral(k));
    seq.insert(seq.end(), key.begin(), key.end());
    Ws(&seq);
    seq.push_back(b.Byte(':'));
    Ws(&seq);
    RS_ASSIGN_OR_RETURN(Sequence e, EmitValue(x));
    seq.insert(seq.end(), e.begin(), e.end());
    Ws(&seq);
  }
  seq.push_back(b.Byte('}'));
  return Sequence{b.Choice({seq}, "object")};
}

}  // namespace radixserve::grammar::internal
