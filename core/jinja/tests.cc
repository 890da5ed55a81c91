// Jinja tests (`x is defined`, `x is divisibleby 3`...) and their table.
#include "core/jinja/builtins.h"
#include "core/jinja/errors.h"
#include "core/jinja/ops.h"
#include "core/jinja/py_string.h"
#include "core/jinja/renderer.h"

namespace radixserve::jinja {

namespace {

#define RS_JINJA_TEST(fn_name, test_name, expr)                           \
  Result<bool> fn_name(Renderer&, const Value& v, const CallArgs& args) { \
    RS_RETURN_IF_ERROR(ExpectNoArgs(test_name, args));                    \
    return (expr);                                                        \
  }

RS_JINJA_TEST(Defined, "defined", !v.is_undefined())
RS_JINJA_TEST(Undefined, "undefined", v.is_undefined())
RS_JINJA_TEST(None, "none", v.is_none())
RS_JINJA_TEST(Boolean, "boolean", v.is_bool())
RS_JINJA_TEST(False, "false", v.is_bool() && !v.as_bool())
RS_JINJA_TEST(True, "true", v.is_bool() && v.as_bool())
RS_JINJA_TEST(Integer, "integer", v.is_int())
RS_JINJA_TEST(FloatTest, "float", v.is_float())
RS_JINJA_TEST(Number, "number", v.is_number())
RS_JINJA_TEST(String, "string", v.is_string())
RS_JINJA_TEST(Mapping, "mapping", v.is_dict())
// Undefined counts as a sequence and as iterable (it has len() and iterates as empty); dict views
// and generators are iterable but not sequences.
RS_JINJA_TEST(Sequence, "sequence", v.is_string() || v.is_sequence() || v.is_dict() || v.is_undefined())
RS_JINJA_TEST(Iterable, "iterable", v.is_string() || v.is_list() || v.is_dict() || v.is_undefined())
RS_JINJA_TEST(CallableTest, "callable", v.is_callable())
RS_JINJA_TEST(Escaped, "escaped", v.is_markup())

#undef RS_JINJA_TEST

Result<Value> OneArg(std::string_view name, const CallArgs& args) {
  RS_ASSIGN_OR_RETURN(BoundArgs a, BindArgs(name, args, {"other"}, 1));
  return a[0];
}

Result<bool> IsLower(Renderer& r, const Value& v, const CallArgs& args) {
  RS_RETURN_IF_ERROR(ExpectNoArgs("lower", args));
  RS_ASSIGN_OR_RETURN(std::string s, r.Str(v));
  return PyIsLower(s);
}

Result<bool> IsUpper(Renderer& r, const Value& v, const CallArgs& args) {
  RS_RETURN_IF_ERROR(ExpectNoArgs("upper", args));
  RS_ASSIGN_OR_RETURN(std::string s, r.Str(v));
  return PyIsUpper(s);
}

Result<bool> Remainder(Renderer& r, const Value& v, const Value& divisor, int64_t want) {
  RS_ASSIGN_OR_RETURN(Value rem, BinaryOp("%", v, divisor, r.options().limits.max_output_bytes));
  return PyEquals(rem, Value::Int(want));
}

Result<bool> Odd(Renderer& r, const Value& v, const CallArgs& args) {
  RS_RETURN_IF_ERROR(ExpectNoArgs("odd", args));
  return Remainder(r, v, Value::Int(2), 1);
}

Result<bool> Even(Renderer& r, const Value& v, const CallArgs& args) {
  RS_RETURN_IF_ERROR(ExpectNoArgs("even", args));
  return Remainder(r, v, Value::Int(2), 0);
}

Result<bool> DivisibleBy(Renderer& r, const Value& v, const CallArgs& args) {
  RS_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("divisibleby", args, {"num"}, 1));
  return Remainder(r, v, a[0], 0);
}

Result<bool> In(Renderer&, const Value& v, const CallArgs& args) {
  RS_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("in", args, {"seq"}, 1));
  return Contains(a[0], v);
}

// `is sameas`: Python's identity, which for None, booleans and small values is equality.
Result<bool> SameAs(Renderer&, const Value& v, const CallArgs& args) {
  RS_ASSIGN_OR_RETURN(Value other, OneArg("sameas", args));
  if (v.kind() != other.kind()) return false;
  if (v.is_none() || v.is_bool() || v.is_int()) return PyEquals(v, other);
  return v.ptr() != nullptr && v.ptr() == other.ptr();
}

Result<bool> FilterExists(Renderer&, const Value& v, const CallArgs& args) {
  RS_RETURN_IF_ERROR(ExpectNoArgs("filter", args));
  return v.is_string() && FindFilter(v.str()) != nullptr;
}

Result<bool> TestExists(Renderer&, const Value& v, const CallArgs& args) {
  RS_RETURN_IF_ERROR(ExpectNoArgs("test", args));
  return v.is_string() && FindTest(v.str()) != nullptr;
}

template <const char* kOp>
Result<bool> Compare(Renderer&, const Value& v, const CallArgs& args) {
  RS_ASSIGN_OR_RETURN(Value other, OneArg(kOp, args));
  return CompareOp(kOp, v, other);
}

constexpr char kEq[] = "==";
constexpr char kNe[] = "!=";
constexpr char kLt[] = "<";
constexpr char kLe[] = "<=";
constexpr char kGt[] = ">";
constexpr char kGe[] = ">=";

struct TestEntry {
  std::string_view name;
  TestFn fn;
};

constexpr TestEntry kTests[] = {
    {"boolean", Boolean},
    {"callable", CallableTest},
    {"defined", Defined},
    {"divisibleby", DivisibleBy},
    {"escaped", Escaped},
    {"even", Even},
    {"false", False},
    {"filter", FilterExists},
    {"float", FloatTest},
    {"in", In},
    {"integer", Integer},
    {"iterable", Iterable},
    {"lower", IsLower},
    {"mapping", Mapping},
    {"none", None},
    {"number", Number},
    {"odd", Odd},
    {"sameas", SameAs},
    {"sequence", Sequence},
    {"string", String},
    {"test", TestExists},
    {"true", True},
    {"undefined", Undefined},
    {"upper", IsUpper},
    {"==", Compare<kEq>},
    {"eq", Compare<kEq>},
    {"equalto", Compare<kEq>},
    {"!=", Compare<kNe>},
    {"ne", Compare<kNe>},
    {"<", Compare<kLt>},
    {"lt", Compare<kLt>},
    {"lessthan", Compare<kLt>},
    {"<=", Compare<kLe>},
    {"le", Compare<kLe>},
    {">", Compare<kGt>},
    {"gt", Compare<kGt>},
    {"greaterthan", Compare<kGt>},
    {">=", Compare<kGe>},
    {"ge", Compare<kGe>},
};

}  // namespace

TestFn FindTest(std::string_view name) {
  for (const TestEntry& e : kTests) {
    if (e.name == name) return e.fn;
  }
  return nullptr;
}

}  // namespace radixserve::jinja
