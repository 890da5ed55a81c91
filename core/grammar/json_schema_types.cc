// JSON Schema front-end: the body of a compiled conjunction (enum filtering, group splitting,
// merging bags), and the grammars of scalars, strings, arrays and literal values. Objects are in
// json_schema_object.cc.
#include <algorithm>
#include <functional>

#include "core/grammar/json_schema_compiler.h"
#include "core/grammar/json_schema_formats.h"
#include "core/grammar/regex.h"

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
    if (s == "null") m |= kTNull;
    else if (s == "boolean") m |= kTBool;
    else if (s == "object") m |= kTObject;
    else if (s == "array") m |= kTArray;
    else if (s == "string") m |= kTString;
    else if (s == "integer") m |= kTInt;
    else if (s == "number") m |= kTNumber;
    else if (s == "$rs-fraction") m |= kTFrac;
    else return c.Fail(StatusCode::kInvalidArgument, path, "unknown type '" + s + "'");
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

std::string SchemaCompiler::KeyLiteral(const std::string& key) { return Json(key).dump(); }

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
      NoteUnsat(enum_bag->path + ": no value of 'enum' / 'const' passes the other keywords");
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
    if (alts.empty()) NoteUnsat(g.path + ": no branch can be satisfied together with the rest of the schema");
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
    } else if (k == "items" || (k == "prefixItems" && !Get(node, "items"))) {
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
    if ((types & kTNumber) == kTFrac)
      return Fail(StatusCode::kUnsupported, ir.type_path, "a type that allows numbers but not integers is not supported");
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
      const bool unbounded = !p.lo && !p.hi && p.max_frac_digits < 0 && !p.integer;
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
    if (types == 0) NoteUnsat((ir.type_path.empty() ? path : ir.type_path) + ": the allowed types do not intersect");
    else NoteUnsat(path + ": no value satisfies all the keywords");
  }
  return alts;
}

// ---------------------------------------------------------------------------------------------
// Strings.

Symbol SchemaCompiler::StringChar() {
  if (string_char_) return *string_char_;
  GrammarBuilder& b = *b_;
  const Symbol raw = b.CodepointRanges({{0x20, 0x21}, {0x23, 0x5B}, {0x5D, kMaxCodepoint}}, "chr");
  ByteSet simple;
  for (char c : std::string("\"\\/bfnrt")) simple.Add(static_cast<uint8_t>(c));
  ByteSet hex;
  hex.AddRange('0', '9');
  hex.AddRange('a', 'f');
  hex.AddRange('A', 'F');
  ByteSet not_d = hex;
  not_d.Remove('d');
  not_d.Remove('D');
  ByteSet d;
  d.Add('d');
  d.Add('D');
  ByteSet low_half = ByteSet::Range('0', '7');
  ByteSet high_sur;  // 8-B
  for (char c : std::string("89abAB")) high_sur.Add(static_cast<uint8_t>(c));
  ByteSet low_sur;  // C-F
  for (char c : std::string("cdefCDEF")) low_sur.Add(static_cast<uint8_t>(c));
  const Symbol h = b.Bytes(hex);
  const Symbol u = b.Byte('u');
  const Symbol bs = b.Byte('\\');
  // \u: a code point outside the surrogates, or a surrogate pair.
  const Symbol esc = b.Choice({{b.Bytes(simple)},
                               {u, b.Bytes(not_d), h, h, h},
                               {u, b.Bytes(d), b.Bytes(low_half), h, h},
                               {u, b.Bytes(d), b.Bytes(high_sur), h, h, bs, u, b.Bytes(d), b.Bytes(low_sur), h, h}},
                              "esc");
  string_char_ = b.Choice({{raw}, {bs, esc}}, "char");
  return *string_char_;
}

