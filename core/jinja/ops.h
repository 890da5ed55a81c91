// Python's operators, len() and iter() on Jinja values, with Python's results and TypeError
// wording. Internal to core/jinja; pure functions, safe from any thread.
//
// Ints are 64-bit: a result Python would hold as a big integer fails with OverflowError.
// Using an Undefined as an operand (other than with ==, != and `in`) fails with UndefinedError.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "core/jinja/value.h"
#include "core/util/status.h"

namespace radixserve::jinja {

// + - * / // % ** ; max_bytes bounds the strings and lists they build (str * n, list + list).
// `%` with a str on the left is printf-style formatting (%s %r %d %i %f %x %X %%, %(key)s).
Result<Value> BinaryOp(std::string_view op, const Value& a, const Value& b, size_t max_bytes);
// == != < <= > >= in notin.
Result<bool> CompareOp(std::string_view op, const Value& a, const Value& b);
// Python a < b, for sorting and min/max.
Result<bool> PyLess(const Value& a, const Value& b);
// `item in container`.
Result<bool> Contains(const Value& container, const Value& item);
// len(v): code points of a str, items of a list or dict; 0 for Undefined.
Result<int64_t> PyLen(const Value& v);
// list(v): a list's items, a dict's keys, a str's code points; nothing for Undefined.
Result<std::vector<Value>> PyIter(const Value& v);
// Python hash() failing: lists and dicts are unhashable (dict keys, set members).
Status CheckHashable(const Value& v);

}  // namespace radixserve::jinja
