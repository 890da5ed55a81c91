// CompileSpec: one entry point from a request's GrammarSpec to a Grammar, whatever its kind.
//
// Errors are values that name their cause: InvalidArgument (a schema, regex or grammar that is
// wrong or unsatisfiable), Unsupported (a keyword or construct the engine does not implement),
// ResourceExhausted (a size or time cap). For kJsonSchema the message starts with the JSON
// pointer into the schema of the offending place ("/properties/age/minimum: ...", or ": ..." at
// the root); for kStructural it names the spec's field (structural.h). Stateless; thread-safe.
#pragma once

#include "core/grammar/grammar.h"
#include "core/grammar/grammar_spec.h"
#include "core/util/status.h"

namespace radixserve::grammar {

Result<Grammar> CompileSpec(const GrammarSpec& spec, const GrammarLimits& limits = {});

// A grammar matching exactly one of `choices` (raw bytes). Empty list: InvalidArgument.
Result<Grammar> CompileChoice(const std::vector<std::string>& choices, const GrammarLimits& limits = {});

}  // namespace radixserve::grammar
