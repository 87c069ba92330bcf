// Pure model of the items view: what each row shows and does, independent of `vscode`.
import type { ContextItem } from './generated/protocol';
import { formatCount } from './format';
import { fileOf, lineSpanOf, type LineSpan } from './ranges';

export interface ItemRow {
  readonly id: string;
  readonly label: string;
  /** Tokens, then the pinned and stale markers. */
  readonly description: string;
  /** A codicon id (ThemeIcon). */
  readonly icon: string;
  /** `contextls.item`, `contextls.item.pinned`, then `.file` if it comes from a file and
   * `.stale` if it is: selects the row's actions (package.json). */
  readonly contextValue: string;
  readonly tooltip: string;
  /** What a screen reader says: the label, the kind, the tokens, the markers, in words. */
  readonly accessibleLabel: string;
  /** Where a click goes: a line span, a whole file, or nothing (text items open as a document). */
  readonly target: { readonly span: LineSpan } | { readonly file: string } | undefined;
}

export interface ItemGroup {
  readonly label: string;
  readonly rows: readonly ItemRow[];
}

const KIND_ICONS: Record<ContextItem['kind'], string> = {
  code: 'code',
  text: 'note',
  file: 'file',
  'repl-history': 'terminal',
  error: 'error',
  custom: 'symbol-misc',
};

export function iconOf(item: Pick<ContextItem, 'kind' | 'metadata'>): string {
  if (item.kind === 'code' && typeof item.metadata.symbol === 'string') return 'symbol-method';
  return KIND_ICONS[item.kind];
}

export function rowOf(item: ContextItem): ItemRow {
  const markers = [`${formatCount(item.tokens)} tok`];
  if (item.pinned) markers.push('pinned');
  if (item.stale) markers.push('stale');
  const span = lineSpanOf(item);
  const file = fileOf(item);
  const tooltip = [
    `${item.id} · ${item.kind} · ${item.tokens.toLocaleString('en-US')} tokens`,
    item.pinned ? 'Pinned: never evicted.' : undefined,
    item.stale ? 'Stale: its text changed since it was added.' : undefined,
  ]
    .filter((l) => l !== undefined)
    .join('\n');
  return {
    id: item.id,
    label: item.label,
    description: markers.join(' · '),
    icon: item.pinned ? 'pinned' : iconOf(item),
    contextValue: (item.pinned ? 'contextls.item.pinned' : 'contextls.item') + (file?.startsWith('file:') ? '.file' : '') + (item.stale ? '.stale' : ''),
    tooltip,
    accessibleLabel: [item.label, item.kind, `${item.tokens.toLocaleString('en-US')} tokens`, item.pinned ? 'pinned' : '', item.stale ? 'stale: its text changed' : '']
      .filter(Boolean)
      .join(', '),
    target: span ? { span } : file ? { file } : undefined,
  };
}

/**
 * The view's rows: newest first, pinned items grouped above the others when there are any
 * (the server lists items chronologically, oldest first).
 */
export function groupsOf(items: readonly ContextItem[]): ItemGroup[] {
  const newestFirst = [...items].sort((a, b) => b.timestamp - a.timestamp || idNumber(b.id) - idNumber(a.id));
  const pinned = newestFirst.filter((i) => i.pinned).map(rowOf);
  const others = newestFirst.filter((i) => !i.pinned).map(rowOf);
  if (pinned.length === 0) return [{ label: '', rows: others }];
  return [
    { label: `Pinned (${pinned.length})`, rows: pinned },
    { label: `Window (${others.length})`, rows: others },
  ];
}

function idNumber(id: string): number {
  const n = Number(/^ctx-(\d+)$/.exec(id)?.[1]);
  return Number.isFinite(n) ? n : 0;
}
