#include "core/tool_calls/output_parser.h"

#include "core/tool_calls/family_parsers.h"

namespace radixserve::tool_calls {

OutputParser::~OutputParser() = default;

std::unique_ptr<OutputParser> MakeOutputParser(ToolCallFamily family, bool starts_in_reasoning) {
  switch (family) {
    case ToolCallFamily::kNone: return MakePlainParser();
    case ToolCallFamily::kHermes: return MakeHermesParser(starts_in_reasoning);
    case ToolCallFamily::kQwen3Coder: return MakeQwen3CoderParser(starts_in_reasoning);
    case ToolCallFamily::kLlama3: return MakeLlama3Parser();
    case ToolCallFamily::kMistralNemo: return MakeMistralNemoParser();
    case ToolCallFamily::kMistralSmall: return MakeMistralSmallParser(starts_in_reasoning);
    case ToolCallFamily::kFunctionaryV32: return MakeFunctionaryParser();
    case ToolCallFamily::kFirefunctionV2: return MakeFirefunctionParser();
    case ToolCallFamily::kGranite: return MakeGraniteParser(starts_in_reasoning);
    case ToolCallFamily::kCommandR7B: return MakeCommandR7BParser(starts_in_reasoning);
    case ToolCallFamily::kGptOss: return MakeGptOssParser();
    case ToolCallFamily::kDeepSeekR1: return MakeDeepSeekR1Parser(starts_in_reasoning);
    case ToolCallFamily::kGemma4: return MakeGemma4Parser(starts_in_reasoning);
    case ToolCallFamily::kMiniCpm5: return MakeMiniCpm5Parser(starts_in_reasoning);
  }
  return MakePlainParser();
}

ParsedOutput ParseOutput(ToolCallFamily family, std::string_view text, bool starts_in_reasoning, bool cut_by_length) {
  std::unique_ptr<OutputParser> parser = MakeOutputParser(family, starts_in_reasoning);
  ParsedOutput out;
  AppendDelta(parser->Feed(text), &out);
  AppendDelta(parser->Finish(cut_by_length), &out);
  return out;
}

}  // namespace radixserve::tool_calls
