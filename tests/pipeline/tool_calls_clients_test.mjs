// Tool calls through three real clients against a running radixserve pipeline: stories260K served
// with a compact template of the Hermes tool-call family (hermes_compact.jinja, chat_template:=FILE;
// the model's context is 512 tokens). The model knows
// nothing of tools or JSON: every valid call below is the grammar's doing.
//   - the official openai SDK (v4): tool_choice "required" streamed and not, a named function,
//     auto, a two-turn round trip with a tool message, and the 400 for an unknown function;
//   - the Vercel AI SDK: generateText with tools and toolChoice 'required' (its chat provider);
//   - LangChain.js: ChatOpenAI.bindTools(...).invoke and withStructuredOutput.
// usage: NPM_DIR=<dir with node_modules/{openai,ai,@ai-sdk/openai,zod,@langchain/openai}> \
//          node tool_calls_clients_test.mjs <base url>
// Exits 0 when every check passes; otherwise prints the failed checks and exits 1.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const base = process.argv[2];
if (!base || !process.env.NPM_DIR) {
  console.error('usage: NPM_DIR=<dir> node tool_calls_clients_test.mjs <base url>');
  process.exit(2);
}
const require = createRequire(`${process.env.NPM_DIR}/package.json`);
const OpenAI = require('openai');
const { generateText, tool } = require('ai');
const { createOpenAI } = require('@ai-sdk/openai');
const { z } = require('zod');
const { ChatOpenAI } = require('@langchain/openai');

const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'not-needed', maxRetries: 0, timeout: 60_000 });

// Bounded strings: a tiny model under a grammar writes until a bound or a quote it happens to like.
const weatherParameters = {
  type: 'object',
  properties: {
    city: { type: 'string', maxLength: 10 },
    unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
  },
  required: ['city', 'unit'],
  additionalProperties: false,
};
const searchParameters = {
  type: 'object',
  properties: { query: { type: 'string', maxLength: 10 }, limit: { type: 'integer', minimum: 1, maximum: 5 } },
  required: ['query', 'limit'],
  additionalProperties: false,
};
const tools = [
  { type: 'function', function: { name: 'get_weather', parameters: weatherParameters } },
  { type: 'function', function: { name: 'search', parameters: searchParameters } },
];
const ask = [{ role: 'user', content: 'What is the weather in Paris?' }];
const maxTokens = 120;

function checkArguments(name, args) {
  const where = `${name}(${JSON.stringify(args)})`;
  assert.ok(args && typeof args === 'object' && !Array.isArray(args), where);
  if (name === 'get_weather') {
    assert.deepEqual(Object.keys(args), ['city', 'unit'], where);
    assert.equal(typeof args.city, 'string', where);
    assert.ok([...args.city].length <= 10, where);
    assert.ok(['celsius', 'fahrenheit'].includes(args.unit), where);
  } else {
    assert.equal(name, 'search', where);
    assert.deepEqual(Object.keys(args), ['query', 'limit'], where);
    assert.ok(typeof args.query === 'string' && [...args.query].length <= 10, where);
    assert.ok(Number.isInteger(args.limit) && args.limit >= 1 && args.limit <= 5, where);
  }
}

// Every call of an OpenAI-shaped message: an id, a known function, arguments valid for its schema.
function checkCalls(message) {
  assert.ok(Array.isArray(message.tool_calls) && message.tool_calls.length >= 1, JSON.stringify(message));
  for (const call of message.tool_calls) {
    assert.equal(call.type, 'function');
    assert.match(call.id, /^call_[A-Za-z0-9]{24}$/);
    checkArguments(call.function.name, JSON.parse(call.function.arguments));
  }
  assert.ok(!(message.content ?? '').includes('<tool_call>'), JSON.stringify(message));
}

