// JSON Schema front-end: objects.
//
// An object is written with its listed keys first, in a fixed order (each skippable unless
// required), then the keys that are not listed. The grammar is a chain of rules Body(i, c, f):
// "the members from listed key i on, with c members written so far and f the presence of the
// keys that dependentRequired ties together". Counting c makes minProperties / maxProperties
// exact and puts the separating comma only between members; f makes dependentRequired exact
// whichever of the two keys comes first. Keys that are not listed are split into classes by the
// patternProperties regexes they match (as automata: the keys matching exactly this subset of
// patterns, none of the listed names, and propertyNames), each class with the conjunction of the
// value schemas that apply to it.
#include <algorithm>
#include <functional>

#include "core/grammar/json_schema_compiler.h"

namespace radixserve::grammar::internal {

Result<CharDfa> SchemaCompiler::KeyNamesDfa(const std::vector<Entry>& names, const std::string& path) {
  Atoms atoms;
  for (const Entry& e : names) RS_RETURN_IF_ERROR(Expand(e, &atoms, 0));
  if (atoms.unsat) return CharDfa();
  if (!atoms.groups.empty())
    return Fail(StatusCode::kUnsupported, atoms.groups[0].path,
                "'propertyNames' with anyOf / oneOf / if / not of several keywords is not supported");
  for (const Bag& bag : atoms.bags) {
    if (!Get(*bag.node, "enum") && !Get(*bag.node, "const")) continue;
    std::vector<const Json*> candidates;
    if (const Json* c = Get(*bag.node, "const")) {
      candidates.push_back(c);
    } else {
      for (const auto& v : *Get(*bag.node, "enum")) candidates.push_back(&v);
    }
    std::vector<std::u32string> keys;
    for (const Json* v : candidates) {
      if (!v->is_string()) continue;
      RS_ASSIGN_OR_RETURN(bool ok, ValidateAtoms(atoms, *v));
      std::u32string s;
      if (ok && DecodeUtf8String(v->get<std::string>(), &s)) keys.push_back(std::move(s));
    }
    return CharDfa::Literals(keys);
  }
  if (!atoms.opaque.empty()) return atoms.opaque_error;
  MergedIr ir;
  for (const Bag& bag : atoms.bags) RS_RETURN_IF_ERROR(ReadBag(bag, &ir));
  if (!(ir.types & kTString)) return CharDfa();
  for (const Json* v : ir.excluded) {
    std::u32string s;
    if (v->is_string() && DecodeUtf8String(v->get<std::string>(), &s)) ir.str.excluded.push_back(std::move(s));
  }
  if (ir.str.max_len >= 0 && ir.str.min_len > ir.str.max_len) return CharDfa();
  return StringDfa(ir.str, path, /*exact=*/true);
}

namespace {

struct Named {
  std::string key;
  std::optional<Symbol> value;  // nullopt: the key may not appear
  bool required = false;
  int bit = -1;  // index in the dependency flags, or -1
  std::vector<size_t> needs;  // dependentRequired: indices of the keys this one needs
};

}  // namespace

Result<std::optional<Symbol>> SchemaCompiler::EmitObject(const ObjectIr& o, const std::string& path) {
  GrammarBuilder& b = *b_;
  // Listed keys, in order of first mention.
  std::vector<Named> named;
  std::map<std::string, size_t> index;
  auto add_name = [&](const std::string& k) {
    if (index.count(k)) return;
    index[k] = named.size();
    named.push_back(Named{k, std::nullopt, false, -1, {}});
  };
  for (const ObjBag& ob : o.bags)
    if (ob.properties)
      for (const auto& [k, v] : ob.properties->items()) add_name(k);
  for (const auto& [k, p] : o.required) add_name(k);
  for (const auto& [k, deps] : o.dep_required) {
    add_name(k);
    for (const auto& d : deps) add_name(d);
  }

  // Whether some bag's properties / patternProperties / additionalProperties covers `key`
  // (unevaluatedProperties: false forbids the keys nothing covers).
  auto evaluated = [&](const std::string& key, bool matched_pattern) -> Result<bool> {
    if (matched_pattern) return true;
    for (const ObjBag& ob : o.bags) {
      if (ob.additional) return true;
      if (ob.properties && ob.properties->contains(key)) return true;
    }
    return false;
  };

  // Value of each listed key: the conjunction over bags of the schema that applies to it.
  for (Named& n : named) {
    std::vector<Entry> entries;
    bool forbidden = false;
    bool any_pattern = false;
    std::u32string key32;
    DecodeUtf8String(n.key, &key32);
    for (const ObjBag& ob : o.bags) {
      // A listed key takes its properties schema and every patternProperties schema it
      // matches; additionalProperties only applies to keys that get neither.
      bool matched = false;
      if (ob.properties && ob.properties->contains(n.key)) {
        entries.push_back(Entry{&(*ob.properties)[n.key], Child(Child(ob.path, "properties"), n.key)});
        matched = true;
      }
      if (ob.pattern_properties) {
        for (const auto& [p, s] : ob.pattern_properties->items()) {
          const std::string ppath = Child(Child(ob.path, "patternProperties"), p);
          RS_ASSIGN_OR_RETURN(const CharDfa* d, PatternDfa(p, ppath));
          if (d->Matches(key32)) {
            entries.push_back(Entry{&s, ppath});
            matched = true;
            any_pattern = true;
          }
        }
      }
      if (!matched && ob.additional) entries.push_back(Entry{ob.additional, Child(ob.path, "additionalProperties")});
    }
    for (const ObjBag& ob : o.bags) {
      if (!ob.unevaluated) continue;
      RS_ASSIGN_OR_RETURN(bool ev, evaluated(n.key, any_pattern));
      if (!ev) forbidden = true;
    }
    for (const Entry& pn : o.property_names) {
      RS_ASSIGN_OR_RETURN(bool ok, Validate(*pn.node, pn.path, Json(n.key), 0));
      if (!ok) forbidden = true;
    }
    if (!forbidden) {
      RS_ASSIGN_OR_RETURN(n.value, CompileEntries(entries));
    }
  }
  for (const auto& [k, p] : o.required) {
    Named& n = named[index[k]];
    n.required = true;
    if (!n.value) {
      NoteUnsatBecause(p + ": the required property '" + k + "' can have no value");
      return std::optional<Symbol>();
    }
  }
  int bits = 0;
  for (const auto& [k, deps] : o.dep_required) {
    Named& n = named[index[k]];
    for (const auto& d : deps) {
      n.needs.push_back(index[d]);
      if (named[index[d]].bit < 0) named[index[d]].bit = bits++;
    }
    if (n.bit < 0 && !deps.empty()) n.bit = bits++;
  }
  if (bits > 20) return Fail(StatusCode::kUnsupported, path, "dependentRequired over more than 20 properties is not supported");

  // Keys that are not listed: classes by the patterns they match.
  struct PatternInfo {
    size_t bag;
    const CharDfa* dfa;
    Entry value;
  };
  std::vector<PatternInfo> patterns;
  for (size_t i = 0; i < o.bags.size(); ++i) {
    const ObjBag& ob = o.bags[i];
    if (!ob.pattern_properties) continue;
    for (const auto& [p, s] : ob.pattern_properties->items()) {
      const std::string ppath = Child(Child(ob.path, "patternProperties"), p);
      RS_ASSIGN_OR_RETURN(const CharDfa* d, PatternDfa(p, ppath));
      patterns.push_back(PatternInfo{i, d, Entry{&s, ppath}});
    }
  }
  if (patterns.size() > 12)
    return Fail(StatusCode::kUnsupported, path, "more than 12 patternProperties on one object are not supported");
  // Whether the bags allow unlisted keys at all (additionalProperties false everywhere without
  // patterns is the common case: skip the automata).
  bool extras_possible = true;
  for (const ObjBag& ob : o.bags) {
    const bool closed = ob.additional && ob.additional->is_boolean() && !ob.additional->get<bool>();
    if (closed && !ob.pattern_properties) extras_possible = false;
  }
  std::vector<Sequence> extra_members;
  if (extras_possible) {
    const size_t cap = std::min<size_t>(50000, std::max<size_t>(1000, b.limits().max_symbols / 20));
    std::vector<std::u32string> listed;
    for (const Named& n : named) {
      std::u32string s;
      if (DecodeUtf8String(n.key, &s)) listed.push_back(std::move(s));
    }
    CharDfa base = CharDfa::Literals(listed).Complement();
    if (!o.property_names.empty()) {
      RS_ASSIGN_OR_RETURN(CharDfa names, KeyNamesDfa(o.property_names, o.property_names[0].path));
      auto r = CharDfa::Combine(base, names, CharDfa::Op::kAnd, cap, true, keep_going_);
      if (!r.ok()) return Fail(r.status().code(), o.property_names[0].path, r.status().message());
      base = std::move(r).value();
    }
    // Walk the patterns, splitting each class into "matches" and "does not match".
    std::vector<std::pair<CharDfa, std::vector<bool>>> classes;
    std::function<Status(CharDfa, std::vector<bool>, size_t)> split = [&](CharDfa d, std::vector<bool> in,
                                                                         size_t i) -> Status {
      if (d.IsEmpty()) return Status::Ok();
      if (i == patterns.size()) {
        classes.push_back({std::move(d), std::move(in)});
        return Status::Ok();
      }
      auto yes = CharDfa::Combine(d, *patterns[i].dfa, CharDfa::Op::kAnd, cap, true, keep_going_);
      if (!yes.ok()) return Fail(yes.status().code(), patterns[i].value.path, yes.status().message());
      auto no = CharDfa::Combine(d, *patterns[i].dfa, CharDfa::Op::kMinus, cap, true, keep_going_);
      if (!no.ok()) return Fail(no.status().code(), patterns[i].value.path, no.status().message());
      std::vector<bool> with = in;
      with.push_back(true);
      in.push_back(false);
      RS_RETURN_IF_ERROR(split(std::move(yes).value(), std::move(with), i + 1));
      return split(std::move(no).value(), std::move(in), i + 1);
    };
    RS_RETURN_IF_ERROR(split(std::move(base), {}, 0));
    for (auto& [dfa, in] : classes) {
      std::vector<Entry> entries;
      bool forbidden = false;
      bool any_matched = false;
      for (bool x : in) any_matched |= x;
      for (size_t i = 0; i < o.bags.size(); ++i) {
        const ObjBag& ob = o.bags[i];
        bool matched = false;
        for (size_t p = 0; p < patterns.size(); ++p)
          if (patterns[p].bag == i && in[p]) entries.push_back(patterns[p].value), matched = true;
        if (!matched && ob.additional) entries.push_back(Entry{ob.additional, Child(ob.path, "additionalProperties")});
        if (ob.unevaluated && !any_matched) {
          bool covered = false;
          for (const ObjBag& other : o.bags) covered |= other.additional != nullptr;
          if (!covered) forbidden = true;
        }
      }
      if (forbidden) continue;
      RS_ASSIGN_OR_RETURN(std::optional<Symbol> value, CompileEntries(entries));
      if (!value) continue;
      const Symbol key = dfa.IsUniversal() ? PlainString() : strings_->Emit(dfa, "key");
      Sequence m{key};
      Ws(&m);
      m.push_back(b.Byte(':'));
      Ws(&m);
      m.push_back(*value);
      Ws(&m);
      extra_members.push_back(std::move(m));
    }
  }
  std::optional<Symbol> extra;
  if (!extra_members.empty()) {
    extra = extra_members.size() == 1 && extra_members[0].size() == 1 ? extra_members[0][0]
                                                                       : b.Choice(std::move(extra_members), "extra");
  }

  if (!options_.strict_property_order) {
    // Any order: members of any listed or unlisted key, repeated. Which keys are present and
    // how many is then not tracked.
    if (!o.required.empty() || o.min_props > 0 || o.max_props >= 0 || !o.dep_required.empty())
      NotEnforced(path, "required / minProperties / maxProperties / dependentRequired are not enforced when "
                        "properties may come in any order");
    std::vector<Sequence> members;
    for (const Named& n : named) {
      if (!n.value) continue;
      Sequence m = b.Literal(KeyLiteral(n.key));
      Ws(&m);
      m.push_back(b.Byte(':'));
      Ws(&m);
      m.push_back(*n.value);
      Ws(&m);
      members.push_back(std::move(m));
    }
    if (extra) members.push_back({*extra});
    Sequence obj{b.Byte('{')};
    Ws(&obj);
    if (!members.empty()) {
      const Symbol member = b.Choice(std::move(members), "member");
      Sequence sep{b.Byte(',')};
      Ws(&sep);
      sep.push_back(member);
      obj.push_back(b.Optional({member, b.Star(sep, "members")}, "members"));
    }
    obj.push_back(b.Byte('}'));
    return std::optional<Symbol>(b.Choice({obj}, "object"));
  }
  // The member chain.
  const int64_t min_p = o.min_props, max_p = o.max_props;
  if (max_p >= 0 && min_p > max_p) {
    NoteUnsat(o.props_path + ": minProperties is above maxProperties");
    return std::optional<Symbol>();
  }
  const int64_t cap_c = max_p >= 0 ? max_p : std::max<int64_t>(min_p, 1);
  Sequence sep{b.Byte(',')};
  Ws(&sep);
  auto member_of = [&](size_t i, bool first) {
    Sequence m = first ? Sequence{} : sep;
    const Sequence key = b.Literal(KeyLiteral(named[i].key));
    m.insert(m.end(), key.begin(), key.end());
    Ws(&m);
    m.push_back(b.Byte(':'));
    Ws(&m);
    m.push_back(*named[i].value);
    Ws(&m);
    return m;
  };
  // Tail(c): the unlisted members after c members.
  std::map<int64_t, std::optional<Symbol>> tails;
  std::function<std::optional<Symbol>(int64_t)> tail = [&](int64_t c) -> std::optional<Symbol> {
    auto it = tails.find(c);
    if (it != tails.end()) return it->second;
    const bool can_end = c >= min_p;
    const bool can_add = extra && (max_p < 0 || c < max_p);
    if (!can_add) {
      std::optional<Symbol> out;
      if (can_end) out = b.Empty();
      tails[c] = out;
      return out;
    }
    const uint32_t rule = b.NewRule("tail");
    tails[c] = Symbol::Rule(rule);
    const int64_t next_c = std::min(c + 1, cap_c);
    std::optional<Symbol> rest = tail(next_c);
    bool any = false;
    if (can_end) b.AddAlternative(rule, {}), any = true;
    if (rest) {
      Sequence m = c == 0 ? Sequence{} : sep;
      m.push_back(*extra);
      m.push_back(*rest);
      b.AddAlternative(rule, std::move(m));
      any = true;
    }
    if (!any) {
      tails[c] = std::nullopt;
      return std::nullopt;
    }
    return Symbol::Rule(rule);
  };
  // Body(i, c, flags).
  std::map<std::tuple<size_t, int64_t, uint32_t>, std::optional<Symbol>> bodies;
  std::function<Result<std::optional<Symbol>>(size_t, int64_t, uint32_t)> body =
      [&](size_t i, int64_t c, uint32_t flags) -> Result<std::optional<Symbol>> {
    if (i == named.size()) return tail(c);
    auto key = std::make_tuple(i, c, flags);
    auto it = bodies.find(key);
    if (it != bodies.end()) return it->second;
    if (!b.CheckDeadline()) return Status(b.status().code(), path + ": " + b.status().message());
    const Named& n = named[i];
    bool must = n.required;
    bool forbid = !n.value || (max_p >= 0 && c >= max_p);
    if (n.bit >= 0) {
      // A key present earlier that needs this one forces it; a key this one needs that was
      // skipped earlier forbids it.
      for (size_t j = 0; j < i; ++j) {
        const Named& m = named[j];
        if (m.bit < 0 || !(flags >> m.bit & 1)) continue;
        if (std::find(m.needs.begin(), m.needs.end(), i) != m.needs.end()) must = true;
      }
      for (size_t need : n.needs)
        if (need < i && !(flags >> named[need].bit & 1)) forbid = true;
    }
    std::vector<Sequence> alts;
    if (!must) {
      RS_ASSIGN_OR_RETURN(std::optional<Symbol> skip, body(i + 1, c, flags));
      if (skip) alts.push_back({*skip});
    }
    if (!forbid) {
      const uint32_t next_flags = n.bit >= 0 ? flags | (1u << n.bit) : flags;
      RS_ASSIGN_OR_RETURN(std::optional<Symbol> rest, body(i + 1, std::min(c + 1, cap_c), next_flags));
      if (rest) {
        Sequence m = member_of(i, c == 0);
        m.push_back(*rest);
        alts.push_back(std::move(m));
      }
    }
    std::optional<Symbol> out;
    if (!alts.empty()) out = alts.size() == 1 && alts[0].size() == 1 ? alts[0][0] : b.Choice(std::move(alts), "members");
    bodies[key] = out;
    return out;
  };
  RS_ASSIGN_OR_RETURN(std::optional<Symbol> members, body(0, 0, 0));
  if (!members) {
    NoteUnsat(path + ": no object satisfies the property constraints (required, minProperties, maxProperties, "
                     "dependentRequired)");
    return std::optional<Symbol>();
  }
  Sequence obj{b.Byte('{')};
  Ws(&obj);
  obj.push_back(*members);
  obj.push_back(b.Byte('}'));
  return std::optional<Symbol>(b.Choice({obj}, "object"));
}

}  // namespace radixserve::grammar::internal
