import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  adaptiveReason,
  archiveReason,
  errorName,
  escapeMarkdown,
  expandHome,
  evictionMessage,
  formatCount,
  isWarning,
  splitCommand,
  statusAccessibilityLabel,
  statusText,
  statusTooltip,
  timeAgo,
} from '../../src/format';
import { status } from './fixtures';

describe('formatCount', () => {
  it('keeps small numbers whole and shortens thousands and millions', () => {
    assert.deepEqual(
      [0, 7, 999, 1000, 3200, 8000, 12_345, 99_960, 150_499, 999_499, 999_500, 1_000_000, 2_500_000].map(formatCount),
      ['0', '7', '999', '1k', '3.2k', '8k', '12.3k', '100k', '150k', '999k', '1M', '1M', '2.5M'],
    );
  });
});

describe('statusText', () => {
  it('shows tokens of budget and items of the limit, with their units', () => {
    assert.equal(statusText(status()), '$(library) 3.2k/8k gpt-4o tokens · 12/50 items');
    assert.equal(
      statusText(status({ tokens: 18, maxTokens: 441, budget: 441, itemCount: 1, maxItems: 5 })),
      '$(library) 18/441 gpt-4o tokens · 1/5 items',
    );
  });
  it('shows the adaptive budget, not maxTokens', () => {
    const adaptive = status({ budgetPolicy: 'adaptive', task: 'debugging', complexity: 0.72, budget: 14_000, maxTokens: 8000 });
    assert.equal(statusText(adaptive), '$(library) 3.2k/14k gpt-4o tokens · 12/50 items');
  });
  it('falls back to maxTokens when the server sends no budget', () => {
    assert.equal(statusText(status({ budget: 0, maxTokens: 4000 })), '$(library) 3.2k/4k gpt-4o tokens · 12/50 items');
  });
});

describe('statusAccessibilityLabel', () => {
  it('says the budget in words, without markdown', () => {
    const label = statusAccessibilityLabel(
      status({
        tokens: 1400,
        budget: 4000,
        maxTokens: 4000,
        percent: 35,
        itemCount: 3,
        staleCount: 1,
        nextEviction: { id: 'ctx-2', kind: 'code', label: 'textwrap.py:373-384', tokens: 10, pinned: false, view: 'whole' },
      }),
    );
    assert.equal(label, 'contextls: 1,400 of 4,000 gpt-4o tokens, exact (35 %), 3 of 50 items, 1 stale. Next to be evicted: textwrap.py:373-384');
    assert.doesNotMatch(label, /[*\\]/);
  });
});

describe('adaptiveReason', () => {
  it('says why the budget is what it is under the adaptive policy', () => {
    const adaptive = status({ budgetPolicy: 'adaptive', task: 'debugging', complexity: 0.72, budget: 14_000, maxTokens: 8000 });
    assert.equal(adaptiveReason(adaptive), 'adaptive: debugging, complexity 0.72 → 14.0k of base 8k');
    // markdown-escaped in the tooltip, drawn as written
    assert.match(statusTooltip(adaptive), /adaptive: debugging, complexity 0\\\.72 → 14\\\.0k of base 8k/);
    assert.equal(adaptiveReason(status({ task: 'complex_analysis', budgetPolicy: 'adaptive', budget: 4000, complexity: 0 })), 'adaptive: complex analysis, complexity 0.00 → 4.0k of base 8k');
  });
  it('says nothing under the fixed policy', () => {
    assert.equal(adaptiveReason(status()), undefined);
    assert.doesNotMatch(statusTooltip(status()), /adaptive/);
  });
});

