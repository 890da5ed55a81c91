// Regex front-end: ECMAScript regular expressions (the dialect of JSON Schema's `pattern` and of
// vLLM's `guided_regex`) compiled into the internal grammar (grammar.h).
//
// Supported: literals (UTF-8), `.`, classes `[...]` / `[^...]` with ranges and escapes, the class
// escapes \d \D \w \W \s \S, groups `( )`, `(?: )`, `(?<name> )`, alternation `|`, the quantifiers
// `* + ? {n} {n,} {n,m}` and their lazy forms (`*?` etc. describe the same language), the escapes
// \n \t \r \f \v \0 \cX \xHH \uHHHH (surrogate pairs joined) \u{H...} and identity escapes of
// punctuation (`\/`, `\.`, ...), and the anchors `^` / `$` where nothing can precede / follow
// them: at the start / end of the pattern, of a top-level alternative, or of a group standing
// there (`(^a|b)c`, `^$|(^x+$)`). Refused with Status::Unsupported naming the construct and its
// byte offset: word boundaries \b \B, lookaround (?= (?! (?<= (?<!, backreferences \1 \k<name>,
// Unicode property escapes \p{..} \P{..}, inline modifiers (?i) (?-i), anchors anywhere else
// (`a^b`, `(^a)*`).
// Malformed patterns get Status::InvalidArgument. ECMAScript's Annex B leniencies that real
// patterns rely on are kept: a `{` that does not start a quantifier, a lone `]` or `}` are
// literals, and `-` next to a class escape in a class (`[\w-.]`) is a literal.
//
// Sets follow ECMAScript without the `i` flag, cut to what Python's `re` (the engine of the
// reference validator) agrees with, so a generated string passes both: \d = [0-9], \w =
// [A-Za-z0-9_], \s = ECMAScript's WhiteSpace and LineTerminator less U+FEFF, \S = neither
// engine's space (so not U+FEFF, U+001C..U+001F, U+0085 either), \D = no Unicode decimal digit
// (Python's \d takes them all), \W = ASCII's non-word characters and the Unicode blocks of
// punctuation, symbols and emoji (Python's \w takes every letter, so \W refuses é: a known gap,
// on the safe side). In a negated class an escape excludes what either engine puts in it
// ([^\d] refuses Arabic-Indic digits). `.` = any code point but \n \r U+2028 U+2029.
//
// Contexts:
//   kRaw:        the grammar matches the text itself, as UTF-8.
//   kJsonString: the pattern constrains the decoded content of a JSON string but the grammar
//                matches the JSON text between the quotes. Each code point the regex allows is
//                accepted in its JSON spelling: `"`, `\` and U+0000..U+001F only escaped (`\"`,
//                `\\`, `\b \f \n \r \t`, or `\u00XX` in either hex case), `/` raw or as `\/`,
//                every other code point as raw UTF-8 only. A `\uXXXX` spelling of an ordinary
//                character (`\u0041` for `A`) is NOT accepted inside a patterned string; the
//                generator never needs it, and accepting it would multiply the grammar.
//
// Thread-safety: stateless functions; the builder passed in is used by the calling thread only.
#pragma once

#include <string_view>

#include "core/grammar/grammar.h"
#include "core/util/status.h"

namespace radixserve::grammar {

enum class RegexContext { kRaw, kJsonString };

// Adds rules matching the language of `pattern` to `b` and returns the symbol of its top rule.
// search_semantics=false: the whole text must match the pattern (the anchors, all at its edges,
// are no-ops). search_semantics=true (JSON Schema's `pattern`, which searches): a leading
// alternative without `^` may be preceded by any text, a trailing one without `$` followed by any
// text (any code point, newlines included). Errors (a malformed or unsupported
// pattern, a pattern longer than b.limits().max_source_bytes) are returned and not recorded in
// `b`; caps met while adding rules (max_repeat, max_symbols, the deadline) are recorded in `b` as
// usual and also returned.
Result<Symbol> AddRegex(GrammarBuilder& b, std::string_view pattern, RegexContext ctx, bool search_semantics);

// A grammar whose language is the full matches of `pattern` (kRaw), like vLLM's guided_regex.
Result<Grammar> CompileRegex(std::string_view pattern, const GrammarLimits& limits = {});

}  // namespace radixserve::grammar
