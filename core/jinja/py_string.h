// Python str semantics on UTF-8 text: what the Jinja engine needs to behave like CPython's str.
//
// Python strings are sequences of code points, so lengths, indexes and slices count code points,
// and strip()/split() without arguments use Python's Unicode whitespace. Case mapping covers
// ASCII, Latin-1, Latin Extended-A, Greek and Cyrillic (the scripts chat templates meet); other
// characters keep their case. Invalid UTF-8 bytes count as one code point each. Pure functions,
// safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace radixserve::jinja {

// Decodes the code point at s[*pos] and advances *pos past it (one byte for invalid UTF-8).
char32_t NextCodepoint(std::string_view s, size_t* pos);
void AppendUtf8(std::string* out, char32_t cp);
// Splits into code points (each as its UTF-8 bytes).
std::vector<std::string_view> Codepoints(std::string_view s);
size_t CodepointCount(std::string_view s);

// Python str.isspace() for one code point (the set str.split() and str.strip() use).
bool IsPyWhitespace(char32_t cp);

// str.strip/lstrip/rstrip; chars absent = whitespace, otherwise the code points in *chars.
std::string PyStrip(std::string_view s, const std::optional<std::string>& chars, bool left, bool right);
// str.split(sep, maxsplit) (sep non-empty) and str.split(None, maxsplit); maxsplit < 0 = no limit.
std::vector<std::string> PySplit(std::string_view s, std::string_view sep, int64_t maxsplit);
std::vector<std::string> PySplitWhitespace(std::string_view s, int64_t maxsplit);
// str.rsplit(sep, maxsplit) with a non-empty sep.
std::vector<std::string> PyRSplit(std::string_view s, std::string_view sep, int64_t maxsplit);
// str.splitlines(keepends=False).
std::vector<std::string> PySplitLines(std::string_view s);
// str.replace(old, new, count); count < 0 = all. An empty old inserts between code points.
std::string PyReplace(std::string_view s, std::string_view old, std::string_view repl, int64_t count);

std::string PyLower(std::string_view s);
std::string PyUpper(std::string_view s);
std::string PyTitle(std::string_view s);
std::string PyCapitalize(std::string_view s);
// str.islower()/isupper(): has a cased character and none of the other case.
bool PyIsLower(std::string_view s);
bool PyIsUpper(std::string_view s);

// repr() of a str: single quotes unless the text has ' and no ", Python's escapes.
std::string PyReprString(std::string_view s);
// repr() of a float: the shortest round-trip digits, "1e+16", "0.5", "1.0", "inf", "nan".
std::string PyFloatRepr(double v);

}  // namespace radixserve::jinja
