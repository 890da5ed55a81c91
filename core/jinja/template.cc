#include "core/jinja/template.h"

#include "core/jinja/ast.h"
#include "core/jinja/lexer.h"
#include "core/jinja/parser.h"
#include "core/jinja/renderer.h"

namespace radixserve::jinja {

struct Template::Parsed {
  Body body;
};

Result<Template> Template::Parse(std::string_view source, const RenderLimits& limits) {
  if (source.size() > limits.max_source_bytes) {
    return Status::ResourceExhausted("template source is " + std::to_string(source.size()) +
                                     " bytes, over the limit of " + std::to_string(limits.max_source_bytes));
  }
  RS_ASSIGN_OR_RETURN(std::vector<Token> tokens, Tokenize(source));
  RS_ASSIGN_OR_RETURN(Body body, ParseTemplate(std::move(tokens)));
  auto parsed = std::make_shared<Parsed>();
  parsed->body = std::move(body);
  return Template(std::move(parsed));
}

Result<std::string> Template::Render(const nlohmann::ordered_json& context, const RenderOptions& options) const {
  Renderer renderer(options);
  return renderer.Render(parsed_->body, context);
}

}  // namespace radixserve::jinja
