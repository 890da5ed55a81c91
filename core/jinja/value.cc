#include "core/jinja/value.h"

#include <algorithm>
#include <cassert>

#include "core/jinja/py_string.h"

namespace radixserve::jinja {

Value Value::Undefined(std::string message) {
  Value v;
  v.ptr_ = std::make_shared<std::string>(std::move(message));
  return v;
}

Value Value::None() {
  Value v;
  v.kind_ = Kind::kNone;
  return v;
}

Value Value::Bool(bool b) {
  Value v;
  v.kind_ = Kind::kBool;
  v.b_ = b;
  return v;
}

Value Value::Int(int64_t i) {
  Value v;
  v.kind_ = Kind::kInt;
  v.i_ = i;
  return v;
}

Value Value::Float(double f) {
  Value v;
  v.kind_ = Kind::kFloat;
  v.f_ = f;
  return v;
}

Value Value::Str(std::string s) {
  Value v;
  v.kind_ = Kind::kString;
  v.ptr_ = std::make_shared<std::string>(std::move(s));
  return v;
}

Value Value::Markup(std::string s) {
  Value v = Str(std::move(s));
  v.markup_ = true;
  return v;
}

namespace {

Value MakeList(std::vector<Value> items, ListKind kind, Status error = Status::Ok()) {
  auto list = std::make_shared<ListObj>();
  for (const Value& item : items) list->depth = std::max(list->depth, item.Depth() + 1);
  list->items = std::move(items);
  list->kind = kind;
  list->error = std::move(error);
  return Value::FromList(std::move(list));
}

}  // namespace

Value Value::List(std::vector<Value> items) { return MakeList(std::move(items), ListKind::kList); }
Value Value::Tuple(std::vector<Value> items) { return MakeList(std::move(items), ListKind::kTuple); }
Value Value::Generator(std::vector<Value> items, Status error) {
  return MakeList(std::move(items), ListKind::kGenerator, std::move(error));
}

Value Value::Range(int64_t start, int64_t stop, int64_t step, std::vector<Value> items) {
  auto list = std::make_shared<ListObj>();
  list->items = std::move(items);
  list->kind = ListKind::kRange;
  list->range[0] = start;
  list->range[1] = stop;
  list->range[2] = step;
  return FromList(std::move(list));
}

bool Value::is_sequence() const { return kind_ == Kind::kList && list().kind <= ListKind::kRange; }

Value Value::FromList(std::shared_ptr<const ListObj> list) {
  Value v;
  v.kind_ = Kind::kList;
  v.ptr_ = std::const_pointer_cast<ListObj>(std::move(list));
  return v;
}

Value Value::FromDict(Dict dict) {
  Value v;
  v.kind_ = Kind::kDict;
  v.ptr_ = std::make_shared<Dict>(std::move(dict));
  return v;
}

Value Value::FromNamespace(std::shared_ptr<Namespace> ns) {
  Value v;
  v.kind_ = Kind::kNamespace;
  v.ptr_ = std::move(ns);
  return v;
}

Value Value::FromCallable(Callable fn) {
  Value v;
  v.kind_ = Kind::kCallable;
  v.ptr_ = std::make_shared<Callable>(std::move(fn));
  return v;
}

double Value::as_double() const {
  if (kind_ == Kind::kFloat) return f_;
  return static_cast<double>(as_int());
}

const std::string& Value::str() const {
  static const std::string kEmpty;
  return ptr_ ? *static_cast<const std::string*>(ptr_.get()) : kEmpty;
}

const ListObj& Value::list() const { return *static_cast<const ListObj*>(ptr_.get()); }
const std::vector<Value>& Value::items() const { return list().items; }
const Dict& Value::dict() const { return *static_cast<const Dict*>(ptr_.get()); }
Namespace& Value::ns() const { return *static_cast<Namespace*>(ptr_.get()); }
const Callable& Value::fn() const { return *static_cast<const Callable*>(ptr_.get()); }

uint32_t Value::Depth() const {
  if (kind_ == Kind::kList) return list().depth;
  if (kind_ == Kind::kDict) return dict().depth();
  return 0;
}

bool Value::Truthy() const {
  switch (kind_) {
    case Kind::kUndefined:
    case Kind::kNone:
      return false;
    case Kind::kBool:
      return b_;
    case Kind::kInt:
      return i_ != 0;
    case Kind::kFloat:
      return f_ != 0;
    case Kind::kString:
      return !str().empty();
    case Kind::kList:
      return list().kind == ListKind::kGenerator || !items().empty();
    case Kind::kDict:
      return dict().size() != 0;
    case Kind::kNamespace:
    case Kind::kCallable:
      return true;
  }
  return false;
}

std::string Value::TypeName() const {
  switch (kind_) {
    case Kind::kUndefined:
      return "Undefined";
    case Kind::kNone:
      return "NoneType";
    case Kind::kBool:
      return "bool";
    case Kind::kInt:
      return "int";
    case Kind::kFloat:
      return "float";
    case Kind::kString:
      return markup_ ? "Markup" : "str";
    case Kind::kList:
      switch (list().kind) {
        case ListKind::kTuple:
          return "tuple";
        case ListKind::kDictItems:
          return "dict_items";
        case ListKind::kDictKeys:
          return "dict_keys";
        case ListKind::kDictValues:
          return "dict_values";
        case ListKind::kGenerator:
          return "generator";
        case ListKind::kRange:
          return "range";
        case ListKind::kList:
          break;
      }
      return "list";
    case Kind::kDict:
      return "dict";
    case Kind::kNamespace:
      return ns().is_loop ? "LoopContext" : "Namespace";
    case Kind::kCallable:
      return fn().kind == Callable::Kind::kMacro    ? "Macro"
             : fn().kind == Callable::Kind::kMethod ? "builtin_function_or_method"
                                                    : "function";
  }
  return "object";
}

const Value* Dict::Find(std::string_view key) const {
  auto it = string_keys_.find(std::string(key));
  return it == string_keys_.end() ? nullptr : &entries_[it->second].second;
}

const Value* Dict::Find(const Value& key) const {
  if (key.is_string()) return Find(std::string_view(key.str()));
  for (const Entry& e : entries_) {
    if (!e.first.is_string() && PyEquals(e.first, key)) return &e.second;
  }
  return nullptr;
}

void Dict::Set(Value key, Value value) {
  depth_ = std::max({depth_, key.Depth() + 1, value.Depth() + 1});
  if (key.is_string()) {
    auto [it, inserted] = string_keys_.emplace(key.str(), entries_.size());
    if (!inserted) {
      entries_[it->second].second = std::move(value);
      return;
    }
  } else {
    for (Entry& e : entries_) {
      if (!e.first.is_string() && PyEquals(e.first, key)) {
        e.second = std::move(value);
        return;
      }
    }
  }
  entries_.emplace_back(std::move(key), std::move(value));
}

void Dict::clear() {
  entries_.clear();
  string_keys_.clear();
}

Namespace::~Namespace() {
  // The first namespace freed on this thread drains a queue; namespaces freed while it does
  // (the ones this one held) only add their contents to the queue.
  thread_local std::vector<Dict>* pending = nullptr;
  if (pending != nullptr) {
    pending->push_back(std::move(attrs));
    return;
  }
  std::vector<Dict> queue;
  queue.push_back(std::move(attrs));
  pending = &queue;
  while (!queue.empty()) {
    Dict next = std::move(queue.back());
    queue.pop_back();
  }  // `next` is freed at the end of each turn, possibly queueing more
  pending = nullptr;
}

bool PyEquals(const Value& a, const Value& b) {
  using K = Value::Kind;
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.as_double() == b.as_double();
    return a.as_int() == b.as_int();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case K::kUndefined:
    case K::kNone:
      return true;
    case K::kString:
      return a.str() == b.str();
    case K::kList: {
      if (a.list().kind == ListKind::kGenerator || b.list().kind == ListKind::kGenerator) return a.ptr() == b.ptr();
      if (a.list().kind != b.list().kind || a.items().size() != b.items().size()) return false;
      for (size_t i = 0; i < a.items().size(); ++i) {
        if (!PyEquals(a.items()[i], b.items()[i])) return false;
      }
      return true;
    }
    case K::kDict: {
      if (a.dict().size() != b.dict().size()) return false;
      for (const auto& [key, value] : a.dict().entries()) {
        const Value* other = b.dict().Find(key);
        if (other == nullptr || !PyEquals(value, *other)) return false;
      }
      return true;
    }
    default:
      return a.ptr() == b.ptr();  // namespaces and callables compare by identity
  }
}

