// A change of window settings against the contract: what it would evict is worked out before it is
// sent, oldest unpinned first, and it asks first only past the bulk add's threshold.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { WindowSettings } from '../../src/generated/protocol';
import { budgetUnder, changeWords, evictedToFit, settingsPlan, settingsQuestion } from '../../src/settingsPlan';
import { item, status } from './fixtures';

const settings = (overrides: Partial<WindowSettings> = {}): WindowSettings => ({
  maxItems: 50,
  maxTokens: 30_000,
  model: '',
  encoding: 'o200k_base',
  evictionPolicy: 'fifo',
  maxFileBytes: 1_000_000,
  archiveMaxItems: 10_000,
  archiveMaxBytes: 0,
  archiveMaxAgeDays: 0,
  budgetPolicy: 'fixed',
  task: 'general',
  budgetCeiling: 0,
  compaction: 'off',
  mapTokens: 1024,
  renderOrder: 'stable',
  ...overrides,
});

// Five items, oldest first; the second is pinned.
const window = [
  item({ id: 'ctx-1', label: 'a.py', tokens: 1000, timestamp: 1 }),
  item({ id: 'ctx-2', label: 'b.py', tokens: 900, timestamp: 2, pinned: true }),
  item({ id: 'ctx-3', label: 'c.py', tokens: 800, timestamp: 3 }),
  item({ id: 'ctx-4', label: 'd.py', tokens: 600, timestamp: 4 }),
  item({ id: 'ctx-5', label: 'e.py', tokens: 353, timestamp: 5 }),
];

describe('evictedToFit', () => {
  it('takes the oldest unpinned items until the window is within both limits', () => {
    assert.deepEqual(evictedToFit(window, { maxItems: 50, budget: 3000 }).map((i) => i.id), ['ctx-1']);
    assert.deepEqual(evictedToFit(window, { maxItems: 3, budget: 30_000 }).map((i) => i.id), ['ctx-1', 'ctx-3']);
    assert.deepEqual(evictedToFit(window, { maxItems: 50, budget: 3 }).map((i) => i.id), ['ctx-1', 'ctx-3', 'ctx-4', 'ctx-5']);
    assert.deepEqual(evictedToFit(window, { maxItems: 50, budget: 30_000 }), []);
  });
});

describe('settingsPlan', () => {
  it('asks before maxTokens 3 (every unpinned item would go), in the bulk add\'s words', () => {
    const plan = settingsPlan(window, status(), settings({ maxTokens: 3 }));
    assert.equal(plan.asks, true);
    assert.equal(plan.evicted.length, 4);
    assert.equal(
      settingsQuestion(plan, changeWords({ maxTokens: 3 }, [])),
      "Setting maxTokens to 3 would evict 4 of the window's 5 items (2,753 tokens), more than half of it.",
    );
  });
  it('slides without asking when it evicts half or less (one item of five, under half the tokens)', () => {
    const plan = settingsPlan(window, status(), settings({ maxTokens: 3000 }));
    assert.deepEqual([plan.asks, plan.evicted.map((i) => i.id)], [false, ['ctx-1']]);
  });
  it('asks by tokens too: two items of five holding more than half of them', () => {
    const plan = settingsPlan(window, status(), settings({ maxTokens: 1700 }));
    assert.deepEqual([plan.asks, plan.evicted.map((i) => i.id)], [true, ['ctx-1', 'ctx-3', 'ctx-4']]);
  });
  it('reads an adaptive budget as the server steers it, under its ceiling', () => {
    assert.equal(budgetUnder(settings({ maxTokens: 8000 }), 0.5), 8000);
    assert.equal(budgetUnder(settings({ maxTokens: 8000, budgetPolicy: 'adaptive', task: 'debugging' }), 0.5), 28_000);
    assert.equal(budgetUnder(settings({ maxTokens: 8000, budgetPolicy: 'adaptive', task: 'debugging', budgetCeiling: 12_000 }), 0.5), 12_000);
    assert.equal(budgetUnder(settings({ maxTokens: 8000, budgetPolicy: 'adaptive' }), 0), 4000);
  });
});

describe('changeWords', () => {
  it('names each key and its value, resets as going back to the default', () => {
    assert.equal(changeWords({ maxTokens: 30_000 }, []), 'maxTokens to 30,000');
    assert.equal(changeWords({ maxTokens: 3, maxItems: 2 }, ['task']), 'maxTokens to 3, maxItems to 2 and task back to its default');
    // the Settings UI removes a value typed equal to the default: it is said as typed
    assert.equal(changeWords({}, ['maxTokens'], () => 8000), 'maxTokens to 8,000 (its default)');
    // an empty default (the model) is no value to name
    assert.equal(changeWords({}, ['model'], () => ''), 'model back to its default');
  });
});
