import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { enclosingBlock } from '../../src/blocks';

const lines = (text: string): string[] => text.split('\n');
/** The 0-based line of the first line holding `marker`. */
const lineOf = (src: string[], marker: string): number => {
  const at = src.findIndex((l) => l.includes(marker));
  assert.ok(at >= 0, `no line holds ${marker}`);
  return at;
};

const PY = lines(`import re

class TextWrapper:
    """Wrap text."""

    width = 70

    @property
    def chunks(self):
        return []

    def _split(self, text):
        if self.break_on_hyphens:
            chunks = self.wordsep_re.split(text)

        else:
            chunks = self.wordsep_simple_re.split(text)
        return [c for c in chunks if c]

    async def fetch(
        self,
        url,
    ):
        await run(url)


def wrap(text, width=70, **kwargs):
    w = TextWrapper(width=width, **kwargs)
    return w.wrap(text)

if __name__ == "__main__":
    print(wrap("x"))
`);

describe('enclosingBlock by indentation', () => {
  it('finds the method around a line deep inside it, blank lines included', () => {
    const block = enclosingBlock(PY, lineOf(PY, 'wordsep_simple_re'), 'python');
    assert.deepEqual(block, { startLine: lineOf(PY, 'def _split'), endLine: lineOf(PY, 'return [c for c'), name: '_split', kind: 'Method' });
    // the blank line inside the if/else belongs to the method
    assert.equal(enclosingBlock(PY, lineOf(PY, 'wordsep_re.split') + 1, 'python')?.name, '_split');
  });
  it('takes decorators along, and the header line itself counts as inside', () => {
    const block = enclosingBlock(PY, lineOf(PY, 'def chunks'), 'python');
    assert.deepEqual(block, { startLine: lineOf(PY, '@property'), endLine: lineOf(PY, 'return []'), name: 'chunks', kind: 'Method' });
  });
  it('follows a signature over several lines', () => {
    const block = enclosingBlock(PY, lineOf(PY, 'await run'), 'python');
    assert.deepEqual(block, { startLine: lineOf(PY, 'async def fetch'), endLine: lineOf(PY, 'await run'), name: 'fetch', kind: 'Method' });
  });
  it('finds a top-level function and a class', () => {
    assert.deepEqual(enclosingBlock(PY, lineOf(PY, 'w = TextWrapper'), 'python'), {
      startLine: lineOf(PY, 'def wrap'),
      endLine: lineOf(PY, 'return w.wrap'),
      name: 'wrap',
      kind: 'Function',
    });
    const cls = enclosingBlock(PY, lineOf(PY, 'width = 70'), 'python');
    assert.deepEqual([cls?.name, cls?.kind, cls?.startLine, cls?.endLine], ['TextWrapper', 'Class', lineOf(PY, 'class TextWrapper'), lineOf(PY, 'await run')]);
  });
  it('falls back to an unnamed block, and finds nothing at the top level', () => {
    const main = enclosingBlock(PY, lineOf(PY, 'print(wrap'), 'python');
    assert.deepEqual(main, { startLine: lineOf(PY, '__main__'), endLine: lineOf(PY, 'print(wrap'), name: 'if __name__ == "__main__"', kind: 'Block' });
    assert.equal(enclosingBlock(PY, lineOf(PY, 'import re'), 'python'), undefined);
    // a blank line between two top-level definitions is in neither
    assert.equal(enclosingBlock(PY, lineOf(PY, 'def wrap') - 1, 'python'), undefined);
  });
});

const TS = lines(`import x from 'y';

export class Budget {
  private used = 0;

  @logged
  spend(tokens: number): boolean {
    if (tokens > this.left) {
      return false; // "}" in a comment and a string: '}'
    }
    this.used += tokens;
    return true;
  }
}

const fits = (a: number, b: number) => {
  return a <= b;
};

function render(
  items: string[],
  width: number,
): string {
  const s = \`\${items.join('{')}\`;
  return s;
}
`);

describe('enclosingBlock by braces', () => {
  it('finds the method, not the if inside it, with its decorator', () => {
    assert.deepEqual(enclosingBlock(TS, lineOf(TS, 'return false'), 'typescript'), {
      startLine: lineOf(TS, '@logged'),
      endLine: lineOf(TS, 'return true') + 1,
      name: 'spend',
      kind: 'Method',
    });
  });
  it('finds an arrow function assigned to a name', () => {
    assert.deepEqual(enclosingBlock(TS, lineOf(TS, 'return a <= b'), 'typescript'), {
      startLine: lineOf(TS, 'const fits'),
      endLine: lineOf(TS, 'return a <= b') + 1,
      name: 'fits',
      kind: 'Function',
    });
  });
  it('follows a signature over several lines, and skips braces in strings and templates', () => {
    assert.deepEqual(enclosingBlock(TS, lineOf(TS, 'return s;'), 'typescript'), {
      startLine: lineOf(TS, 'function render'),
      endLine: lineOf(TS, 'return s;') + 1,
      name: 'render',
      kind: 'Function',
    });
  });
  it('finds the class from a field, and nothing outside', () => {
    assert.equal(enclosingBlock(TS, lineOf(TS, 'private used'), 'typescript')?.name, 'Budget');
    assert.equal(enclosingBlock(TS, lineOf(TS, 'import x'), 'typescript'), undefined);
  });
  it('reads C, Go and Rust declarations', () => {
    const c = lines('static int\ncount_words(const char *s)\n{\n    int n = 0;\n    return n;\n}');
    assert.deepEqual(enclosingBlock(c, 3, 'c'), { startLine: 1, endLine: 5, name: 'count_words', kind: 'Function' });
    const go = lines('func (w *Window) Add(item Item) error {\n\tw.items = append(w.items, item)\n\treturn nil\n}');
    assert.equal(enclosingBlock(go, 1, 'go')?.name, 'Add');
    const rust = lines("impl Window {\n    fn evict<'a>(&'a mut self) -> Option<Item> {\n        self.items.pop()\n    }\n}");
    assert.deepEqual(enclosingBlock(rust, 2, 'rust'), { startLine: 1, endLine: 3, name: 'evict', kind: 'Method' });
  });
  it('falls back to the innermost block when nothing is named', () => {
    const js = lines('if (ready) {\n  go();\n}');
    assert.deepEqual(enclosingBlock(js, 1, 'javascript'), { startLine: 0, endLine: 2, name: 'if (ready)', kind: 'Block' });
  });
});