namespace {

// Namespaces being printed: one met again prints as "<Namespace {...}>" (Python's guard against
// recursive reprs); chains deeper than this print the same way.
constexpr size_t kMaxReprNesting = 64;
struct Active {
  std::vector<const Namespace*> namespaces;
  size_t max_bytes;
};

void AppendRepr(std::string* out, const Value& v, Active* active);

void AppendSeq(std::string* out, const std::vector<Value>& items, Active* active) {
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) *out += ", ";
    AppendRepr(out, items[i], active);
  }
}

void AppendDict(std::string* out, const Dict& dict, Active* active) {
  *out += "{";
  bool first = true;
  for (const auto& [key, value] : dict.entries()) {
    if (!first) *out += ", ";
    first = false;
    AppendRepr(out, key, active);
    *out += ": ";
    AppendRepr(out, value, active);
  }
  *out += "}";
}

void AppendRepr(std::string* out, const Value& v, Active* active) {
  using K = Value::Kind;
  if (out->size() > active->max_bytes) return;  // too large already: the caller fails
  switch (v.kind()) {
    case K::kUndefined:
      *out += "Undefined";
      return;
    case K::kNone:
      *out += "None";
      return;
    case K::kBool:
      *out += v.as_bool() ? "True" : "False";
      return;
    case K::kInt:
      *out += std::to_string(v.as_int());
      return;
    case K::kFloat:
      *out += PyFloatRepr(v.as_double());
      return;
    case K::kString:
      if (v.is_markup()) {
        *out += "Markup(" + PyReprString(v.str()) + ")";
      } else {
        *out += PyReprString(v.str());
      }
      return;
    case K::kList: {
      const ListKind kind = v.list().kind;
      if (kind == ListKind::kGenerator) {
        *out += "<generator object>";
        return;
      }
      if (kind == ListKind::kRange) {
        const int64_t* r = v.list().range;
        *out += "range(" + std::to_string(r[0]) + ", " + std::to_string(r[1]) +
                (r[2] == 1 ? std::string(")") : ", " + std::to_string(r[2]) + ")");
        return;
      }
      static const char* const kOpen[] = {"[", "(", "", "dict_items([", "dict_keys([", "dict_values(["};
      static const char* const kClose[] = {"]", ")", "", "])", "])", "])"};
      *out += kOpen[static_cast<int>(kind)];
      AppendSeq(out, v.items(), active);
      if (kind == ListKind::kTuple && v.items().size() == 1) *out += ",";
      *out += kClose[static_cast<int>(kind)];
      return;
    }
    case K::kDict:
      AppendDict(out, v.dict(), active);
      return;
    case K::kNamespace: {
      const Namespace& ns = v.ns();
      if (ns.is_loop) {
        const Value* index = ns.attrs.Find("index");
        const Value* length = ns.attrs.Find("length");
        *out += "<LoopContext " + std::to_string(index ? index->as_int() : 0) + "/" +
                std::to_string(length ? length->as_int() : 0) + ">";
        return;
      }
      auto& seen = active->namespaces;
      if (seen.size() >= kMaxReprNesting || std::find(seen.begin(), seen.end(), &ns) != seen.end()) {
        *out += "<Namespace {...}>";
        return;
      }
      seen.push_back(&ns);
      *out += "<Namespace ";
      AppendDict(out, ns.attrs, active);
      *out += ">";
      seen.pop_back();
      return;
    }
    case K::kCallable: {
      const Callable& fn = v.fn();
      if (fn.kind == Callable::Kind::kMacro) {
        *out += "<Macro " + PyReprString(fn.name) + ">";
      } else if (fn.kind == Callable::Kind::kMethod) {
        *out += "<built-in method " + fn.name + " of " + fn.self.TypeName() + " object>";
      } else {
        *out += "<function " + fn.name + ">";
      }
      return;
    }
  }
}

}  // namespace

std::string PyRepr(const Value& v, size_t max_bytes) {
  std::string out;
  Active active{{}, max_bytes};
  AppendRepr(&out, v, &active);
  return out;
}

std::string PyStr(const Value& v, size_t max_bytes) {
  if (v.is_string()) return v.str();
  if (v.is_undefined()) return std::string();
  return PyRepr(v, max_bytes);
}

}  // namespace radixserve::jinja
