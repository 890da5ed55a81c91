#include "transport/topic.h"

namespace radixserve::transport {
namespace {
Status ValidatePart(const std::string& part, const char* what) {
  if (part.empty()) return Status::InvalidArgument(std::string("topic ") + what + " is empty");
  if (part.size() > kMaxTopicPartLength)
    return Status::InvalidArgument(std::string("topic ") + what + " '" + part + "' is longer than " +
                                   std::to_string(kMaxTopicPartLength) + " characters");
  for (char c : part)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'))
      return Status::InvalidArgument(std::string("topic ") + what + " '" + part +
                                     "' may only hold letters, digits, '_', '-' and '.'");
  return Status::Ok();
}

Topic Parse(const std::string& s, const Topic& base) {
  auto slash = s.find('/');
  if (slash == std::string::npos) return Topic{base.ns, s};
  return Topic{s.substr(0, slash), s.substr(slash + 1)};
}
}  // namespace

Status ValidateTopic(const Topic& t) {
  RS_RETURN_IF_ERROR(ValidatePart(t.ns, "namespace"));
  return ValidatePart(t.name, "name");
}

Status TopicRemap::Add(const std::string& from, const std::string& to) {
  for (const auto* s : {&from, &to}) {
    Topic t = Parse(*s, Topic{"x", ""});
    RS_RETURN_IF_ERROR(ValidateTopic(t));
  }
  rules_[from] = to;
  return Status::Ok();
}

Topic TopicRemap::Apply(const Topic& t) const {
  if (auto it = rules_.find(t.ns + "/" + t.name); it != rules_.end()) return Parse(it->second, t);
  if (auto it = rules_.find(t.name); it != rules_.end()) return Parse(it->second, t);
  return t;
}

}  // namespace radixserve::transport
