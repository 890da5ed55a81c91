// GBNF front-end: llama.cpp's grammar format (grammars/README.md in llama.cpp), read as llama.cpp
// reads it, compiled into the internal grammar (grammar.h).
//
// The format: rules `name ::= alternatives`, names of ASCII letters, digits and '-'; the start
// rule is `root`. Alternatives are separated by '|'; an element is a string literal "...", a
// character class [...] or [^...] with ranges, `.` (any code point), a rule name, or a group
// ( ... ); each may be followed by quantifiers * + ? {n} {n,} {n,m} (applied in turn, so x*? is
// (x*)?; a quantifier after a literal repeats the whole literal). Escapes in literals and classes:
// \n \r \t \\ \" \[ \] \- \xHH \uHHHH \UHHHHHHHH; any other text is UTF-8. `#` starts a comment
// to the end of the line. A rule ends at the first newline outside parentheses: newlines are
// allowed after `::=`, after `|` and anywhere inside a group, not between two elements at the
// top level of a rule.
//
// Differences from llama.cpp, all refusals with a message (never a silent change of language):
// token references <...>, <[id]> and !<...> match whole tokens of a vocabulary and are refused
// (Unsupported); an empty class [] or [^] (which llama.cpp lets match the empty string) and a
// class range written backwards are refused; a repetition bound past limits.max_repeat is refused
// where llama.cpp would silently make it unbounded (past 2000); a quantified item that can match
// the empty string under an unbounded quantifier, e.g. ("a"?)*, is left recursive and refused by
// GrammarBuilder::Finish, as llama.cpp refuses it. As in llama.cpp, a rule defined twice takes its
// last definition.
//
// Thread-safety: a stateless function.
#pragma once

#include <string_view>

#include "core/grammar/grammar.h"
#include "core/util/status.h"

namespace radixserve::grammar {

// Compiles GBNF text into a grammar rooted at its rule `root`. Errors name the line and column
// (and the rule, for an undefined or missing one).
Result<Grammar> CompileGbnf(std::string_view text, const GrammarLimits& limits = {});

}  // namespace radixserve::grammar
