// The parser of each family (one source file each); MakeOutputParser picks among them.
#pragma once

#include <memory>

#include "core/tool_calls/output_parser.h"

namespace radixserve::tool_calls {

std::unique_ptr<OutputParser> MakePlainParser();
std::unique_ptr<OutputParser> MakeHermesParser(bool starts_in_reasoning);
std::unique_ptr<OutputParser> MakeMistralNemoParser();
std::unique_ptr<OutputParser> MakeFirefunctionParser();
std::unique_ptr<OutputParser> MakeGraniteParser(bool starts_in_reasoning);
std::unique_ptr<OutputParser> MakeCommandR7BParser(bool starts_in_reasoning);
std::unique_ptr<OutputParser> MakeQwen3CoderParser(bool starts_in_reasoning);
std::unique_ptr<OutputParser> MakeLlama3Parser();
std::unique_ptr<OutputParser> MakeMistralSmallParser(bool starts_in_reasoning);
std::unique_ptr<OutputParser> MakeFunctionaryParser();
std::unique_ptr<OutputParser> MakeGptOssParser();
std::unique_ptr<OutputParser> MakeDeepSeekR1Parser(bool starts_in_reasoning);
std::unique_ptr<OutputParser> MakeGemma4Parser(bool starts_in_reasoning);
std::unique_ptr<OutputParser> MakeMiniCpm5Parser(bool starts_in_reasoning);

}  // namespace radixserve::tool_calls
