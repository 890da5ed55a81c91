// JSON Schema `format` values as string automata, for the JSON Schema compiler.
//
// The formats the reference validator (Python jsonschema with its 2020-12 format checker, see
// shared/jsonschema/README.md) checks are enforced, each as a regular language written to accept
// exactly what that checker accepts where a regular language can:
//   date-time, date, time (RFC 3339 via rfc3339-validator: calendar days and leap years exact,
//   `T` and `Z` in either case, an offset required for `time`), email and idn-email (a `@`
//   somewhere: the checker asks no more), ipv4 (four decimal octets 0-255, no leading zeros),
//   ipv6 (Python's ipaddress: `::` compression, an embedded IPv4 tail, no zone id), uuid
//   (8-4-4-4-12 hex digits), hostname (RFC 1123 labels of 1 to 63 letters, digits and inner
//   hyphens, dot separated; the 253-byte total is not checked), duration (ISO 8601 PnYnMnWnDTnHnMnS
//   with at least one part), uri (a scheme, `:`, then no whitespace), uri-reference (no
//   whitespace), json-pointer and relative-json-pointer (RFC 6901).
// Known formats that no regular language captures (`regex`, `idn-hostname`, `iri`,
// `iri-reference`, `uri-template`) are not enforced: any string passes, and the compiler reports
// them as not enforced. Any other format value is an annotation, as JSON Schema 2020-12 and the
// reference validator treat it: any string passes.
//
// Thread-safety: FormatDfa builds each automaton once per process, under a lock; the returned
// automaton is immutable and lives for the process.
#pragma once

#include <string_view>

#include "core/grammar/char_dfa.h"

namespace radixserve::grammar::internal {

enum class FormatKind { kEnforced, kNotEnforced, kAnnotation };

FormatKind ClassifyFormat(std::string_view format);
// The automaton of an enforced format (whole-string match); nullptr for the others.
const CharDfa* FormatDfa(std::string_view format);
// The regex (ECMAScript, whole-string) FormatDfa compiles; empty for the others. For tests.
std::string FormatRegex(std::string_view format);

}  // namespace radixserve::grammar::internal
