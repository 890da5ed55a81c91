// Request parsing and validation: accepted shapes, defaults, and every error case (status + message).
#include "core/api/request_parser.h"
#include "core/api/priority_class.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace radixserve::api {
namespace {

using ::testing::HasSubstr;

TEST(CompletionParse, FullRequest) {
  GenerateRequest r;
  ApiError e;
  ASSERT_TRUE(ParseCompletionRequest(R"({"model": "m", "prompt": "hi", "max_tokens": 7, "temperature": 0.5,
      "top_p": 0.9, "top_k": 40, "min_p": 0.1, "frequency_penalty": 0.5, "presence_penalty": -0.5,
      "repetition_penalty": 1.1, "stop": ["x", "yy"], "stop_token_ids": [2, 3], "n": 2, "seed": 42,
      "ignore_eos": true, "logprobs": 3, "stream": true, "stream_options": {"include_usage": true},
      "rid": "abc", "user": "ignored"})", ApiLimits{}, &r, &e)) << e.message;
  EXPECT_EQ(r.endpoint, Endpoint::kCompletions);
  EXPECT_EQ(r.model, "m");
  EXPECT_TRUE(r.has_text);
  EXPECT_EQ(r.text, "hi");
  EXPECT_EQ(r.spec.sampling.max_new_tokens, 7);
  EXPECT_FLOAT_EQ(r.spec.sampling.temperature, 0.5f);
  EXPECT_FLOAT_EQ(r.spec.sampling.top_p, 0.9f);
  EXPECT_EQ(r.spec.sampling.top_k, 40);
  EXPECT_FLOAT_EQ(r.spec.sampling.min_p, 0.1f);
  EXPECT_FLOAT_EQ(r.spec.sampling.frequency_penalty, 0.5f);
  EXPECT_FLOAT_EQ(r.spec.sampling.presence_penalty, -0.5f);
  EXPECT_FLOAT_EQ(r.spec.sampling.repetition_penalty, 1.1f);
  EXPECT_EQ(r.spec.stop_strs, (std::vector<std::string>{"x", "yy"}));
  EXPECT_EQ(r.spec.stop_token_ids, (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(r.n, 2);
  EXPECT_TRUE(r.spec.sampling.has_seed);
  EXPECT_EQ(r.spec.sampling.seed, 42u);
  EXPECT_TRUE(r.spec.sampling.ignore_eos);
  EXPECT_TRUE(r.spec.return_logprob);
  EXPECT_EQ(r.spec.top_logprobs_num, 3);
  EXPECT_EQ(r.spec.sampling.logprobs, 3);
  EXPECT_TRUE(r.spec.stream);
  EXPECT_TRUE(r.include_usage);
  EXPECT_EQ(r.rid, "abc");
}

TEST(CompletionParse, DefaultsAndTokenPrompt) {
  GenerateRequest r;
  ApiError e;
  ASSERT_TRUE(ParseCompletionRequest(R"({"prompt": [5, 6, 7]})", ApiLimits{}, &r, &e)) << e.message;
  EXPECT_TRUE(r.has_input_ids);
  EXPECT_EQ(r.input_ids, (std::vector<int32_t>{5, 6, 7}));
  EXPECT_EQ(r.spec.sampling.max_new_tokens, 128);
  EXPECT_EQ(r.spec.sampling.logprobs, -1);
  EXPECT_FALSE(r.spec.stream);
  EXPECT_EQ(r.n, 1);
  EXPECT_FALSE(r.spec.sampling.has_seed);
  // A batch of one prompt is unwrapped; a single stop string is a list of one; temperature 0 is greedy.
  ASSERT_TRUE(ParseCompletionRequest(R"({"prompt": ["a"], "stop": "END", "temperature": 0, "top_k": -1,
      "max_completion_tokens": 3})", ApiLimits{}, &r, &e)) << e.message;
  EXPECT_EQ(r.text, "a");
  EXPECT_EQ(r.spec.stop_strs, (std::vector<std::string>{"END"}));
  EXPECT_TRUE(r.spec.sampling.is_greedy());
  EXPECT_EQ(r.spec.sampling.max_new_tokens, 3);
  ASSERT_TRUE(ParseCompletionRequest(R"({"prompt": [[9, 8]], "logprobs": 0})", ApiLimits{}, &r, &e));
  EXPECT_EQ(r.input_ids, (std::vector<int32_t>{9, 8}));
  EXPECT_EQ(r.spec.sampling.logprobs, 0);
}

struct ErrorCase {
  const char* body;
  int status;
  const char* param;
  const char* message;
};

void ExpectErrors(bool (*parse)(std::string_view, const ApiLimits&, GenerateRequest*, ApiError*),
                  const std::vector<ErrorCase>& cases) {
  ApiLimits limits;
  limits.max_body_bytes = 4096;
  for (const ErrorCase& c : cases) {
    GenerateRequest r;
    ApiError e;
    EXPECT_FALSE(parse(c.body, limits, &r, &e)) << c.body;
    EXPECT_EQ(e.http_status, c.status) << c.body;
    EXPECT_EQ(e.param, c.param) << c.body;
    EXPECT_THAT(e.message, HasSubstr(c.message)) << c.body;
  }
}

TEST(CompletionParse, Errors) {
  ExpectErrors(ParseCompletionRequest, {
      {"{not json", 400, "", "not valid JSON"},
      {"[1, 2]", 400, "", "must be a JSON object, got array"},
      {R"({"max_tokens": 5})", 400, "prompt", "prompt: is required"},
      {R"({"prompt": 5})", 400, "prompt", "expected a string or an array of token ids, got integer"},
      {R"({"prompt": []})", 400, "prompt", "must not be empty"},
      {R"({"prompt": [1, -2]})", 400, "prompt[1]", "expected a token id"},
      {R"({"prompt": ["a", "b"]})", 400, "prompt", "batches of prompts are not supported"},
      {R"({"prompt": "x", "max_tokens": "5"})", 400, "max_tokens", "expected an integer, got string"},
      {R"({"prompt": "x", "max_tokens": 0})", 400, "max_tokens", "must be in [1, "},
      {R"({"prompt": "x", "max_tokens": 2.5})", 400, "max_tokens", "expected an integer, got 2.5"},
      {R"({"prompt": "x", "temperature": -1})", 400, "temperature", "must be in [0, 2], got -1"},
      {R"({"prompt": "x", "temperature": 3})", 400, "temperature", "must be in [0, 2]"},
      {R"({"prompt": "x", "top_p": 0})", 400, "top_p", "must be in (0, 1], got 0"},
      {R"({"prompt": "x", "top_p": 1.5})", 400, "top_p", "must be in (0, 1]"},
      {R"({"prompt": "x", "top_k": 0})", 400, "top_k", "must be >= 1, or -1"},
      {R"({"prompt": "x", "top_k": -5})", 400, "top_k", "must be in [-1, "},
      {R"({"prompt": "x", "min_p": 2})", 400, "min_p", "must be in [0, 1]"},
      {R"({"prompt": "x", "frequency_penalty": 2.5})", 400, "frequency_penalty", "must be in [-2, 2]"},
      {R"({"prompt": "x", "presence_penalty": -3})", 400, "presence_penalty", "must be in [-2, 2]"},
      {R"({"prompt": "x", "repetition_penalty": 0})", 400, "repetition_penalty", "must be in (0, 2]"},
      {R"({"prompt": "x", "n": 0})", 400, "n", "must be in [1, 16], got 0"},
      {R"({"prompt": "x", "n": 17})", 400, "n", "must be in [1, 16], got 17"},
      {R"({"prompt": "x", "logprobs": 21})", 400, "logprobs", "must be in [0, 20], got 21"},
      {R"({"prompt": "x", "stop": 5})", 400, "stop", "expected a string or an array of strings, got integer"},
      {R"({"prompt": "x", "stop": ["a", 1]})", 400, "stop[1]", "expected a string, got integer"},
      {R"({"prompt": "x", "stop": [""]})", 400, "stop[0]", "must not be empty"},
      {R"({"prompt": "x", "stop": ["1","2","3","4","5","6","7","8","9","10","11","12","13","14","15","16","17"]})",
       400, "stop", "at most 16 stop strings"},
      {R"({"prompt": "x", "stop_token_ids": [1, "a"]})", 400, "stop_token_ids[1]", "expected a token id"},
      {R"({"prompt": "x", "stream": "yes"})", 400, "stream", "expected a boolean, got string"},
      {R"({"prompt": "x", "stream_options": {"include_usage": true}})", 400, "stream_options",
       "only allowed when stream is true"},
      {R"({"prompt": "x", "stream": true, "stream_options": {"include_usage": 1}})", 400,
       "stream_options.include_usage", "expected a boolean"},
      {R"({"prompt": "x", "model": 3})", 400, "model", "expected a string, got integer"},
      {R"({"prompt": "x", "seed": "s"})", 400, "seed", "expected an integer"},
      {R"({"prompt": "x", "echo": true})", 400, "echo", "not supported"},
      {R"({"prompt": "x", "suffix": "y"})", 400, "suffix", "not supported"},
      {R"({"prompt": "x", "guided_choice": []})", 400, "guided_choice", "must contain at least one string"},
      {R"({"prompt": "x", "logit_bias": {"5": 1}})", 400, "logit_bias", "not supported"},
      {R"({"prompt": "x", "min_tokens": 10, "max_tokens": 5})", 400, "min_new_tokens", "min_new_tokens must be in"},
  });
}

// Scheduling fields (priority by class name or number, cache salt, routing key) on every endpoint.
TEST(SchedulingFields, ParsedTheSameOnEveryEndpoint) {
  GenerateRequest r;
  ApiError e;
  ASSERT_TRUE(ParseCompletionRequest(R"({"prompt": "x", "priority": "bulk", "cache_salt": "t1", "routing_key": "s9"})",
                                     ApiLimits{}, &r, &e)) << e.message;
  EXPECT_EQ(r.spec.priority, InfoOf(PriorityClass::kBulk).priority);
  EXPECT_EQ(r.spec.cache_salt, "t1");
  EXPECT_EQ(r.spec.routing_key, "s9");
  ASSERT_TRUE(ParseChatCompletionRequest(R"({"messages": [{"role": "user", "content": "x"}], "priority": 77})",
                                         ApiLimits{}, &r, &e)) << e.message;
  EXPECT_EQ(r.spec.priority, 77);
  EXPECT_EQ(ClassOfPriority(77), PriorityClass::kInteractive);
  EXPECT_EQ(r.spec.cache_salt, "");
  ASSERT_TRUE(ParseNativeGenerateRequest(R"({"text": "x", "priority": "interactive", "cache_salt": ""})", ApiLimits{},
                                         &r, &e)) << e.message;
  EXPECT_EQ(r.spec.priority, 40);
  EXPECT_EQ(r.spec.cache_salt, "");  // "" is the shared namespace, not a salt
  ASSERT_TRUE(ParseCompletionRequest(R"({"prompt": "x"})", ApiLimits{}, &r, &e));
  EXPECT_FALSE(r.spec.priority.has_value());  // the server gives it the default class's number
  EXPECT_EQ(ClassOfPriority(InfoOf(PriorityClass::kDefault).priority), PriorityClass::kDefault);
  EXPECT_EQ(ClassOfPriority(-5), PriorityClass::kBulk);
  EXPECT_EQ(ClassOfPriority(39), PriorityClass::kDefault);

  ExpectErrors(ParseCompletionRequest, {
      {R"({"prompt": "x", "priority": "urgent"})", 400, "priority",
       "priority must be interactive, default, bulk or an integer, got 'urgent'"},
      {R"({"prompt": "x", "priority": true})", 400, "priority", "expected a class name"},
      {R"({"prompt": "x", "priority": 1.5})", 400, "priority", "expected an integer"},
      {R"({"prompt": "x", "priority": 99999999999})", 400, "priority", "must be in ["},
      {R"({"prompt": "x", "cache_salt": 5})", 400, "cache_salt", "expected a string, got integer"},
      {R"({"prompt": "x", "routing_key": ["a"]})", 400, "routing_key", "expected a string, got array"},
  });
  const std::string long_salt(257, 's');
  EXPECT_FALSE(ParseCompletionRequest(R"({"prompt": "x", "cache_salt": ")" + long_salt + "\"}", ApiLimits{}, &r, &e));
  EXPECT_EQ(e.param, "cache_salt");
  EXPECT_THAT(e.message, HasSubstr("at most 256 bytes allowed, got 257"));
}

TEST(SchedulingFields, ClassLimitsParse) {
  auto l = ParseClassLimits("bulk=8,interactive=0");
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ((*l)[static_cast<size_t>(PriorityClass::kBulk)], 8);
  EXPECT_EQ((*l)[static_cast<size_t>(PriorityClass::kDefault)], 0);
  EXPECT_TRUE(ParseClassLimits("").ok());
  EXPECT_THAT(ParseClassLimits("batch=3").status().message(), HasSubstr("expected interactive=N"));
  EXPECT_THAT(ParseClassLimits("bulk=-1").status().message(), HasSubstr("bulk needs a count >= 0, got '-1'"));
  EXPECT_THAT(ParseClassLimits("bulk").status().message(), HasSubstr("got 'bulk'"));
}

TEST(CompletionParse, LongStopStringAndBodyLimit) {
  ApiLimits limits;
  limits.max_stop_string_bytes = 4;
  GenerateRequest r;
  ApiError e;
  EXPECT_FALSE(ParseCompletionRequest(R"({"prompt": "x", "stop": "12345"})", limits, &r, &e));
  EXPECT_EQ(e.param, "stop");
  EXPECT_THAT(e.message, HasSubstr("limited to 4 bytes, got 5"));
  limits.max_body_bytes = 10;
  EXPECT_FALSE(ParseCompletionRequest(R"({"prompt": "0123456789"})", limits, &r, &e));
  EXPECT_EQ(e.http_status, 413);
  EXPECT_THAT(e.message, HasSubstr("the limit is 10"));
}

TEST(ChatParse, MessagesAndLogprobs) {
  GenerateRequest r;
  ApiError e;
  ASSERT_TRUE(ParseChatCompletionRequest(R"({"model": "default", "messages": [
      {"role": "system", "content": "be brief"},
      {"role": "user", "content": [{"type": "text", "text": "hel"}, {"type": "text", "text": "lo"}]},
      {"role": "assistant", "content": null},
      {"role": "developer", "content": "dev"}],
      "logprobs": true, "top_logprobs": 2, "max_completion_tokens": 9})", ApiLimits{}, &r, &e)) << e.message;
  EXPECT_EQ(r.endpoint, Endpoint::kChatCompletions);
  ASSERT_EQ(r.messages.size(), 4u);
  EXPECT_EQ(r.messages[0].role, "system");
  EXPECT_EQ(r.messages[1].content, "hello");
  EXPECT_EQ(r.messages[2].content, "");
  EXPECT_EQ(r.messages[3].role, "system");
  EXPECT_TRUE(r.spec.return_logprob);
  EXPECT_EQ(r.spec.top_logprobs_num, 2);
  EXPECT_EQ(r.spec.sampling.logprobs, 2);
  EXPECT_EQ(r.spec.sampling.max_new_tokens, 9);
  EXPECT_TRUE(r.add_generation_prompt);
}

TEST(ChatParse, Errors) {
  ExpectErrors(ParseChatCompletionRequest, {
      {R"({"model": "m"})", 400, "messages", "messages: is required"},
      {R"({"messages": "hi"})", 400, "messages", "expected an array of messages, got string"},
      {R"({"messages": []})", 400, "messages", "at least one message"},
      {R"({"messages": [5]})", 400, "messages[0]", "expected an object, got integer"},
      {R"({"messages": [{"content": "x"}]})", 400, "messages[0].role", "expected a string"},
      {R"({"messages": [{"role": "robot", "content": "x"}]})", 400, "messages[0].role",
       "expected \"system\", \"user\", \"assistant\" or \"tool\", got \"robot\""},
      {R"({"messages": [{"role": "tool", "content": "x"}]})", 400, "messages[0].tool_call_id",
       "messages[0].tool_call_id: is required in a tool message"},
      {R"({"messages": [{"role": "user"}]})", 400, "messages[0].content", "is required"},
      {R"({"messages": [{"role": "user", "content": 5}]})", 400, "messages[0].content",
       "expected a string or an array of content parts, got integer"},
      {R"({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]})", 400,
       "messages[0].content[0].type", "only \"text\" content parts are supported"},
      {R"({"messages": [{"role": "user", "content": "x"}], "top_logprobs": 2})", 400, "top_logprobs",
       "requires logprobs to be true"},
      {R"({"messages": [{"role": "user", "content": "x"}], "logprobs": true, "top_logprobs": 30})", 400,
       "top_logprobs", "must be in [0, 20], got 30"},
      {R"({"messages": [{"role": "user", "content": "x"}], "logprobs": 1})", 400, "logprobs",
       "expected a boolean, got integer"},
      // response_format's own cases are in response_format_test.cc; here, that the chat parser reads it.
      {R"({"messages": [{"role": "user", "content": "x"}], "response_format": {"type": "xml"}})", 400,
       "response_format.type", "expected \"text\", \"json_object\" or \"json_schema\", got \"xml\""},
      {R"({"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "function"}]})", 400,
       "tools[0].function", "tools[0].function: expected an object"},
  });
}

