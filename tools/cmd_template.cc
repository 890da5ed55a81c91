// `radixserve template`: prints the prompt a model's chat template makes of a conversation,
// exactly (nothing added, not even a newline), so users can see what their model is given.
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/api/chat_prompt.h"
#include "core/gguf/gguf_reader.h"
#include "core/tokenizer/tokenizer.h"
#include "tools/command.h"

namespace radixserve::tools {
namespace {

struct TemplateOptions {
  std::string model, template_file, messages, tools, kwargs, bos, eos, now;
  bool no_generation_prompt = false;
};

Result<std::string> ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Result<nlohmann::ordered_json> ReadJson(const std::string& path) {
  RS_ASSIGN_OR_RETURN(std::string text, ReadText(path));
  auto j = nlohmann::ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::InvalidArgument(path + ": not valid JSON");
  return j;
}

// "2026-01-15T12:00:00" (UTC) as a time point.
Result<std::chrono::system_clock::time_point> ParseNow(const std::string& text) {
  std::tm tm{};
  std::istringstream in(text);
  in >> std::get_time(&tm, "%Y-%m-%dT%H:%M:%S");
  if (in.fail()) return Status::InvalidArgument("--now: expected YYYY-MM-DDTHH:MM:SS, got '" + text + "'");
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

Status Run(const TemplateOptions& o) {
  std::string source, origin = o.template_file;
  api::ChatPromptTemplate::Tokens tokens{o.bos, o.eos};
  if (!o.model.empty()) {
    RS_ASSIGN_OR_RETURN(auto file, gguf::GgufFile::Open(o.model));
    if (o.template_file.empty()) {
      auto t = file->GetString("tokenizer.chat_template");
      if (!t.ok()) return Status::NotFound(o.model + " carries no tokenizer.chat_template (give --template FILE)");
      source = *t;
      origin = o.model + "'s tokenizer.chat_template";
    }
    RS_ASSIGN_OR_RETURN(auto tok, Tokenizer::FromGguf(*file));
    if (tokens.bos_token.empty() && tok->bos_id() >= 0) tokens.bos_token = std::string(tok->TokenText(tok->bos_id()));
    if (tokens.eos_token.empty() && tok->eos_id() >= 0) tokens.eos_token = std::string(tok->TokenText(tok->eos_id()));
  }
  if (!o.template_file.empty()) {
    RS_ASSIGN_OR_RETURN(source, ReadText(o.template_file));
  }
  RS_ASSIGN_OR_RETURN(api::ChatPromptTemplate t, api::ChatPromptTemplate::FromJinja(source, origin, tokens));
  RS_ASSIGN_OR_RETURN(nlohmann::ordered_json messages, ReadJson(o.messages));
  if (messages.is_object() && messages.contains("messages")) messages = messages["messages"];
  if (!messages.is_array()) return Status::InvalidArgument(o.messages + ": expected an array of messages");
  nlohmann::ordered_json tools, kwargs;
  if (!o.tools.empty()) {
    RS_ASSIGN_OR_RETURN(tools, ReadJson(o.tools));
  }
  if (!o.kwargs.empty()) {
    RS_ASSIGN_OR_RETURN(kwargs, ReadJson(o.kwargs));
    if (!kwargs.is_object()) return Status::InvalidArgument(o.kwargs + ": expected an object of template variables");
  }
  auto now = std::chrono::system_clock::now();
  if (!o.now.empty()) {
    RS_ASSIGN_OR_RETURN(now, ParseNow(o.now));
  }
  RS_ASSIGN_OR_RETURN(std::string prompt, t.RenderJson(messages, tools, !o.no_generation_prompt, kwargs, now));
  std::fwrite(prompt.data(), 1, prompt.size(), stdout);
  return Status::Ok();
}

CommandRegistrar template_registrar({"template", "Print the prompt a chat template makes of a conversation",
                      [](CLI::App& app) -> std::function<int()> {
                        auto o = std::make_shared<TemplateOptions>();
                        app.add_option("--model", o->model, "GGUF whose tokenizer.chat_template (and BOS/EOS) to use");
                        app.add_option("--template", o->template_file, "A Jinja chat template file (overrides the model's)");
                        app.add_option("--messages", o->messages, "JSON file: an array of chat messages (or {\"messages\": [...]})")
                            ->required();
                        app.add_option("--tools", o->tools, "JSON file: the tools array");
                        app.add_flag("--no-generation-prompt", o->no_generation_prompt,
                                     "Render without the opening of the assistant's turn");
                        app.add_option("--bos", o->bos, "bos_token (default: the model's, else empty)");
                        app.add_option("--eos", o->eos, "eos_token (default: the model's, else empty)");
                        app.add_option("--kwargs", o->kwargs, "JSON file: extra template variables (chat_template_kwargs)");
                        app.add_option("--now", o->now, "The time strftime_now formats, YYYY-MM-DDTHH:MM:SS (default: now)");
                        return [o]() -> int {
                          if (o->model.empty() && o->template_file.empty()) {
                            std::fprintf(stderr, "template: give --model or --template\n");
                            return 2;
                          }
                          Status s = Run(*o);
                          if (!s.ok()) {
                            std::fprintf(stderr, "template: %s\n", s.message().c_str());
                            return 1;
                          }
                          return 0;
                        };
                      }});

}  // namespace
}  // namespace radixserve::tools