const checks = {
  async openaiRequired() {
    const c = await client.chat.completions.create({
      model: 'default', temperature: 0, messages: ask, tools, tool_choice: 'required', parallel_tool_calls: false,
      max_tokens: maxTokens,
    });
    assert.equal(c.choices[0].finish_reason, 'tool_calls', JSON.stringify(c.choices[0]));
    checkCalls(c.choices[0].message);
    assert.equal(c.choices[0].message.tool_calls.length, 1);
  },

  // Parallel calls: a tiny model goes on calling until max_tokens; every call but a cut last one is
  // complete and valid, and the cut one is returned as far as it got, with finish_reason "length".
  async openaiParallelCalls() {
    const c = await client.chat.completions.create({
      model: 'default', temperature: 0, messages: ask, tools, tool_choice: 'required', max_tokens: maxTokens,
    });
    const choice = c.choices[0];
    const calls = choice.message.tool_calls;
    assert.ok(calls.length >= 2, JSON.stringify(choice));
    const complete = choice.finish_reason === 'length' ? calls.slice(0, -1) : calls;
    assert.ok(['length', 'tool_calls'].includes(choice.finish_reason));
    checkCalls({ ...choice.message, tool_calls: complete });
  },

  async openaiRequiredSampled() {
    for (const seed of [1, 2, 3]) {
      const c = await client.chat.completions.create({
        model: 'default', temperature: 1, seed, messages: ask, tools, tool_choice: 'required',
        parallel_tool_calls: false, max_tokens: maxTokens,
      });
      assert.equal(c.choices[0].finish_reason, 'tool_calls', JSON.stringify(c.choices[0]));
      checkCalls(c.choices[0].message);
    }
  },

  async openaiRequiredStreamedMatchesNonStreamed() {
    const request = { model: 'default', temperature: 0, messages: ask, tools, tool_choice: 'required',
                      parallel_tool_calls: false, max_tokens: maxTokens };
    const whole = await client.chat.completions.create(request);
    // The SDK's own stream helper assembles delta.tool_calls into the final message.
    const stream = client.beta.chat.completions.stream({ ...request, stream: true });
    const final = await stream.finalChatCompletion();
    assert.equal(final.choices[0].finish_reason, 'tool_calls');
    checkCalls(final.choices[0].message);
    const a = whole.choices[0].message.tool_calls[0].function;
    const b = final.choices[0].message.tool_calls[0].function;
    assert.equal(b.name, a.name);
    assert.equal(b.arguments, a.arguments);
  },

  async openaiNamedFunction() {
    const c = await client.chat.completions.create({
      model: 'default', temperature: 0, messages: ask, tools, max_tokens: maxTokens, parallel_tool_calls: false,
      tool_choice: { type: 'function', function: { name: 'search' } },
    });
    checkCalls(c.choices[0].message);
    for (const call of c.choices[0].message.tool_calls) assert.equal(call.function.name, 'search');
  },

  async openaiAutoAnswersOrCallsValidly() {
    for (const seed of [4, 5]) {
      const c = await client.chat.completions.create({
        model: 'default', temperature: 1, seed, messages: ask, tools, tool_choice: 'auto', max_tokens: 64,
      });
      const choice = c.choices[0];
      if (choice.message.tool_calls?.length) {
        assert.equal(choice.finish_reason, 'tool_calls');
        checkCalls(choice.message);
      } else {
        assert.equal(typeof choice.message.content, 'string');
        assert.ok(['stop', 'length'].includes(choice.finish_reason));
      }
    }
  },

  async openaiTwoTurnRoundTrip() {
    const first = await client.chat.completions.create({
      model: 'default', temperature: 0, messages: ask, tools, tool_choice: 'required', parallel_tool_calls: false,
      max_tokens: maxTokens,
    });
    const assistant = first.choices[0].message;
    checkCalls(assistant);
    const call = assistant.tool_calls[0];
    const second = await client.chat.completions.create({
      model: 'default', temperature: 0, tools, max_tokens: 16, tool_choice: 'none',
      messages: [...ask, assistant, { role: 'tool', tool_call_id: call.id, content: '{"temperature": 18}' }],
    });
    assert.equal(typeof second.choices[0].message.content, 'string');
    assert.ok(second.usage.prompt_tokens > first.usage.prompt_tokens, JSON.stringify(second.usage));
  },

  async openaiUnknownFunctionIsA400() {
    await assert.rejects(
      client.chat.completions.create({
        model: 'default', messages: ask, tools, max_tokens: 8,
        tool_choice: { type: 'function', function: { name: 'fly' } },
      }),
      (e) => {
        assert.ok(e instanceof OpenAI.BadRequestError, String(e));
        assert.equal(e.param, 'tool_choice.function.name');
        assert.match(e.message, /names no function of tools: "fly"/);
        return true;
      },
    );
  },

  async aiSdkGenerateTextRequired() {
    const provider = createOpenAI({ baseURL: `${base}/v1`, apiKey: 'not-needed' });
    const result = await generateText({
      model: provider.chat('default'),
      prompt: 'What is the weather in Paris?',
      tools: {
        get_weather: tool({
          description: 'Weather of a city.',
          inputSchema: z.object({ city: z.string().max(10), unit: z.enum(['celsius', 'fahrenheit']) }),
        }),
      },
      toolChoice: 'required', temperature: 0, maxOutputTokens: maxTokens, maxRetries: 0,
      providerOptions: { openai: { parallelToolCalls: false } },
    });
    assert.equal(result.finishReason, 'tool-calls');
    assert.ok(result.toolCalls.length >= 1, JSON.stringify(result.toolCalls));
    for (const call of result.toolCalls) {
      assert.equal(call.toolName, 'get_weather');
      checkArguments('get_weather', call.input);
    }
  },

  async langchainBindToolsInvoke() {
    const model = new ChatOpenAI({
      model: 'default', apiKey: 'not-needed', temperature: 0, maxTokens: maxTokens, maxRetries: 0,
      configuration: { baseURL: `${base}/v1` },
    });
    const bound = model.bindTools(
      [{ type: 'function', function: { name: 'search', description: 'Search the web.', parameters: searchParameters } }],
      { tool_choice: 'required', parallel_tool_calls: false },
    );
    const message = await bound.invoke('Find Paris events.');
    assert.ok(message.tool_calls.length >= 1, JSON.stringify(message));
    for (const call of message.tool_calls) {
      assert.equal(call.name, 'search');
      checkArguments('search', call.args);
      assert.match(call.id, /^call_/);
    }
  },

  async langchainWithStructuredOutput() {
    const sent = [];
    const model = new ChatOpenAI({
      model: 'default', apiKey: 'not-needed', temperature: 0, maxTokens: maxTokens, maxRetries: 0,
      configuration: {
        baseURL: `${base}/v1`,
        fetch: async (url, init) => {
          sent.push(init?.body ? JSON.parse(init.body) : null);
          return fetch(url, init);
        },
      },
    });
    const result = await model.withStructuredOutput(weatherParameters, { name: 'get_weather' }).invoke('Weather in Paris?');
    checkArguments('get_weather', result);
    // LangChain asks for the structure either as a forced tool call or as response_format.
    const body = sent.at(-1);
    assert.ok(body.tools?.length === 1 || body.response_format?.type === 'json_schema', JSON.stringify(body));
  },
};

let failed = 0;
for (const [name, check] of Object.entries(checks)) {
  try {
    await check();
    console.log(`ok   ${name}`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${name}: ${e?.stack ?? e}`);
  }
}
process.exit(failed ? 1 : 0);
