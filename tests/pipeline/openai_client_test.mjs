// The official `openai` npm client (v4) against a running radixserve pipeline.
// usage: OPENAI_NPM_DIR=<dir with node_modules/openai> node openai_client_test.mjs <base url>
// Exits 0 when every check passes; otherwise prints the failed check and exits 1.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const base = process.argv[2];
if (!base || !process.env.OPENAI_NPM_DIR) {
  console.error('usage: OPENAI_NPM_DIR=<dir> node openai_client_test.mjs <base url>');
  process.exit(2);
}
const require = createRequire(`${process.env.OPENAI_NPM_DIR}/package.json`);
const OpenAI = require('openai');

const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'not-needed', maxRetries: 0, timeout: 60_000 });
const greedy = { model: 'default', temperature: 0 };

function checkUsage(usage, completionTokens) {
  assert.ok(usage, 'usage is present');
  assert.ok(usage.prompt_tokens > 0, `prompt_tokens ${usage.prompt_tokens}`);
  assert.equal(usage.completion_tokens, completionTokens);
  assert.equal(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens);
}

const checks = {
  async completion() {
    const c = await client.completions.create({ ...greedy, prompt: 'Once upon a time', max_tokens: 16, ignore_eos: true });
    assert.equal(c.object, 'text_completion');
    assert.match(c.id, /\S/);
    assert.equal(c.choices.length, 1);
    assert.equal(c.choices[0].index, 0);
    // stories260K's greedy continuation (see golden_stories260K.json).
    assert.ok(c.choices[0].text.startsWith(', there was a little girl named Lily.'), JSON.stringify(c.choices[0].text));
    assert.equal(c.choices[0].finish_reason, 'length');
    checkUsage(c.usage, 16);
    assert.equal(c.usage.prompt_tokens, 5);
  },

  async streamedChat() {
    const request = { ...greedy, messages: [{ role: 'user', content: 'Tell me a story about a dog.' }], max_tokens: 24 };
    const stream = await client.chat.completions.create({ ...request, stream: true, stream_options: { include_usage: true } });
    let text = '';
    let finish = null;
    let chunks = 0;
    let usage = null;
    for await (const chunk of stream) {
      chunks += 1;
      assert.equal(chunk.object, 'chat.completion.chunk');
      for (const choice of chunk.choices) {
        assert.equal(choice.index, 0);
        if (choice.delta?.content) text += choice.delta.content;
        if (choice.finish_reason) finish = choice.finish_reason;
      }
      if (chunk.usage) usage = chunk.usage;
    }
    assert.ok(chunks > 2, `only ${chunks} chunks`);
    assert.ok(text.length > 0, 'empty streamed text');
    assert.ok(finish === 'length' || finish === 'stop', `finish_reason ${finish}`);
    assert.ok(usage, 'no usage chunk despite include_usage');
    assert.ok(usage.completion_tokens > 0 && usage.completion_tokens <= 24, JSON.stringify(usage));
    const whole = await client.chat.completions.create(request);
    assert.equal(whole.object, 'chat.completion');
    assert.equal(whole.choices[0].message.role, 'assistant');
    assert.equal(whole.choices[0].message.content, text, 'streamed and non-streamed chat differ');
    assert.equal(whole.choices[0].finish_reason, finish);
    checkUsage(whole.usage, usage.completion_tokens);
  },

  async twoChoices() {
    const c = await client.completions.create({ ...greedy, prompt: 'The little dog', max_tokens: 8, ignore_eos: true, n: 2 });
    assert.equal(c.choices.length, 2);
    assert.deepEqual(c.choices.map((x) => x.index).sort(), [0, 1]);
    for (const choice of c.choices) {
      assert.ok(choice.text.length > 0, 'empty choice');
      assert.equal(choice.finish_reason, 'length');
    }
    assert.equal(c.choices[0].text, c.choices[1].text, 'greedy choices differ');
    checkUsage(c.usage, 16);  // both choices' tokens
    const chat = await client.chat.completions.create({ ...greedy, messages: [{ role: 'user', content: 'Hi' }], max_tokens: 8, n: 2 });
    assert.deepEqual(chat.choices.map((x) => x.index).sort(), [0, 1]);
    for (const choice of chat.choices) assert.ok(choice.message.content.length > 0);
  },

  async invalidRequestIsABadRequestError() {
    await assert.rejects(
      client.completions.create({ ...greedy, prompt: 'x', temperature: -1 }),
      (e) => e instanceof OpenAI.BadRequestError && e.status === 400 && /temperature/.test(e.message),
    );
  },

  async models() {
    const list = await client.models.list();
    assert.ok(list.data.some((m) => m.id === 'default'), JSON.stringify(list.data));
  },
};

let failed = 0;
for (const [name, check] of Object.entries(checks)) {
  try {
    await check();
    console.log(`ok   ${name}`);
  } catch (e) {
    failed += 1;
    console.log(`FAIL ${name}: ${e.stack ?? e}`);
  }
}
process.exit(failed ? 1 : 0);
