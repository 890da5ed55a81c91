// SchemaCompiler: the internals of the JSON Schema front-end (json_schema.h), shared by its
// source files. Not part of the public API.
//
// The pipeline, for each place in the instance (the root, a property value, an item):
//   1. A conjunction of subschemas the value must satisfy (`Entry`s: a schema node, its JSON
//      pointer, and whether it is negated) is expanded (Expand): references followed, allOf
//      flattened, booleans folded, `not` pushed down to single keywords (Negate, which writes the
//      negation as a small synthesized schema), and what remains sorted into "bags" (schema
//      objects whose own keywords apply: type, bounds, properties, ...) and "groups"
//      (disjunctions: anyOf, oneOf, if/then/else, dependentSchemas, negated conjunctions).
//   2. The expanded set is compiled once per distinct set (CompileAtoms, memoized on the set, so
//      a recursive reference becomes a recursive rule): a bag with `enum`/`const` makes the
//      value one of the listed values that pass every other constraint (checked by Validate);
//      otherwise a group is split, one alternative per branch, each compiled with the rest; and
//      finally the bags are merged (intersection of types, tightest bounds, properties of all
//      bags with their value conjunctions) and the grammar of each allowed type is emitted.
//
// Files: json_schema.cc (driver, references, memo), json_schema_expand.cc (expansion,
// negation), json_schema_types.cc (conjunction bodies, merging bags, scalars, literal values),
// json_schema_strings.cc (strings and bounded repetition), json_schema_arrays.cc (arrays),
// json_schema_object.cc (objects), json_schema_validate.cc (the instance validator),
// json_schema_numbers.cc (number ranges), json_schema_formats.cc (formats), char_dfa.cc and
// char_dfa_regex.cc (string automata).
//
// Thread-compatible: one compiler per compile, on one thread.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/grammar/char_dfa.h"
#include "core/grammar/grammar.h"
#include "core/grammar/json_schema.h"
#include "core/grammar/json_schema_numbers.h"
#include "core/util/status.h"

namespace radixserve::grammar::internal {

using Json = nlohmann::ordered_json;

enum class Draft { k4 = 4, k6 = 6, k7 = 7, k2019 = 2019, k2020 = 2020 };

// JSON types as bits. Numbers are split into integral and non-integral values, so that
// "integer" is a subset of "number" and `not: {type: integer}` is a type set.
enum TypeBits : uint8_t {
  kTNull = 1,
  kTBool = 2,
  kTObject = 4,
  kTArray = 8,
  kTString = 16,
  kTInt = 32,
  kTFrac = 64,
  kTNumber = kTInt | kTFrac,
  kTAll = 127,
};

// The bits of one JSON Schema type name; 0 for a name that is not one.
inline uint8_t TypeBitsOf(const std::string& name) {
  if (name == "null") return kTNull;
  if (name == "boolean") return kTBool;
  if (name == "object") return kTObject;
  if (name == "array") return kTArray;
  if (name == "string") return kTString;
  if (name == "integer") return kTInt;
  if (name == "number") return kTNumber;
  if (name == "$rs-fraction") return kTFrac;
  return 0;
}

struct Entry {
  const Json* node;
  std::string path;
  bool neg = false;
};
// `order`: where the atom comes from in document order (its keyword's position, nested under the
// group whose branch brought it), so that merged properties keep the order they are written in.
struct Bag {
  const Json* node;
  std::string path;
  std::vector<uint32_t> order;
};
struct Group {
  const Json* key;  // identity for memoization
  std::string path;
  std::vector<std::vector<Entry>> alts;
  std::vector<uint32_t> order;
};
struct Atoms {
  std::vector<Bag> bags;
  std::vector<Group> groups;
  // Negations no grammar expresses, kept for checking listed values (enum / const) against;
  // compiling without such values fails with opaque_error.
  std::vector<Entry> opaque;
  Status opaque_error;
  bool unsat = false;
  std::string unsat_reason;  // "pointer: why", for the root's error
  std::vector<uint32_t> base;  // order prefix of what Expand adds
  uint32_t next_seq = 0;
};

// The merged constraints of one place, per type (json_schema_types.cc).
struct StringIr {
  int64_t min_len = 0, max_len = -1;
  std::string len_path;
  std::vector<std::pair<std::string, std::string>> patterns;      // (regex, path)
  std::vector<std::pair<std::string, std::string>> formats;       // enforced formats
  std::vector<std::pair<std::string, std::string>> not_patterns;  // from `not`
  std::vector<std::pair<std::string, std::string>> not_formats;
  std::vector<std::u32string> excluded;
};
struct ObjBag {
  const Json* properties = nullptr;
  const Json* pattern_properties = nullptr;
  const Json* additional = nullptr;   // null: absent (true)
  const Json* unevaluated = nullptr;  // false only (true is dropped, schemas refused)
  std::string path;
};
struct ObjectIr {
  std::vector<ObjBag> bags;
  std::vector<std::pair<std::string, std::string>> required;  // (name, path)
  std::vector<Entry> property_names;
  int64_t min_props = 0, max_props = -1;
  std::string props_path;
  std::vector<std::pair<std::string, std::vector<std::string>>> dep_required;
};
struct ArrBag {
  std::vector<Entry> prefix;
  std::optional<Entry> rest;  // absent: any item
  std::string path;
};
struct ArrayIr {
  std::vector<ArrBag> bags;
  std::vector<Entry> contains;  // some item must satisfy each
  int64_t min_items = 0, max_items = -1;
  std::string items_path;
};
struct MergedIr {
  uint8_t types = kTAll;
  std::string type_path;
  StringIr str;
  NumberSpec num;
  std::string num_path;
  std::vector<std::pair<Decimal, std::string>> multiple_of;
  ObjectIr obj;
  ArrayIr arr;
  std::vector<const Json*> excluded;  // values from `not: {enum}`
  std::string excluded_path;
};

class SchemaCompiler {
 public:
  SchemaCompiler(const Json& root, const JsonSchemaOptions& options, GrammarBuilder* b, JsonSchemaReport* report);

