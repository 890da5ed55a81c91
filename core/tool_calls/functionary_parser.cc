// functionary medium v3.2: every message starts with a recipient line. The generation prompt ends
// with ">>>", so the output opens with the first recipient: "all\n" then text for the user, or a
// function name, "\n" and its arguments object. Each further message follows another ">>>". A
// leading ">>>" in the output itself is accepted too. Raw code for the "python" recipient is not
// JSON and so comes back as content, like any recipient line that is not a name.
#include <optional>
#include <string>

#include "core/tool_calls/call_name.h"
#include "core/tool_calls/family_parsers.h"
#include "core/tool_calls/json_call_reader.h"
#include "core/tool_calls/marker_search.h"
#include "core/tool_calls/parser_core.h"

namespace radixserve::tool_calls {
namespace {

constexpr std::string_view kMessageStart = ">>>";

class FunctionaryParser final : public ParserCore {
 public:
  FunctionaryParser() : ParserCore(false) { Hold(0); }

 private:
  enum class Mode : uint8_t { kRecipient, kText, kArguments, kAfterArguments };

  bool Step() override {
    switch (mode_) {
      case Mode::kRecipient:
        return ReadRecipient();
      case Mode::kText: {
        std::string_view unread = Unread();
        MarkerMatch m = FindMarker(unread, {kMessageStart}, at_end());
        if (m.found) {
          AddContent(unread.substr(0, m.at));
          Skip(m.at + kMessageStart.size());
          StartMessage();
          return true;
        }
        AddContent(unread.substr(0, m.safe));
        Skip(m.safe);
        return m.safe > 0;
      }
      case Mode::kArguments: {
        if (read_to_ == end()) return false;
        JsonCallReader::State state = reader_->Read(Text(read_to_, end()));
        read_to_ = end();
        if (state == JsonCallReader::State::kFailed) {
          size_t fault = json_start_ + reader_->fail_offset();
          TextFrom(reader_->began_call() ? fault : recipient_start_, fault);
        } else if (state == JsonCallReader::State::kDone) {
          SetPos(json_start_ + reader_->end());
          mode_ = Mode::kAfterArguments;
        }
        return true;
      }
      case Mode::kAfterArguments: {
        size_t length = 0;
        switch (MatchAfterSpace(Unread(), kMessageStart, /*at_end=*/false, &length)) {
          case Prefix::kYes:
            Skip(length);
            StartMessage();
            return true;
          case Prefix::kNo:
            ContentMarkup();
            mode_ = Mode::kText;
            return true;
          case Prefix::kMaybe:
            return false;
        }
        return false;
      }
    }
    return false;
  }

  bool EndOfOutput() override {
    if (mode_ == Mode::kArguments) {
      reader_->EndOfOutput();
      TextFrom(reader_->began_call() ? end() : recipient_start_, end());
      return true;
    }
    if (mode_ == Mode::kAfterArguments) {  // space, or a ">>>" cut short
      SetPos(end());
      mode_ = Mode::kText;
    }
    if (mode_ == Mode::kRecipient) {  // a recipient line cut short: "all" means nothing yet
      if (Unread() != "all") AddContent(Unread());
      SetPos(end());
      Release();
      mode_ = Mode::kText;
    }
    return false;
  }

  void StartMessage() {
    ContentMarkup();
    recipient_start_ = pos();
    Hold(recipient_start_);
    mode_ = Mode::kRecipient;
  }

  bool ReadRecipient() {
    std::string_view unread = Unread();
    if (pos() == 0 && !unread.empty()) {  // the prompt's ">>>" repeated in the output
      if (unread.starts_with(kMessageStart)) {
        Skip(kMessageStart.size());
        StartMessage();
        return true;
      }
      if (kMessageStart.starts_with(unread) && !at_end()) return false;
    }
    size_t n = CallNameLength(unread);
    if (n == unread.size() && n <= kMaxCallNameLength) return false;  // EndOfOutput decides at the end
    if (n == unread.size() || unread[n] != '\n' || n == 0 || n > kMaxCallNameLength) {  // not a recipient: text
      TextFrom(recipient_start_, pos());
      return true;
    }
    std::string name(unread.substr(0, n));
    Skip(n + 1);
    if (name == "all") {
      ContentMarkup();
      Release();
      mode_ = Mode::kText;
      return true;
    }
    json_start_ = read_to_ = pos();
    reader_.emplace(JsonCallReader::Shape::kArguments, /*strict=*/false, sink(), std::move(name));
    mode_ = Mode::kArguments;
    return true;
  }

  // The text from `from` to `to` is content as written; text follows from `to`.
  void TextFrom(size_t from, size_t to) {
    AddContent(Text(from, to));
    SetPos(to);
    Release();
    mode_ = Mode::kText;
  }

  Mode mode_ = Mode::kRecipient;
  size_t recipient_start_ = 0;
  size_t json_start_ = 0;
  size_t read_to_ = 0;
  std::optional<JsonCallReader> reader_;
};

}  // namespace

std::unique_ptr<OutputParser> MakeFunctionaryParser() { return std::make_unique<FunctionaryParser>(); }

}  // namespace radixserve::tool_calls