TEST(NativeParse, TextAndSamplingParams) {
  GenerateRequest r;
  ApiError e;
  ASSERT_TRUE(ParseNativeGenerateRequest(R"({"text": "hello", "rid": "r1", "stream": true,
      "sampling_params": {"max_new_tokens": 4, "min_new_tokens": 1, "temperature": 0.7, "stop": "x",
      "stop_token_ids": [9], "n": 3, "sampling_seed": 5, "skip_special_tokens": false, "top_k": 5},
      "return_logprob": true, "top_logprobs_num": 2})", ApiLimits{}, &r, &e)) << e.message;
  EXPECT_EQ(r.endpoint, Endpoint::kGenerate);
  EXPECT_EQ(r.text, "hello");
  EXPECT_EQ(r.rid, "r1");
  EXPECT_TRUE(r.spec.stream);
  EXPECT_EQ(r.spec.sampling.max_new_tokens, 4);
  EXPECT_EQ(r.spec.sampling.min_new_tokens, 1);
  EXPECT_EQ(r.spec.stop_strs, (std::vector<std::string>{"x"}));
  EXPECT_EQ(r.spec.stop_token_ids, (std::vector<int32_t>{9}));
  EXPECT_EQ(r.n, 3);
  EXPECT_EQ(r.spec.sampling.seed, 5u);
  EXPECT_FALSE(r.spec.sampling.skip_special_tokens);
  EXPECT_EQ(r.spec.sampling.top_k, 5);
  EXPECT_TRUE(r.spec.return_logprob);
  EXPECT_EQ(r.spec.sampling.logprobs, 2);
  ASSERT_TRUE(ParseNativeGenerateRequest(R"({"input_ids": [1, 2]})", ApiLimits{}, &r, &e));
  EXPECT_EQ(r.input_ids, (std::vector<int32_t>{1, 2}));
}

