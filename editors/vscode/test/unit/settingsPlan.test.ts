// A change of window settings against the contract: what it would evict is the server's plan (a dry
// run, or NEEDS_FORCE's data past the bulk add's threshold), said in the bulk add's words.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ConfigureResult, ContextItem, WindowSettings } from '../../src/generated/protocol';
import { changeWords, plannedSettings, settingsPlanOf, settingsQuestion } from '../../src/settingsPlan';
import { item, status } from './fixtures';

const planned = (evicted: ContextItem[], held = window): ConfigureResult => ({
  settings: {} as WindowSettings,
  chosen: [],
  changed: ['maxTokens'],
  evicted,
  status: status({ itemCount: held.length, tokens: held.reduce((sum, i) => sum + i.tokens, 0) }),
  dryRun: true,
});

// Five items, oldest first; the second is pinned.
const window = [
  item({ id: 'ctx-1', label: 'a.py', tokens: 1000, timestamp: 1 }),
  item({ id: 'ctx-2', label: 'b.py', tokens: 900, timestamp: 2, pinned: true }),
  item({ id: 'ctx-3', label: 'c.py', tokens: 800, timestamp: 3 }),
  item({ id: 'ctx-4', label: 'd.py', tokens: 600, timestamp: 4 }),
  item({ id: 'ctx-5', label: 'e.py', tokens: 353, timestamp: 5 }),
];

describe('the server\'s plan of a change of settings', () => {
  it('asks with the server\'s plan, in the bulk add\'s words', () => {
    const refused = plannedSettings(planned(window.filter((i) => !i.pinned)));
    assert.ok(refused);
    const plan = settingsPlanOf(refused, true);
    assert.deepEqual(plan.held, { items: 5, tokens: 3653 });
    assert.equal(
      settingsQuestion(plan, changeWords({ maxTokens: 3 }, [])),
      "Setting maxTokens to 3 would evict 4 of the window's 5 items (2,753 tokens), more than half of it.",
    );
  });
  it('reads a NEEDS_FORCE data only when it is a planned change of settings', () => {
    assert.equal(plannedSettings({ items: [], evicted: [], tokens: 0, status: status() }), undefined);
    assert.equal(plannedSettings(undefined), undefined);
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
