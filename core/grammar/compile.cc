#include "core/grammar/compile.h"

#include <nlohmann/json.hpp>

#include "core/grammar/gbnf.h"
#include "core/grammar/json_schema.h"
#include "core/grammar/regex.h"
#include "core/grammar/structural.h"

namespace radixserve::grammar {

std::string_view GrammarKindName(GrammarKind kind) {
  switch (kind) {
    case GrammarKind::kNone: return "none";
    case GrammarKind::kJsonObject: return "json_object";
    case GrammarKind::kJsonSchema: return "json_schema";
    case GrammarKind::kRegex: return "regex";
    case GrammarKind::kGbnf: return "gbnf";
    case GrammarKind::kChoice: return "choice";
    case GrammarKind::kStructural: return "structural";
  }
  return "unknown";
}

Result<Grammar> CompileChoice(const std::vector<std::string>& choices, const GrammarLimits& limits) {
  if (choices.empty()) return Status::InvalidArgument("a choice needs at least one string");
  GrammarBuilder b(limits);
  const uint32_t root = b.NewRule("choice");
  for (const std::string& c : choices) b.AddAlternative(root, b.Literal(c));
  return b.Finish(root);
}

Result<Grammar> CompileSpec(const GrammarSpec& spec, const GrammarLimits& limits) {
  if (spec.text.size() > limits.max_source_bytes)
    return Status::ResourceExhausted(std::string(GrammarKindName(spec.kind)) + " text of " +
                                     std::to_string(spec.text.size()) + " bytes is over the cap of " +
                                     std::to_string(limits.max_source_bytes));
  switch (spec.kind) {
    case GrammarKind::kNone:
      return Status::InvalidArgument("no grammar to compile");
    case GrammarKind::kJsonObject:
      return CompileJsonObject(limits);
    case GrammarKind::kJsonSchema: {
      // From the text, so the properties keep the schema's order. Generated integers are
      // written plainly (42, never 42.0 or -0.000...), which every draft counts as an integer.
      JsonSchemaOptions options;
      options.integer_point_zero = false;
      return CompileJsonSchemaText(spec.text, options, limits);
    }
    case GrammarKind::kRegex:
      return CompileRegex(spec.text, limits);
    case GrammarKind::kGbnf:
      return CompileGbnf(spec.text, limits);
    case GrammarKind::kChoice: {
      nlohmann::json arr = nlohmann::json::parse(spec.text, nullptr, /*allow_exceptions=*/false);
      if (arr.is_discarded() || !arr.is_array()) return Status::InvalidArgument("a choice is a JSON array of strings");
      std::vector<std::string> choices;
      for (const auto& c : arr) {
        if (!c.is_string()) return Status::InvalidArgument("a choice is a JSON array of strings");
        choices.push_back(c.get<std::string>());
      }
      return CompileChoice(choices, limits);
    }
    case GrammarKind::kStructural:
      return CompileStructural(spec.text, limits);
  }
  return Status::InvalidArgument("unknown grammar kind");
}

}  // namespace radixserve::grammar