  // The grammar of the whole document's schema.
  Result<Grammar> CompileRoot();
  // JSON mode.
  Result<Grammar> CompileAnyObject();

  JsonStringEmitter& strings() { return *strings_; }
  NumberEmitter& numbers() { return *numbers_; }
  // Unsatisfiable places, for the root's error: a cause, or a consequence of the last cause
  // noted (a required property without values, no branch left).
  void NoteUnsat(const std::string& reason) {
    last_unsat_ = reason;
    ++unsat_notes_;
  }
  void NoteUnsatBecause(const std::string& reason) {
    std::string cause = last_unsat_.size() > 300 ? last_unsat_.substr(0, 300) + "..." : last_unsat_;
    last_unsat_ = cause.empty() ? reason : reason + " (" + cause + ")";
    ++unsat_notes_;
  }
  size_t unsat_notes() const { return unsat_notes_; }

  // ---- json_schema.cc (and json_schema_expand.cc: Expand, Negate, Probe, Disjoint)
  Status Fail(StatusCode code, const std::string& path, const std::string& what) const;
  static std::string Child(const std::string& path, std::string_view key);
  static std::string Child(const std::string& path, size_t index) { return path + "/" + std::to_string(index); }
  // Whether `keyword` is a keyword of this document's draft (the reference validator ignores
  // the others, and so do we).
  bool Active(std::string_view keyword) const;
  // A keyword's value in `node` when the keyword is active, else nullptr.
  const Json* Get(const Json& node, std::string_view keyword) const;
  // The schema a `$ref` names.
  Result<Entry> Resolve(const std::string& ref, const Json* from, const std::string& path);
  // A reference to (node, path) usable inside a synthesized schema: {"$rs-loc": n}.
  Json LocRef(const Json* node, const std::string& path);
  Json LocRef(const Entry& e) { return LocRef(e.node, e.path); }
  Entry LocAt(const Json& ref_node) const;
  // Interns a synthesized schema (equal schemas share one node, which keeps memo keys finite).
  const Json* Synth(Json j);
  // The internal keywords ($rs-loc, $rs-exclude, ...) only mean something in synthesized
  // schemas; a schema object of the document that uses one is refused.
  Status CheckReserved(const Json& node, const std::string& path) const;
  Status Expand(const Entry& e, Atoms* out, int depth);
  Status Negate(const Json& node, const std::string& path, Atoms* out, int depth);
  // What a oneOf branch allows, as far as a quick look tells, to see whether branches are
  // disjoint (then anyOf is exact): types, listed values, properties pinned to listed values.
  struct BranchInfo {
    uint8_t types = kTAll;
    std::optional<std::vector<const Json*>> values;
    std::map<std::string, std::vector<const Json*>> prop_values;
    std::set<std::string> required;
  };
  BranchInfo Probe(const Entry& alt, int depth);
  static bool Disjoint(const BranchInfo& a, const BranchInfo& b);
  // Makes the oneOf group `g` exact (branch i and not the others) when that stays small.
  bool ExclusiveOneOf(const Json& list, const std::string& lpath, int depth, Group* g);
  // Whether `not` of a schema is a few plain keywords (types, values, bounds, counts, required,
  // properties of such), all the way down: what ExclusiveOneOf relies on.
  bool CheapNegation(const Json& s, int depth);
  Result<std::optional<Symbol>> CompileEntries(const std::vector<Entry>& entries);
  Result<std::optional<Symbol>> CompileAtoms(const Atoms& atoms, const std::string& name_path);
  void NotEnforced(const std::string& path, const std::string& what);
  GrammarBuilder& b() { return *b_; }
  const JsonSchemaOptions& options() const { return options_; }
  void Ws(Sequence* seq);  // appends the whitespace symbol (nothing when compact)