describe('statusTooltip', () => {
  it('says what the window holds that seems to be a secret', () => {
    const warned = status({ warnings: ['settings.txt seems to contain an AWS secret access key'] });
    assert.match(statusTooltip(warned), /Warnings:[\s\S]*settings\\\.txt seems to contain an AWS secret access key/);
    assert.doesNotMatch(statusTooltip(status()), /Warnings/);
  });
  it('says whose tokens the budget counts, and whether they are exact', () => {
    const gemini = status({ model: 'gemini-2.5', countExact: false, countLabel: 'estimate (o200k x 1.17, within 7% on 9 files in 10, at most 11%)' });
    assert.match(statusTooltip(gemini), /Tokens of gemini\\-2\\\.5: estimate \\\(o200k x 1\\\.17/);
    assert.equal(statusText(gemini), '$(library) ~3.2k/8k gemini-2.5 tokens · 12/50 items');
    assert.match(statusAccessibilityLabel(gemini), /of 8,000 gemini-2\.5 tokens, estimated/);
    assert.match(statusTooltip(status()), /Tokens of gpt\\-4o: exact/);
  });
});

describe('archiveReason and timeAgo', () => {
  it('say why and when an item left, in words', () => {
    assert.equal(archiveReason('maxTokens'), 'evicted at the token budget');
    assert.equal(archiveReason('maxItems'), 'evicted at the item limit');
    assert.equal(archiveReason('budget'), 'evicted when the adaptive budget shrank');
    assert.equal(archiveReason('removed'), 'removed by hand');
    assert.equal(archiveReason('cleared'), 'cleared with the window');
    assert.equal(archiveReason('somethingNew'), 'somethingNew');
    const now = 1_000_000_000;
    assert.deepEqual(
      [now - 10_000, now - 5 * 60_000, now - 3 * 3_600_000, now - 3 * 86_400_000].map((at) => timeAgo(at, now)),
      ['just now', '5 min ago', '3 h ago', '3 days ago'],
    );
  });
});

describe('isWarning', () => {
  it('warns from 90 % of the token budget on', () => {
    assert.equal(isWarning(status({ percent: 89.9 })), false);
    assert.equal(isWarning(status({ percent: 90 })), true);
    assert.equal(isWarning(status({ percent: 100 })), true);
  });
});

describe('statusTooltip', () => {
  it('names the budget, the next eviction and the last evicted items', () => {
    const text = statusTooltip(
      status({
        nextEviction: { id: 'ctx-2', kind: 'code', label: 'src/a_b.py:1-9', tokens: 1234, pinned: false, view: 'whole' },
        lastEvicted: [{ id: 'ctx-1', kind: 'file', label: 'README.md', tokens: 40, pinned: false, view: 'whole' }],
      }),
      'proj',
    );
    assert.match(text, /Budget: 3,200 \/ 8,000 tokens \(40 %\) · 12 \/ 50 items/);
    assert.match(text, /Next to be evicted: src\/a\\_b\\\.py:1\\-9 \(1,234 tokens\)/);
    assert.match(text, /Last evicted:\n\n- README\\\.md \(40 tokens\)/);
    assert.match(text, /^\*\*contextls\*\* · proj/);
  });
  it('says when nothing can be evicted and lists no history when there is none', () => {
    const text = statusTooltip(status());
    assert.match(text, /Next to be evicted: nothing/);
    assert.doesNotMatch(text, /Last evicted/);
  });
});

describe('escapeMarkdown', () => {
  it('escapes what markdown would interpret', () => {
    assert.equal(escapeMarkdown('a*b_[c](d)`e`'), 'a\\*b\\_\\[c\\]\\(d\\)\\`e\\`');
  });
});

describe('evictionMessage', () => {
  it('names the evicted items and the reason', () => {
    assert.equal(
      evictionMessage([{ label: 'a.py:1-2', tokens: 18 }], 'maxTokens'),
      'contextls evicted 1 item to stay within the token budget: a.py:1-2 (18 tokens).',
    );
    assert.match(evictionMessage([{ label: 'a.py:1-2', tokens: 18 }], 'budget'), /within the adaptive budget, which shrank: a\.py/);
  });
  it('shortens long lists', () => {
    const items = Array.from({ length: 7 }, (_, i) => ({ label: `f${i}`, tokens: 1000 }));
    assert.equal(
      evictionMessage(items, 'maxItems', 2),
      'contextls evicted 7 items to stay within the item limit: f0 (1,000 tokens), f1 (1,000 tokens) and 5 more.',
    );
  });
});

describe('errorName', () => {
  it('maps the schema codes to their names', () => {
    assert.equal(errorName(-32602), 'INVALID_PARAMS');
    assert.equal(errorName(-31006), 'ITEM_TOO_LARGE');
    assert.equal(errorName(-1), undefined);
  });
});

describe('splitCommand', () => {
  it('splits words and honours quotes and escapes', () => {
    assert.deepEqual(splitCommand('contextls serve'), ['contextls', 'serve']);
    assert.deepEqual(splitCommand('  "/my dir/contextls"   serve '), ['/my dir/contextls', 'serve']);
    assert.deepEqual(splitCommand("py -m 'contextls' a\\ b \"\""), ['py', '-m', 'contextls', 'a b', '']);
    assert.deepEqual(splitCommand(''), []);
  });
  it('refuses an unclosed quote', () => {
    assert.throws(() => splitCommand('"contextls serve'), /unclosed/);
  });
});

describe('expandHome', () => {
  it('expands a leading ~ only', () => {
    assert.equal(expandHome('~/venv/bin/contextls', '/home/me/'), '/home/me/venv/bin/contextls');
    assert.equal(expandHome('~', '/home/me'), '/home/me');
    assert.equal(expandHome('/opt/~/contextls', '/home/me'), '/opt/~/contextls');
    assert.equal(expandHome('contextls', '/home/me'), 'contextls');
  });
});
