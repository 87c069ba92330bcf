import type { ContextItem, Status } from '../../src/generated/protocol';

export function status(overrides: Partial<Status> = {}): Status {
  return {
    workspace: 'file:///w',
    revision: 1,
    itemCount: 12,
    maxItems: 50,
    tokens: 3200,
    maxTokens: 8000,
    percent: 40,
    pinnedCount: 0,
    staleCount: 0,
    archivedCount: 0,
    evictedTotal: 0,
    encoding: 'o200k_base',
    evictionPolicy: 'fifo',
    model: 'gpt-4o',
    countExact: true,
    countLabel: 'exact',
    lastEvicted: [],
    nextEviction: null,
    archiveBytes: 0,
    prunedTotal: 0,
    lastPruned: null,
    semantic: null,
    budget: 8000,
    budgetPolicy: 'fixed',
    task: 'general',
    complexity: 0,
    warnings: [],
    outlinedCount: 0,
    mapCount: 0,
    cache: null,
    ...overrides,
  };
}

export function item(overrides: Partial<ContextItem> = {}): ContextItem {
  return {
    id: 'ctx-1',
    kind: 'code',
    content: 'x = 1\n',
    label: 'a.py:3-4',
    timestamp: 1000,
    tokens: 120,
    metadata: { uri: 'file:///w/a.py', path: 'a.py', startLine: 3, endLine: 4 },
    pinned: false,
    stale: false,
    view: 'whole',
    ...overrides,
  };
}