TEST(NativeParse, Errors) {
  ExpectErrors(ParseNativeGenerateRequest, {
      {R"({})", 400, "text", "exactly one of \"text\" or \"input_ids\""},
      {R"({"text": "a", "input_ids": [1]})", 400, "text", "exactly one of"},
      {R"({"input_ids": []})", 400, "input_ids", "must not be empty"},
      {R"({"text": "a", "sampling_params": 5})", 400, "sampling_params", "expected an object, got integer"},
      {R"({"text": "a", "sampling_params": {"temperature": "hot"}})", 400, "sampling_params.temperature",
       "expected a number, got string"},
      {R"({"text": "a", "sampling_params": {"max_new_tokens": -1}})", 400, "sampling_params.max_new_tokens",
       "must be in [0, "},
      {R"({"text": "a", "top_logprobs_num": 50})", 400, "top_logprobs_num", "must be in [0, 20]"},
  });
}

TEST(TokenizeParse, Shapes) {
  TokenizeRequest t;
  ApiError e;
  ASSERT_TRUE(ParseTokenizeRequest(R"({"text": "ab", "add_special_tokens": false})", ApiLimits{}, &t, &e));
  EXPECT_EQ(t.text, "ab");
  EXPECT_FALSE(t.add_special_tokens);
  ASSERT_TRUE(ParseTokenizeRequest(R"({"prompt": "cd"})", ApiLimits{}, &t, &e));
  EXPECT_EQ(t.text, "cd");
  ASSERT_TRUE(ParseTokenizeRequest(R"({"messages": [{"role": "user", "content": "q"}]})", ApiLimits{}, &t, &e));
  EXPECT_TRUE(t.has_messages);
  EXPECT_FALSE(ParseTokenizeRequest(R"({"add_special_tokens": true})", ApiLimits{}, &t, &e));
  EXPECT_EQ(e.param, "text");
  DetokenizeRequest d;
  ASSERT_TRUE(ParseDetokenizeRequest(R"({"tokens": [4, 5]})", ApiLimits{}, &d, &e));
  EXPECT_EQ(d.tokens, (std::vector<int32_t>{4, 5}));
  EXPECT_FALSE(ParseDetokenizeRequest(R"({"tokens": "x"})", ApiLimits{}, &d, &e));
  EXPECT_EQ(e.param, "tokens");
  EXPECT_THAT(e.message, HasSubstr("expected an array of token ids"));
}

