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
  /** `contextls.item`, `contextls.item.pinned`, then `.file` if it comes from a file,
   * `.stale` if it is, and `.outline` (shown as its outline) or `.outlinable` (a whole file or
   * class that can be): selects the row's actions (package.json). */
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

/** The kinds of definition that hold others, which an outline can show. */
const CONTAINERS = new Set(['class', 'struct', 'interface', 'enum', 'trait', 'impl', 'module', 'namespace', 'union']);

/** How an item is shown: whole, as its outline, a map of the folder, or one definition by its name. */
export type ViewName = 'whole' | 'outline' | 'map' | 'definition';

export function viewOf(item: Pick<ContextItem, 'view' | 'metadata'>): ViewName {
  if (item.view === 'outline' || item.view === 'map') return item.view;
  return typeof item.metadata.symbol === 'string' ? 'definition' : 'whole';
}

const VIEW_NOTES: Record<ViewName, string | undefined> = {
  whole: undefined,
  outline: 'Shown as its outline: signatures, no bodies (Show Whole brings them back).',
  map: 'A map of the folder: its definitions, best first, each as the line that names it.',
  definition: 'A definition kept by its name: it follows the name when code moves.',
};

function outlinable(item: ContextItem): boolean {
  if (item.view !== 'whole') return false;
  if (item.kind === 'file') return true;
  return item.kind === 'code' && typeof item.metadata.symbolKind === 'string' && CONTAINERS.has(item.metadata.symbolKind);
}

export function rowOf(item: ContextItem): ItemRow {
  const view = viewOf(item);
  const markers = [`${formatCount(item.tokens)} tok`];
  if (view !== 'whole') markers.push(view);
  if (item.pinned) markers.push('pinned');
  if (item.stale) markers.push('stale');
  const span = lineSpanOf(item);
  const file = fileOf(item);
  const tooltip = [
    `${item.id} · ${item.kind} · ${item.tokens.toLocaleString('en-US')} tokens`,
    item.pinned ? 'Pinned: never evicted.' : undefined,
    item.stale ? 'Stale: its text changed since it was added.' : undefined,
    VIEW_NOTES[view],
  ]
    .filter((l) => l !== undefined)
    .join('\n');
  return {
    id: item.id,
    label: item.label,
    description: markers.join(' · '),
    icon: item.pinned ? 'pinned' : iconOf(item),
    contextValue:
      (item.pinned ? 'contextls.item.pinned' : 'contextls.item') +
      (file?.startsWith('file:') ? '.file' : '') +
      (item.stale ? '.stale' : '') +
      (item.view === 'outline' ? '.outline' : outlinable(item) ? '.outlinable' : ''),
    tooltip,
    accessibleLabel: [
      item.label,
      item.kind,
      view === 'whole' ? '' : view === 'outline' ? 'as its outline' : view,
      `${item.tokens.toLocaleString('en-US')} tokens`,
      item.pinned ? 'pinned' : '',
      item.stale ? 'stale: its text changed' : '',
    ]
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
