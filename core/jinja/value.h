// Value: one Jinja value, modelled on the Python objects jinja2 templates see.
//
// Kinds: Undefined (a missing variable, key or attribute; carries the message an error about it
// would give), None, bool, int (int64), float (double), str (UTF-8; a "markup" bit marks the
// result of |safe), list (with the other list-like kinds: tuple, range, dict views, generators;
// see ListKind), dict (insertion-ordered), namespace (namespace() objects and a loop's `loop`),
// and callable (global functions, bound methods, macros).
//
// Lists, dicts and strings are immutable and shared: copying a Value is cheap. A namespace is the
// one mutable kind (`{% set ns.x = ... %}`), shared by reference like a Python object. Lists and
// dicts record how deeply they nest (Depth()), so that the renderer can refuse values nested so
// deeply that walking or freeing them would exhaust the stack. Values belong to one render; a
// Value is not safe to use from two threads at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/util/status.h"

namespace radixserve::jinja {

class Dict;
struct ListObj;
struct Namespace;
struct Callable;

class Value {
 public:
  enum class Kind : uint8_t { kUndefined, kNone, kBool, kInt, kFloat, kString, kList, kDict, kNamespace, kCallable };

  Value() = default;  // Undefined without a message
  static Value Undefined(std::string message);
  static Value None();
  static Value Bool(bool v);
  static Value Int(int64_t v);
  static Value Float(double v);
  static Value Str(std::string s);
  static Value Markup(std::string s);
  static Value List(std::vector<Value> items);
  static Value Tuple(std::vector<Value> items);
  // A generator yielding items, then failing with `error` if that is not OK.
  static Value Generator(std::vector<Value> items, Status error = Status::Ok());
  static Value Range(int64_t start, int64_t stop, int64_t step, std::vector<Value> items);
  static Value FromList(std::shared_ptr<const ListObj> list);
  static Value FromDict(Dict dict);
  static Value FromNamespace(std::shared_ptr<Namespace> ns);
  static Value FromCallable(Callable fn);

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::kUndefined; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool is_bool() const { return kind_ == Kind::kBool; }
  bool is_int() const { return kind_ == Kind::kInt; }
  bool is_float() const { return kind_ == Kind::kFloat; }
  bool is_number() const { return kind_ == Kind::kBool || kind_ == Kind::kInt || kind_ == Kind::kFloat; }
  bool is_string() const { return kind_ == Kind::kString; }
  bool is_list() const { return kind_ == Kind::kList; }
  // A list, tuple or range (not a dict view or generator): indexable, sliceable.
  bool is_sequence() const;
  bool is_dict() const { return kind_ == Kind::kDict; }
  bool is_namespace() const { return kind_ == Kind::kNamespace; }
  bool is_callable() const { return kind_ == Kind::kCallable; }
  bool is_markup() const { return kind_ == Kind::kString && markup_; }

  bool as_bool() const { return b_; }
  int64_t as_int() const { return kind_ == Kind::kBool ? (b_ ? 1 : 0) : i_; }
  double as_double() const;        // bool, int or float as a double
  const std::string& str() const;  // kString, or the message of an Undefined
  const ListObj& list() const;
  const std::vector<Value>& items() const;
  const Dict& dict() const;
  Namespace& ns() const;
  const Callable& fn() const;
  const std::shared_ptr<void>& ptr() const { return ptr_; }  // identity of lists, dicts, namespaces
  // Nesting depth of lists and dicts (1 for a flat one), 0 for everything else.
  uint32_t Depth() const;

  // Python truth value (Undefined is false).
  bool Truthy() const;
  // Python's type name: 'NoneType', 'bool', 'int', 'float', 'str', 'list', 'tuple', 'dict', ...
  std::string TypeName() const;

 private:
  Kind kind_ = Kind::kUndefined;
  bool markup_ = false;
  bool b_ = false;
  int64_t i_ = 0;
  double f_ = 0;
  std::shared_ptr<void> ptr_;  // std::string, ListObj, Dict, Namespace or Callable by kind
};

// The list-like kinds. Lists and tuples index, slice and concatenate; a range (from range())
// indexes and slices but does not concatenate; the dict views (d.items()...) only iterate and have
// a length. A generator is what jinja2's map, select, items, unique... filters return: always
// true, without len() or indexing, and used up by iterating it.
enum class ListKind : uint8_t { kList, kTuple, kRange, kDictItems, kDictKeys, kDictValues, kGenerator };

struct ListObj {
  std::vector<Value> items;
  ListKind kind = ListKind::kList;
  uint32_t depth = 1;
  int64_t range[3] = {0, 0, 1};  // kRange: start, stop, step (for its repr)
  mutable size_t consumed = 0;   // kGenerator: items already taken by an iteration
  Status error;                  // kGenerator: raised after its items (jinja2 generators fail lazily)
};

// An insertion-ordered mapping; keys compare like Python's (1 == 1.0 == True, 'a' != 1).
class Dict {
 public:
  using Entry = std::pair<Value, Value>;
  const Value* Find(const Value& key) const;
  const Value* Find(std::string_view key) const;
  // Inserts, or replaces the value in place (keeping the key's position).
  void Set(Value key, Value value);
  const std::vector<Entry>& entries() const { return entries_; }
  size_t size() const { return entries_.size(); }
  void clear();
  uint32_t depth() const { return depth_; }

 private:
  std::vector<Entry> entries_;
  uint32_t depth_ = 1;
  std::unordered_map<std::string, size_t> string_keys_;
};

// namespace() objects, and the `loop` variable of a for loop (is_loop: read-only, repr
// <LoopContext i/n>).
struct Namespace {
  Namespace() = default;
  Namespace(const Namespace&) = delete;
  Namespace& operator=(const Namespace&) = delete;
  // Frees what the namespace refers to without recursing down chains of namespaces (a template
  // can link any number of them), so that freeing a long chain cannot exhaust the stack.
  ~Namespace();

  Dict attrs;
  bool is_loop = false;
};

struct Stmt;
struct Scope;

struct Callable {
  enum class Kind : uint8_t { kGlobal, kMethod, kMacro };
  Kind kind = Kind::kGlobal;
  std::string name;              // function, method or macro name
  Value self;                    // kMethod: the object the method is bound to
  const Stmt* macro = nullptr;   // kMacro: its definition (owned by the Template)
  std::weak_ptr<Scope> closure;  // kMacro: the scope it was defined in (names it reads)
};

// Python ==, deep for lists and dicts; Undefined equals only Undefined.
bool PyEquals(const Value& a, const Value& b);
// Python str(): the text {{ x }} prints (Undefined prints nothing). Namespaces nested more than
// 64 deep print as "..." (Python would raise RecursionError). Printing stops soon after the text
// passes max_bytes (lists can share a big value many times over): a result longer than max_bytes
// means "too large", and the caller must not use it as the value's text.
std::string PyStr(const Value& v, size_t max_bytes = SIZE_MAX);
// Python repr(), bounded the same way.
std::string PyRepr(const Value& v, size_t max_bytes = SIZE_MAX);

}  // namespace radixserve::jinja