Symbol SchemaCompiler::Repeat(const Sequence& item, int64_t min, int64_t max, std::string_view name) {
  GrammarBuilder& b = *b_;
  const int64_t cap = static_cast<int64_t>(b.limits().max_repeat);
  if (min <= cap && max <= cap) return b.Repeat(item, min, max, name);
  // Blocks: block[j] is exactly 64^j items.
  constexpr int64_t kBase = 64;
  std::vector<Symbol> block{item.size() == 1 ? item[0] : b.Choice({item}, name)};
  auto block_at = [&](size_t j) {
    while (block.size() <= j) block.push_back(b.Choice({Sequence(kBase, block.back())}, "block"));
    return block[j];
  };
  // Exactly n items: the base-64 digits of n, most significant first.
  auto exactly = [&](int64_t n) {
    Sequence seq;
    std::vector<int64_t> digits;
    for (int64_t x = n; x > 0; x /= kBase) digits.push_back(x % kBase);
    for (size_t j = digits.size(); j-- > 0;)
      for (int64_t d = 0; d < digits[j]; ++d) seq.push_back(block_at(j));
    return seq;
  };
  // below[j]: any count in [0, 64^j - 1].
  std::vector<Symbol> below{b.Empty()};
  auto below_at = [&](size_t j) {
    while (below.size() <= j) {
      const size_t k = below.size();
      below.push_back(b.Choice({{b.Repeat({block_at(k - 1)}, 0, kBase - 1, "blocks"), below[k - 1]}}, "below"));
    }
    return below[j];
  };
  // At most n items: fewer top blocks and anything below, or all of them and at most the rest.
  std::function<Symbol(int64_t)> up_to = [&](int64_t n) -> Symbol {
    if (n < kBase) return b.Repeat(item, 0, n, name);
    size_t m = 0;
    int64_t p = 1;
    while (p <= n / kBase) p *= kBase, ++m;
    const int64_t top = n / p;
    std::vector<Sequence> alts;
    alts.push_back({b.Repeat({block_at(m)}, 0, top - 1, "blocks"), below_at(m)});
    Sequence full(static_cast<size_t>(top), block_at(m));
    full.push_back(up_to(n % p));
    alts.push_back(std::move(full));
    return b.Choice(std::move(alts), "upto");
  };
  Sequence seq = exactly(min);
  if (max < 0) {
    seq.push_back(b.Star(item, name));
  } else {
    seq.push_back(up_to(max - min));
  }
  return b.Choice({seq}, name);
}

Symbol SchemaCompiler::PlainString() {
  if (!plain_string_) {
    GrammarBuilder& b = *b_;
    const Symbol chars = b.Star({StringChar()}, "chars");
    plain_string_ = b.Choice({{b.Byte('"'), chars, b.Byte('"')}}, "string");
  }
  return *plain_string_;
}

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

Result<const CharDfa*> SchemaCompiler::PatternDfa(const std::string& pattern, const std::string& path) {
  auto it = pattern_cache_.find(pattern);
  if (it != pattern_cache_.end()) return it->second.get();
  auto err = pattern_errors_.find(pattern);
  Status status;
  if (err == pattern_errors_.end()) {
    const size_t cap = std::min<size_t>(20000, std::max<size_t>(1000, b_->limits().max_symbols / 50));
    auto dfa = CharDfa::FromRegex(pattern, /*search=*/true, cap, b_->limits().max_repeat);
    if (dfa.ok()) {
      auto p = std::make_unique<CharDfa>(std::move(dfa).value());
      const CharDfa* out = p.get();
      pattern_cache_.emplace(pattern, std::move(p));
      return out;
    }
    status = dfa.status();
    pattern_errors_.emplace(pattern, status);
  } else {
    status = err->second;
  }
  if (status.code() == StatusCode::kUnsupported)
    return Fail(StatusCode::kUnsupported, path, "the regex '" + pattern + "' uses an unsupported construct: " + status.message());
  return Fail(status.code(), path, "the regex '" + pattern + "': " + status.message());
}

