// Checks shared by the structured-output client tests: the small person schema, a
// validator for it, and a JSON-prefix checker for outputs cut by max_tokens.

// The schema the tests ask for (properties deliberately not in alphabetical order: the engine
// must keep the schema's order).
export const personSchema = {
  type: 'object',
  properties: {
    name: { type: 'string', maxLength: 8 },
    age: { type: 'integer', minimum: 0, maximum: 120 },
  },
  required: ['name', 'age'],
  additionalProperties: false,
};

// Throws unless `value` is an instance of personSchema.
export function checkPerson(value) {
  const where = JSON.stringify(value);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error(`not an object: ${where}`);
  const keys = Object.keys(value);
  if (keys.length !== 2 || !('name' in value) || !('age' in value)) throw new Error(`keys ${keys}: ${where}`);
  if (typeof value.name !== 'string') throw new Error(`name is not a string: ${where}`);
  if ([...value.name].length > 8) throw new Error(`name longer than 8 code points: ${where}`);
  if (!Number.isInteger(value.age) || value.age < 0 || value.age > 120) throw new Error(`age not in [0, 120]: ${where}`);
}

// 'complete' when `text` is one JSON value (surrounding whitespace allowed), 'prefix' when it is
// a proper prefix of one, 'invalid' otherwise. A recursive-descent parser that reports running
// out of input apart from meeting a wrong character.
export function jsonState(text) {
  const END = Symbol('end');
  let i = 0;
  const peek = () => {
    if (i >= text.length) throw END;
    return text[i];
  };
  const bad = () => {
    throw new SyntaxError(`unexpected ${JSON.stringify(text[i])} at ${i}`);
  };
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i])) i += 1;
  };
  const literal = (word) => {
    for (const ch of word) {
      if (peek() !== ch) bad();
      i += 1;
    }
  };
  const string = () => {
    if (peek() !== '"') bad();
    i += 1;
    for (;;) {
      const ch = peek();
      i += 1;
      if (ch === '"') return;
      if (ch === '\\') {
        const e = peek();
        i += 1;
        if (e === 'u') {
          for (let k = 0; k < 4; k += 1) {
            if (!/[0-9a-fA-F]/.test(peek())) bad();
            i += 1;
          }
        } else if (!'"\\/bfnrt'.includes(e)) {
          i -= 1;
          bad();
        }
      } else if (ch < ' ') {
        i -= 1;
        bad();
      }
    }
  };
  const digits = () => {
    if (!/[0-9]/.test(peek())) bad();
    while (i < text.length && /[0-9]/.test(text[i])) i += 1;
  };
  const number = () => {
    if (peek() === '-') i += 1;
    if (peek() === '0') i += 1;
    else digits();
    if (i < text.length && text[i] === '.') {
      i += 1;
      digits();
    }
    if (i < text.length && (text[i] === 'e' || text[i] === 'E')) {
      i += 1;
      if (peek() === '+' || peek() === '-') i += 1;
      digits();
    }
  };
  const value = () => {
    ws();
    const ch = peek();
    if (ch === '{') {
      i += 1;
      ws();
      if (peek() === '}') {
        i += 1;
        return;
      }
      for (;;) {
        ws();
        string();
        ws();
        if (peek() !== ':') bad();
        i += 1;
        value();
        ws();
        if (peek() === '}') {
          i += 1;
          return;
        }
        if (peek() !== ',') bad();
        i += 1;
      }
    } else if (ch === '[') {
      i += 1;
      ws();
      if (peek() === ']') {
        i += 1;
        return;
      }
      for (;;) {
        value();
        ws();
        if (peek() === ']') {
          i += 1;
          return;
        }
        if (peek() !== ',') bad();
        i += 1;
      }
    } else if (ch === '"') {
      string();
    } else if (ch === 't') {
      literal('true');
    } else if (ch === 'f') {
      literal('false');
    } else if (ch === 'n') {
      literal('null');
    } else {
      number();
    }
  };
  try {
    value();
    ws();
    return i === text.length ? 'complete' : 'invalid';
  } catch (e) {
    if (e === END) return 'prefix';
    return 'invalid';
  }
}
