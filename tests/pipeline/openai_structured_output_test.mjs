// Structured output through the official `openai` npm client (v4) against a running radixserve
// pipeline (stories260K): response_format json_schema and json_object, greedy and sampled,
// streamed and not, and the 400s a client gets for a bad schema or for tools.
// usage: OPENAI_NPM_DIR=<dir with node_modules/openai> node openai_structured_output_test.mjs <base url>
// Exits 0 when every check passes; otherwise prints the failed checks and exits 1.
//
// stories260K knows nothing of JSON: every valid output below is the grammar's doing. max_tokens
// leaves room to finish the small schema even in byte-fallback tokens (a name of 8 \uXXXX escapes
// is under 100 bytes in all).
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

import { checkPerson, jsonState, personSchema } from './json_check.mjs';

const base = process.argv[2];
if (!base || !process.env.OPENAI_NPM_DIR) {
  console.error('usage: OPENAI_NPM_DIR=<dir> node openai_structured_output_test.mjs <base url>');
  process.exit(2);
}
const require = createRequire(`${process.env.OPENAI_NPM_DIR}/package.json`);
const OpenAI = require('openai');

const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'not-needed', maxRetries: 0, timeout: 120_000 });
const personFormat = { type: 'json_schema', json_schema: { name: 'person', strict: true, schema: personSchema } };
const ask = [{ role: 'user', content: 'Tell me about a girl and how old she is.' }];
const maxTokens = 200;

// A finished answer must be a person; one cut by max_tokens would be a bug in the engine here.
function checkPersonChoice(text, finish) {
  assert.equal(finish, 'stop', `finish_reason ${finish} for ${JSON.stringify(text)}`);
  checkPerson(JSON.parse(text));
}

const checks = {
  async chatJsonSchemaGreedy() {
    const c = await client.chat.completions.create({
      model: 'default', temperature: 0, messages: ask, max_tokens: maxTokens, response_format: personFormat,
    });
    checkPersonChoice(c.choices[0].message.content, c.choices[0].finish_reason);
    // The engine keeps the schema's property order (name before age).
    assert.ok(c.choices[0].message.content.indexOf('"name"') < c.choices[0].message.content.indexOf('"age"'));
    assert.ok(c.usage.completion_tokens > 0 && c.usage.completion_tokens <= maxTokens, JSON.stringify(c.usage));
  },

  async chatJsonSchemaSampled() {
    // Temperature 1 draws tokens the model likes, not ones the grammar needs: the mask decides.
    for (const seed of [1, 2, 3]) {
      const c = await client.chat.completions.create({
        model: 'default', temperature: 1, seed, n: 2, messages: ask, max_tokens: maxTokens, response_format: personFormat,
      });
      assert.equal(c.choices.length, 2);
      for (const choice of c.choices) checkPersonChoice(choice.message.content, choice.finish_reason);
    }
  },

  async chatJsonSchemaStreamed() {
    const request = { model: 'default', temperature: 0, messages: ask, max_tokens: maxTokens, response_format: personFormat };
    const stream = await client.chat.completions.create({ ...request, stream: true });
    let text = '';
    let finish = null;
    for await (const chunk of stream) {
      for (const choice of chunk.choices) {
        if (choice.delta?.content) text += choice.delta.content;
        if (choice.finish_reason) finish = choice.finish_reason;
      }
    }
    checkPersonChoice(text, finish);
    const whole = await client.chat.completions.create(request);
    assert.equal(whole.choices[0].message.content, text, 'streamed and non-streamed outputs differ');
  },

  async completionJsonSchema() {
    // vLLM and SGLang accept response_format on /v1/completions too.
    const c = await client.completions.create({
      model: 'default', temperature: 0, prompt: 'Once upon a time', max_tokens: maxTokens, response_format: personFormat,
    });
    checkPersonChoice(c.choices[0].text, c.choices[0].finish_reason);
  },

  async chatJsonObject() {
    // Any JSON object: nothing bounds its length, so an answer cut by max_tokens must be a
    // proper prefix of an object and a finished one a whole object.
    for (const [temperature, seed] of [[0, undefined], [1, 7], [1, 8]]) {
      const c = await client.chat.completions.create({
        model: 'default', temperature, seed, messages: ask, max_tokens: 256, response_format: { type: 'json_object' },
      });
      const { content } = c.choices[0].message;
      const finish = c.choices[0].finish_reason;
      assert.ok(content.trimStart().startsWith('{'), `not an object: ${JSON.stringify(content)}`);
      if (finish === 'stop') {
        const value = JSON.parse(content);
        assert.ok(value !== null && typeof value === 'object' && !Array.isArray(value), content);
      } else {
        assert.equal(finish, 'length');
        assert.equal(jsonState(content), 'prefix', `cut output is not a JSON prefix: ${JSON.stringify(content)}`);
      }
    }
  },

  async badSchemaIsA400PointingIntoIt() {
    const schema = { type: 'object', properties: { name: { type: 'string', minLength: 5, maxLength: 2 } } };
    await assert.rejects(
      client.chat.completions.create({
        model: 'default', messages: ask, max_tokens: 8,
        response_format: { type: 'json_schema', json_schema: { name: 'bad', schema } },
      }),
      (e) => {
        assert.ok(e instanceof OpenAI.BadRequestError, String(e));
        assert.equal(e.status, 400);
        assert.ok(e.param?.startsWith('response_format.json_schema.schema/properties/name'), `param ${e.param}`);
        return true;
      },
    );
  },

  // stories260K carries no chat template: ChatML renders no tools, so tools are a 400 naming why.
  async toolsNeedATemplateWithACallSyntax() {
    await assert.rejects(
      client.chat.completions.create({
        model: 'default', messages: ask, max_tokens: 8, tool_choice: 'required',
        tools: [{ type: 'function', function: { name: 'get_age', parameters: { type: 'object', properties: {} } } }],
      }),
      (e) => {
        assert.ok(e instanceof OpenAI.BadRequestError, String(e));
        assert.equal(e.param, 'tools');
        assert.match(e.message, /writes no tool-call syntax radixserve knows/);
        return true;
      },
    );
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