Result<CharDfa> SchemaCompiler::StringDfa(const StringIr& s, const std::string& path) {
  const size_t cap = std::min<size_t>(50000, std::max<size_t>(1000, b_->limits().max_symbols / 20));
  CharDfa d = CharDfa::AnyString();
  auto combine = [&](const CharDfa& other, CharDfa::Op op, const std::string& where, bool minimize = true) -> Status {
    auto r = CharDfa::Combine(d, other, op, cap, minimize);
    if (!r.ok())
      return Fail(r.status().code(), where, "the string constraints together are too large: " + r.status().message());
    d = std::move(r).value();
    return Status::Ok();
  };
  for (const auto& [p, ppath] : s.patterns) {
    RS_ASSIGN_OR_RETURN(const CharDfa* pd, PatternDfa(p, ppath));
    RS_RETURN_IF_ERROR(combine(*pd, CharDfa::Op::kAnd, ppath));
  }
  for (const auto& [f, fpath] : s.formats) {
    const CharDfa* fd = FormatDfa(f);
    if (!fd) return Fail(StatusCode::kInternal, fpath, "format automaton missing");
    RS_RETURN_IF_ERROR(combine(*fd, CharDfa::Op::kAnd, fpath));
  }
  for (const auto& [p, ppath] : s.not_patterns) {
    RS_ASSIGN_OR_RETURN(const CharDfa* pd, PatternDfa(p, ppath));
    RS_RETURN_IF_ERROR(combine(*pd, CharDfa::Op::kMinus, ppath));
  }
  for (const auto& [f, fpath] : s.not_formats) {
    const CharDfa* fd = FormatDfa(f);
    if (!fd) return Fail(StatusCode::kInternal, fpath, "format automaton missing");
    RS_RETURN_IF_ERROR(combine(*fd, CharDfa::Op::kMinus, fpath));
  }
  if (!s.excluded.empty()) RS_RETURN_IF_ERROR(combine(CharDfa::Literals(s.excluded), CharDfa::Op::kMinus, path));
  if (s.min_len > 0 || s.max_len >= 0) {
    if (static_cast<uint64_t>(std::max(s.min_len, s.max_len)) > b_->limits().max_repeat)
      return Fail(StatusCode::kResourceExhausted, s.len_path,
                  "a length bound over " + std::to_string(b_->limits().max_repeat) +
                      " together with a pattern, format or excluded values is over the cap");
    RS_RETURN_IF_ERROR(combine(CharDfa::Length(s.min_len, s.max_len), CharDfa::Op::kAnd, s.len_path, false));
  }
  return d;
}

Result<std::optional<Symbol>> SchemaCompiler::EmitString(const StringIr& s, const std::string& path) {
  GrammarBuilder& b = *b_;
  if (s.max_len >= 0 && s.min_len > s.max_len) {
    NoteUnsat(s.len_path + ": minLength " + std::to_string(s.min_len) + " is above maxLength " + std::to_string(s.max_len));
    return std::optional<Symbol>();
  }
  const bool automaton = !s.patterns.empty() || !s.formats.empty() || !s.not_patterns.empty() ||
                         !s.not_formats.empty() || !s.excluded.empty();
  if (!automaton) {
    if (s.min_len == 0 && s.max_len < 0) return std::optional<Symbol>(PlainString());
    const Symbol rep = Repeat({StringChar()}, s.min_len, s.max_len, "chars");
    return std::optional<Symbol>(b.Choice({{b.Byte('"'), rep, b.Byte('"')}}, "string"));
  }
  // The same string constraints (a pattern on many properties) make one rule.
  std::string key = std::to_string(s.min_len) + "," + std::to_string(s.max_len);
  for (const auto* list : {&s.patterns, &s.formats, &s.not_patterns, &s.not_formats}) {
    key += "|";
    for (const auto& [x, p] : *list) key += std::to_string(x.size()) + ":" + x;
  }
  for (const auto& x : s.excluded) {
    key += "|";
    for (char32_t c : x) key += std::to_string(static_cast<uint32_t>(c)) + ".";
  }
  if (auto it = string_cache_.find(key); it != string_cache_.end()) return it->second;
  auto dfa = StringDfa(s, path);
  if (!dfa.ok()) {
    // A lone pattern our automata cannot read may still be one regex.h compiles.
    const bool lone = s.patterns.size() == 1 && s.formats.empty() && s.not_patterns.empty() && s.not_formats.empty() &&
                      s.excluded.empty() && s.min_len == 0 && s.max_len < 0;
    if (!lone) return dfa.status();
    auto sym = AddRegex(b, s.patterns[0].first, RegexContext::kJsonString, /*search_semantics=*/true);
    if (!sym.ok()) return Fail(sym.status().code(), s.patterns[0].second, "'pattern': " + sym.status().message());
    return std::optional<Symbol>(b.Choice({{b.Byte('"'), *sym, b.Byte('"')}}, "string"));
  }
  if (dfa->IsEmpty()) {
    NoteUnsat(path + ": no string satisfies the pattern, format, length and excluded values together");
    string_cache_[key] = std::nullopt;
    return std::optional<Symbol>();
  }
  const Symbol sym = strings_->Emit(*dfa, "str");
  string_cache_[key] = sym;
  return std::optional<Symbol>(sym);
}

