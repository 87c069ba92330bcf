// The block that encloses a line, found from the text alone: what Add Symbol adds when no
// language extension provides document symbols (stock VS Code has none for Python, for one).
// Indentation languages go by indentation, the others by braces. Pure: lines in, lines out.

export type BlockKind = 'Class' | 'Function' | 'Method' | 'Block';

export interface Block {
  /** 0-based, inclusive. */
  readonly startLine: number;
  readonly endLine: number;
  /** The declared name, else the header's text. */
  readonly name: string;
  readonly kind: BlockKind;
}

const INDENT_LANGUAGES = new Set(['python', 'yaml', 'coffeescript', 'nim', 'pug', 'jade', 'sass', 'stylus', 'haml', 'slim', 'fsharp']);

/** The innermost named block (function, class) around `line`, else the innermost block. */
export function enclosingBlock(lines: readonly string[], line: number, languageId: string): Block | undefined {
  if (line < 0 || line >= lines.length) return undefined;
  if (INDENT_LANGUAGES.has(languageId)) return indentBlock(lines, line);
  return braceBlock(lines, line) ?? indentBlock(lines, line);
}

// ------------------------------------------------------------------ indentation

const isBlank = (text: string): boolean => text.trim() === '' || /^\s*#/.test(text);

function indentOf(text: string): number {
  let width = 0;
  for (const c of text) {
    if (c === ' ') width++;
    else if (c === '\t') width += 8 - (width % 8);
    else break;
  }
  return width;
}

const PY_DECLARATION = /^\s*(?:async\s+)?(def|class)\s+([A-Za-z_]\w*)/;

/** A block header of an indentation language: a declaration, or a line that ends with ':'. */
function headerOf(text: string): { name: string; kind: BlockKind } | undefined {
  const declared = PY_DECLARATION.exec(text);
  if (declared?.[1] && declared[2]) return { name: declared[2], kind: declared[1] === 'class' ? 'Class' : 'Function' };
  const code = text.replace(/\s+#.*$/, '').trimEnd();
  if (code.endsWith(':') && !/^\s*[-#]/.test(code)) return { name: code.trim().slice(0, -1).trim(), kind: 'Block' };
  return undefined;
}

/** The line whose indentation stands for `line`: itself, or the next non-blank one after a blank. */
function effectiveIndent(lines: readonly string[], line: number): number {
  for (let i = line; i < lines.length; i++) if (!isBlank(lines[i] ?? '')) return indentOf(lines[i] ?? '');
  for (let i = line - 1; i >= 0; i--) if (!isBlank(lines[i] ?? '')) return indentOf(lines[i] ?? '');
  return 0;
}

/** The line whose bracket the one closing at the start of `line` matches. */
function openerOf(lines: readonly string[], line: number): number {
  let depth = 0;
  for (let i = line; i >= 0; i--) {
    const text = lines[i] ?? '';
    depth += count(text, ')') + count(text, ']') - count(text, '(') - count(text, '[');
    if (depth <= 0) return i;
  }
  return line;
}

const count = (text: string, ch: string): number => text.split(ch).length - 1;

function indentBlock(lines: readonly string[], line: number): Block | undefined {
  // Headers around the line, innermost first: the line itself if it is one, then every line
  // above with less indentation than the lines between.
  const chain: { line: number; name: string; kind: BlockKind }[] = [];
  const own = headerOf(lines[line] ?? '');
  let indent = effectiveIndent(lines, line);
  if (own && !isBlank(lines[line] ?? '')) {
    chain.push({ line, ...own });
    indent = indentOf(lines[line] ?? '');
  }
  for (let i = line - 1; i >= 0 && indent > 0; i--) {
    let text = lines[i] ?? '';
    if (isBlank(text) || indentOf(text) >= indent) continue;
    // `):` closes a signature spread over lines: its header is the line that opened it
    if (/^\s*[)\]]/.test(text)) {
      i = openerOf(lines, i);
      text = lines[i] ?? '';
    }
    indent = indentOf(text);
    const header = headerOf(text);
    if (header) chain.push({ line: i, ...header });
  }
  const named = chain.find((h) => h.kind !== 'Block') ?? chain[0];
  if (!named) return undefined;
  const headerIndent = indentOf(lines[named.line] ?? '');
  let end = named.line;
  for (let i = named.line + 1; i < lines.length; i++) {
    const text = lines[i] ?? '';
    if (isBlank(text)) continue;
    // a multi-line signature's closing `):` sits at the header's indentation
    if (indentOf(text) <= headerIndent && !(i === end + 1 && /^\s*\)/.test(text))) break;
    end = i;
  }
  let start = named.line;
  while (start > 0 && /^\s*@/.test(lines[start - 1] ?? '') && indentOf(lines[start - 1] ?? '') === headerIndent) start--;
  const outerClass = named.kind === 'Function' && chain.slice(chain.indexOf(named) + 1).some((h) => h.kind === 'Class');
  return { startLine: start, endLine: end, name: named.name, kind: outerClass ? 'Method' : named.kind };
}

// ------------------------------------------------------------------ braces

