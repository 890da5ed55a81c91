// The Vercel AI SDK's generateObject with a zod schema (npm: ai, @ai-sdk/openai, zod) against a
// running radixserve pipeline (stories260K), through the OpenAI provider's chat model: the SDK
// sends response_format json_schema (its structured-outputs mode) and parses and validates the
// answer against the zod schema itself.
// usage: NPM_DIR=<dir with node_modules/{ai,@ai-sdk/openai,zod}> node ai_sdk_generate_object_test.mjs <base url>
// Exits 0 when every check passes; otherwise prints the failed checks and exits 1.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

import { checkPerson } from './json_check.mjs';

const base = process.argv[2];
if (!base || !process.env.NPM_DIR) {
  console.error('usage: NPM_DIR=<dir> node ai_sdk_generate_object_test.mjs <base url>');
  process.exit(2);
}
const require = createRequire(`${process.env.NPM_DIR}/package.json`);
const { generateObject } = require('ai');
const { createOpenAI } = require('@ai-sdk/openai');
const { z } = require('zod');

// Every request body the SDK sends, to check the mode it chose.
const sent = [];
const provider = createOpenAI({
  baseURL: `${base}/v1`,
  apiKey: 'not-needed',
  fetch: async (url, init) => {
    sent.push({ url: String(url), body: init?.body ? JSON.parse(init.body) : null });
    return fetch(url, init);
  },
});
// .chat(): /v1/chat/completions (the provider's default model is the Responses API).
const model = provider.chat('default');

// The small schema, written in zod.
const person = z.object({
  name: z.string().max(8),
  age: z.number().int().min(0).max(120),
});

const checks = {
  async generateObjectGreedy() {
    sent.length = 0;
    const result = await generateObject({
      model, schema: person, schemaName: 'person', prompt: 'Tell me about a girl and how old she is.',
      temperature: 0, maxOutputTokens: 200, maxRetries: 0,
    });
    checkPerson(result.object);
    assert.equal(result.finishReason, 'stop');
    assert.equal(sent.length, 1, JSON.stringify(sent.map((s) => s.url)));
    assert.match(sent[0].url, /\/v1\/chat\/completions$/);
    const format = sent[0].body.response_format;
    assert.equal(format?.type, 'json_schema', JSON.stringify(sent[0].body));
    assert.equal(format.json_schema.name, 'person');
    assert.deepEqual(Object.keys(format.json_schema.schema.properties), ['name', 'age']);
  },

  async generateObjectSampled() {
    for (const seed of [11, 12, 13]) {
      const result = await generateObject({
        model, schema: person, prompt: 'A story about a dog.', temperature: 1, seed, maxOutputTokens: 200, maxRetries: 0,
      });
      checkPerson(result.object);
      assert.equal(result.finishReason, 'stop');
    }
  },

  async generateObjectWithoutSchemaNameUsesTheDefault() {
    // The SDK names the schema "response" when the caller does not.
    sent.length = 0;
    const result = await generateObject({
      model, schema: person, prompt: 'Once upon a time', temperature: 0, maxOutputTokens: 200, maxRetries: 0,
    });
    checkPerson(result.object);
    assert.equal(sent[0].body.response_format.json_schema.name, 'response');
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
    if (e?.text !== undefined) console.log(`     model text: ${JSON.stringify(e.text)}`);
    if (e?.cause) console.log(`     cause: ${e.cause}`);
  }
}
process.exit(failed ? 1 : 0);