// ---------------------------------------------------------------------------------------------
// Arrays.

Result<std::optional<Symbol>> SchemaCompiler::EmitArray(const ArrayIr& a, const std::string& path) {
  GrammarBuilder& b = *b_;
  int64_t min = a.min_items, max = a.max_items;
  if (max >= 0 && min > max) {
    NoteUnsat(a.items_path + ": minItems " + std::to_string(min) + " is above maxItems " + std::to_string(max));
    return std::optional<Symbol>();
  }
  size_t prefix_len = 0;
  for (const ArrBag& ab : a.bags) prefix_len = std::max(prefix_len, ab.prefix.size());
  std::vector<Symbol> positions;
  for (size_t j = 0; j < prefix_len && (max < 0 || static_cast<int64_t>(j) < max); ++j) {
    std::vector<Entry> entries;
    for (const ArrBag& ab : a.bags) {
      if (j < ab.prefix.size()) entries.push_back(ab.prefix[j]);
      else if (ab.rest) entries.push_back(*ab.rest);
    }
    RS_ASSIGN_OR_RETURN(std::optional<Symbol> s, CompileEntries(entries));
    if (!s) {
      max = static_cast<int64_t>(j);  // no array reaches this position
      break;
    }
    positions.push_back(*s);
  }
  const int64_t fixed = static_cast<int64_t>(positions.size());
  std::optional<Symbol> rest;
  if (fixed == static_cast<int64_t>(prefix_len) && (max < 0 || max > fixed)) {
    std::vector<Entry> entries;
    for (const ArrBag& ab : a.bags)
      if (ab.rest) entries.push_back(*ab.rest);
    RS_ASSIGN_OR_RETURN(rest, CompileEntries(entries));
    if (!rest) max = fixed;
  } else if (max < 0 || max > fixed) {
    max = fixed;
  }
  if (max >= 0 && min > max) {
    NoteUnsat(path + ": the items allowed cannot make minItems " + std::to_string(min));
    return std::optional<Symbol>();
  }
  // Elements are followed by their whitespace; separators are "," and whitespace.
  Sequence sep{b.Byte(',')};
  Ws(&sep);
  auto element = [&](Symbol s, bool first) {
    Sequence e = first ? Sequence{} : sep;
    e.push_back(s);
    Ws(&e);
    return e;
  };
  if (!a.contains.empty()) {
    // Some item satisfies `contains`: items before it, that item, items after it, counted.
    if (a.contains.size() > 1 || prefix_len > 0)
      return Fail(StatusCode::kUnsupported, a.contains.back().path,
                  "'contains' together with prefixItems or another 'contains' is not supported");
    std::vector<Entry> entries{a.contains[0]};
    for (const ArrBag& ab : a.bags)
      if (ab.rest) entries.push_back(*ab.rest);
    RS_ASSIGN_OR_RETURN(std::optional<Symbol> hit, CompileEntries(entries));
    if (!hit || !rest || max == 0) {
      NoteUnsat(a.contains[0].path + ": no item can satisfy 'contains'");
      return std::optional<Symbol>();
    }
    const int64_t top = max >= 0 ? max : std::max<int64_t>(min, 1);
    if (static_cast<uint64_t>(top) > b.limits().max_repeat)
      return Fail(StatusCode::kResourceExhausted, a.items_path, "item count bound over the cap together with 'contains'");
    // after[c]: the items after the hit, c items so far; before[c]: still looking.
    std::vector<std::optional<Symbol>> after(static_cast<size_t>(top) + 1), before(static_cast<size_t>(top) + 1);
    for (int64_t c = top; c >= 1; --c) {
      std::vector<Sequence> alts;
      if (c >= min) alts.push_back({});
      const int64_t nc = std::min(c + 1, top);
      if (max < 0 || c < max) {
        Sequence more = element(*rest, false);
        if (nc == c) {
          const uint32_t self = b.NewRule("after");
          more.push_back(Symbol::Rule(self));
          alts.push_back(std::move(more));
          for (auto& s : alts) b.AddAlternative(self, std::move(s));
          after[c] = Symbol::Rule(self);
          continue;
        }
        if (after[nc]) more.push_back(*after[nc]), alts.push_back(std::move(more));
      }
      if (!alts.empty()) after[c] = b.Choice(std::move(alts), "after");
    }
    for (int64_t c = (max >= 0 ? max - 1 : top); c >= 0; --c) {
      const int64_t nc = std::min(c + 1, top);
      std::vector<Sequence> alts;
      if (after[nc]) {
        Sequence take = element(*hit, c == 0);
        take.push_back(*after[nc]);
        alts.push_back(std::move(take));
      }
      if (nc == c) {
        const uint32_t self = b.NewRule("before");
        Sequence more = element(*rest, c == 0);
        more.push_back(Symbol::Rule(self));
        alts.push_back(std::move(more));
        for (auto& s : alts) b.AddAlternative(self, std::move(s));
        before[c] = Symbol::Rule(self);
        continue;
      }
      if (before[nc] && (max < 0 || nc < max)) {
        Sequence more = element(*rest, c == 0);
        more.push_back(*before[nc]);
        alts.push_back(std::move(more));
      }
      if (!alts.empty()) before[c] = b.Choice(std::move(alts), "before");
    }
    if (!before[0]) {
      NoteUnsat(a.contains[0].path + ": no array satisfies 'contains' with the item counts");
      return std::optional<Symbol>();
    }
    Sequence open{b.Byte('[')};
    Ws(&open);
    open.push_back(*before[0]);
    open.push_back(b.Byte(']'));
    return std::optional<Symbol>(b.Choice({open}, "array"));
  }
  // tail: the elements after the fixed positions.
  std::optional<Symbol> tail;
  const int64_t rmin = std::max<int64_t>(0, min - fixed);
  const int64_t rmax = max < 0 ? -1 : max - fixed;
  if (rest && rmax != 0) {
    if (fixed > 0) {
      tail = Repeat(element(*rest, false), rmin, rmax, "items");
    } else {
      // The first element has no separator.
      Sequence first = element(*rest, true);
      const Symbol more = Repeat(element(*rest, false), std::max<int64_t>(0, rmin - 1), rmax < 0 ? -1 : rmax - 1, "items");
      first.push_back(more);
      tail = rmin == 0 ? b.Optional(first, "items") : b.Choice({first}, "items");
    }
  }
  // Positions from the last to the first: T_j = (end, if j >= min) | element_j T_{j+1}.
  enum class Cont { kImpossible, kEmpty, kSymbol };
  Cont cont = tail ? Cont::kSymbol : (rmin == 0 ? Cont::kEmpty : Cont::kImpossible);
  std::optional<Symbol> next = tail;
  for (int64_t j = fixed - 1; j >= 0; --j) {
    std::vector<Sequence> alts;
    if (j >= min) alts.push_back({});
    if (cont != Cont::kImpossible) {
      Sequence take = element(positions[static_cast<size_t>(j)], j == 0);
      if (cont == Cont::kSymbol) take.push_back(*next);
      alts.push_back(std::move(take));
    }
    if (alts.empty()) {
      cont = Cont::kImpossible;
      continue;
    }
    next = b.Choice(std::move(alts), "items");
    cont = Cont::kSymbol;
  }
  if (cont == Cont::kImpossible) {
    NoteUnsat(path + ": the items allowed cannot make minItems " + std::to_string(min));
    return std::optional<Symbol>();
  }
  Sequence open{b.Byte('[')};
  Ws(&open);
  if (cont == Cont::kSymbol) open.push_back(*next);
  open.push_back(b.Byte(']'));
  return std::optional<Symbol>(b.Choice({open}, "array"));
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
    // Every spelling of the value without an exponent: 2, 2.0, 2.00 (the validator compares values).
    NumberSpec spec;
    spec.lo = spec.hi = *d;
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