interface BracePair {
  readonly open: { line: number; column: number };
  readonly closeLine: number;
}

/** Every `{ }` pair, skipping strings and comments (well enough for C-like languages). */
function bracePairs(lines: readonly string[]): BracePair[] {
  const pairs: BracePair[] = [];
  const stack: { line: number; column: number }[] = [];
  let inBlockComment = false;
  let inTemplate = false;
  for (let l = 0; l < lines.length; l++) {
    const text = lines[l] ?? '';
    for (let c = 0; c < text.length; c++) {
      const ch = text.charAt(c);
      const next = text.charAt(c + 1);
      if (inBlockComment) {
        if (ch === '*' && next === '/') {
          inBlockComment = false;
          c++;
        }
        continue;
      }
      if (inTemplate) {
        if (ch === '\\') c++;
        else if (ch === '`') inTemplate = false;
        continue;
      }
      if (ch === '/' && next === '/') break;
      if (ch === '/' && next === '*') {
        inBlockComment = true;
        c++;
      } else if (ch === '`') {
        inTemplate = true;
      } else if (ch === '"' || ch === "'") {
        // A quote without its closing one on this line is not a string (a Rust lifetime, an
        // apostrophe in a macro): leave it.
        let end = c + 1;
        while (end < text.length && text.charAt(end) !== ch) end += text.charAt(end) === '\\' ? 2 : 1;
        if (end < text.length) c = end;
      } else if (ch === '{') {
        stack.push({ line: l, column: c });
      } else if (ch === '}') {
        const open = stack.pop();
        if (open) pairs.push({ open, closeLine: l });
      }
    }
  }
  return pairs;
}

const CONTROL = /^(?:\}\s*)?(?:else\s+)?(if|for|foreach|while|switch|catch|with|do|try|else|finally|using|lock|synchronized|unsafe|loop|match|select|defer|go|return)\b/;
const CLASS_LIKE = /\b(class|struct|interface|enum|trait|impl|namespace|module|object|record|union|protocol|extension)\s+([A-Za-z_$][\w$]*)/;
const FUNCTION_KEYWORD = /\b(?:function\s*\*?|fn|func|fun|def|sub|proc)\s+(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*)/;
const ASSIGNED_FUNCTION = /([A-Za-z_$][\w$]*)\s*[:=]\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*(?::\s*[^=]+)?=>|[A-Za-z_$][\w$]*\s*=>)/;
const CALL_SHAPED = /([A-Za-z_$~][\w$]*(?:::[A-Za-z_$~][\w$]*)*)\s*(?:<[^()]*>)?\s*\([^;]*\)[^;()]*$/;

/** What a brace block's header declares. */
function braceHeader(header: string): { name: string; kind: BlockKind } {
  const text = header.trim();
  const summary = text.replace(/\s+/g, ' ').slice(0, 80) || '{ }';
  if (CONTROL.test(text)) return { name: summary, kind: 'Block' };
  const classLike = CLASS_LIKE.exec(text);
  if (classLike?.[2]) return { name: classLike[2], kind: 'Class' };
  const keyword = FUNCTION_KEYWORD.exec(text);
  if (keyword?.[1]) return { name: keyword[1], kind: 'Function' };
  const assigned = ASSIGNED_FUNCTION.exec(text);
  if (assigned?.[1]) return { name: assigned[1], kind: 'Function' };
  const call = CALL_SHAPED.exec(text);
  if (call?.[1]) return { name: call[1], kind: 'Function' };
  return { name: summary, kind: 'Block' };
}

function braceBlock(lines: readonly string[], line: number): Block | undefined {
  const around = bracePairs(lines)
    .map((pair) => {
      // The header is the text before `{`; a `{` on a line of its own belongs to the line above.
      const before = (lines[pair.open.line] ?? '').slice(0, pair.open.column);
      let headerLine = pair.open.line;
      let header = before;
      if (before.trim() === '') {
        for (let i = pair.open.line - 1; i >= 0; i--) {
          if ((lines[i] ?? '').trim() !== '') {
            headerLine = i;
            header = lines[i] ?? '';
            break;
          }
        }
      }
      // A signature spread over lines: go up until its parentheses balance.
      while (headerLine > 0 && count(header, ')') > count(header, '(')) {
        headerLine--;
        header = `${lines[headerLine] ?? ''} ${header}`;
      }
      return { headerLine, closeLine: pair.closeLine, ...braceHeader(header) };
    })
    .filter((b) => b.headerLine <= line && line <= b.closeLine)
    // innermost first
    .sort((a, b) => b.headerLine - a.headerLine || a.closeLine - b.closeLine);
  const named = around.find((b) => b.kind !== 'Block') ?? around[0];
  if (!named) return undefined;
  let start = named.headerLine;
  while (start > 0 && /^\s*@\w/.test(lines[start - 1] ?? '')) start--;
  const inClass = named.kind === 'Function' && around.slice(around.indexOf(named) + 1).some((b) => b.kind === 'Class');
  return { startLine: start, endLine: named.closeLine, name: named.name, kind: inClass ? 'Method' : named.kind };
}