TEST(ModelName, DefaultEmptyOrServed) {
  ApiError e;
  EXPECT_TRUE(CheckModelName("", "llama", &e));
  EXPECT_TRUE(CheckModelName("default", "llama", &e));
  EXPECT_TRUE(CheckModelName("llama", "llama", &e));
  EXPECT_FALSE(CheckModelName("gpt-4", "llama", &e));
  EXPECT_EQ(e.http_status, 400);
  EXPECT_EQ(e.param, "model");
  EXPECT_THAT(e.message, HasSubstr("unknown model \"gpt-4\""));
}

TEST(ApiErrorJson, OpenAiShape) {
  ApiError e = ApiError::BadRequest("n", "n: must be in [1, 16], got 0");
  EXPECT_EQ(e.ToJson(),
            R"({"error":{"code":400,"message":"n: must be in [1, 16], got 0","param":"n","type":"invalid_request_error"}})");
  EXPECT_EQ(ApiError::Unauthorized("no key").ToJson(),
            R"({"error":{"code":401,"message":"no key","param":null,"type":"authentication_error"}})");
  EXPECT_EQ(ApiError::FromStatus(Status::ResourceExhausted("full")).http_status, 429);
  EXPECT_EQ(ApiError::FromStatus(Status::Unavailable("later")).http_status, 503);
  EXPECT_EQ(ApiError::FromStatus(Status::Internal("bug")).http_status, 500);
}

}  // namespace
}  // namespace radixserve::api