  // ---- json_schema_types.cc
  Result<std::vector<Sequence>> CompileBody(const Atoms& atoms, const std::string& path);
  Status ReadBag(const Bag& bag, MergedIr* ir);
  Result<std::vector<Sequence>> EmitMerged(MergedIr& ir, const std::string& path);
  // The values, each as its own JSON text (enum / const).
  Result<std::vector<Sequence>> EmitValues(const std::vector<const Json*>& values);
  Result<Sequence> EmitValue(const Json& v);
  Symbol AnyValue();
  Symbol AnyNumber();
  static std::string KeyLiteral(const std::string& key);  // `"key"` as compact JSON

  // ---- json_schema_strings.cc
  Result<std::optional<Symbol>> EmitString(const StringIr& s, const std::string& path);
  // The automaton of a string IR's content (lengths, patterns, formats, exclusions). `exact`:
  // patterns exactly as the reference validator reads them (needed where the automaton is also
  // complemented: keys); otherwise a positive pattern's `$` matches only at the end (a subset,
  // never a string the reference refuses, and a smaller product with a length bound).
  Result<CharDfa> StringDfa(const StringIr& s, const std::string& path, bool exact = false);
  // A regex as an automaton (search semantics), cached; `exact` as above.
  Result<const CharDfa*> PatternDfa(const std::string& pattern, const std::string& path, bool exact = true);
  Symbol PlainString();
  Symbol StringChar();
  // `item` repeated min..max times (max < 0: unbounded). Bounds past GrammarLimits::max_repeat
  // are spelled in blocks of 64^j items, so maxLength 65535 costs a few hundred symbols, not
  // 65535 rules.
  Symbol Repeat(const Sequence& item, int64_t min, int64_t max, std::string_view name);

  // ---- json_schema_arrays.cc
  Result<std::optional<Symbol>> EmitArray(const ArrayIr& a, const std::string& path);

  // ---- json_schema_object.cc
  Result<std::optional<Symbol>> EmitObject(const ObjectIr& o, const std::string& path);
  // The string automaton of keys a `propertyNames` conjunction allows.
  Result<CharDfa> KeyNamesDfa(const std::vector<Entry>& names, const std::string& path);

  // ---- json_schema_validate.cc
  Result<bool> Validate(const Json& schema, const std::string& path, const Json& inst, int depth);
  // Only the bag's own keywords (its applicators were expanded into other atoms).
  Result<bool> ValidateLocal(const Json& bag, const std::string& path, const Json& inst, int depth);
  Result<bool> ValidateAtoms(const Atoms& atoms, const Json& inst);
  // Equality as the reference validator sees it (1 == 1.0, true != 1, objects unordered).
  static bool JsonEqual(const Json& a, const Json& b);
  static uint8_t TypeOf(const Json& v);

 private:
  void IndexIds(const Json& node, const std::string& path, int depth);
  Status NegateKeywords(const Json& node, const std::string& path, std::vector<Json>* disjuncts);

  const Json& root_;
  JsonSchemaOptions options_;
  GrammarBuilder* b_;
  JsonSchemaReport* report_;
  Draft draft_ = Draft::k2020;

  std::map<std::string, Entry> ids_;      // $id / id values (and their anchors)
  std::map<std::string, Entry> anchors_;  // "#name" anchors
  std::vector<Entry> locs_;               // targets of {"$rs-loc": n}
  std::map<std::pair<const Json*, std::string>, size_t> loc_index_;
  std::deque<Json> arena_;                // synthesized schemas (stable addresses)
  std::unordered_map<std::string, const Json*> synth_index_;
  std::set<const Json*> synth_nodes_;     // every node inside a synthesized schema

  struct Memo {
    std::optional<Symbol> symbol;  // nullopt: unsatisfiable
    std::string unsat_reason;
    bool in_progress = false;
    bool referenced_in_progress = false;
  };
  std::map<std::string, Memo> memo_;
  size_t compiles_ = 0;
  // Why the last conjunction found unsatisfiable is so (for the root's error): "pointer: why",
  // with the cause it follows from in parentheses.
  std::string last_unsat_;
  size_t unsat_notes_ = 0;

  std::optional<Symbol> ws_, any_value_, any_object_, plain_string_, string_char_, any_number_;
  std::map<std::string, std::unique_ptr<CharDfa>> pattern_cache_;
  std::map<std::string, Status> pattern_errors_;
  std::map<std::string, std::optional<Symbol>> string_cache_;
  std::unique_ptr<JsonStringEmitter> strings_;
  std::unique_ptr<NumberEmitter> numbers_;
  std::set<std::string> reported_;
  std::function<bool()> keep_going_;  // the builder's deadline, for the automata

};

}  // namespace radixserve::grammar::internal
