// The Window Settings command: what the window holds now (the command line and other editors
// change it too), and editing it through VS Code's settings, which SettingsDelivery sends to the
// window.
import * as vscode from 'vscode';
import type { ContextClient } from './client';
import type { WindowSettings } from './generated/protocol';
import { grouped, taskWords } from './format';
import * as ext from './lsp_ext';
import { currentFolder } from './model';
import { explicitValue, WINDOW_KEYS, type WindowKey } from './settings';

interface Described {
  readonly title: string;
  readonly values?: readonly string[];
  readonly min?: number;
  /** Free text (a model's name), not a number. */
  readonly text?: true;
}

const DESCRIBED: Record<WindowKey, Described> = {
  maxItems: { title: 'Most items', min: 1 },
  maxTokens: { title: 'Token budget (the base, under an adaptive policy)', min: 1 },
  model: { title: 'The model the context is for (empty: the encoding\'s)', text: true },
  encoding: {
    title: 'Token encoding',
    values: ['o200k_base', 'cl100k_base', 'claude-v3', 'claude-v4.7', 'claude-v4.8', 'gemma3-estimate', 'llama3', 'qwen2', 'qwen3.5', 'tekken'],
  },
  evictionPolicy: { title: 'What goes first', values: ['fifo', 'relevance'] },
  maxFileBytes: { title: 'Largest file', min: 1 },
  budgetPolicy: { title: 'Budget policy', values: ['fixed', 'adaptive'] },
  task: { title: 'Task (scales an adaptive budget)', values: ['general', 'coding', 'debugging', 'research', 'complex_analysis'] },
  budgetCeiling: { title: 'Most an adaptive budget may reach (0: four times the token budget)', min: 0 },
  compaction: { title: 'Before evicting, show the oldest files and classes as outlines (outline) or not (off)', values: ['off', 'outline'] },
  mapTokens: { title: 'Most tokens a map of the folder takes', min: 64 },
  renderOrder: { title: 'Order of the rendered window: what changes least first, for the prompt cache (stable), or as added (chronological)', values: ['stable', 'chronological'] },
};

function shown(key: WindowKey, value: unknown): string {
  if (typeof value === 'number') return grouped(value);
  if (key === 'task' && typeof value === 'string') return taskWords(value);
  return String(value);
}

export class WindowSettingsEditor {
  constructor(private readonly client: ContextClient) {}

  /** Shows the window's settings; choosing one edits it (a folder setting, sent to the window). */
  async show(only?: WindowKey): Promise<void> {
    const folder = currentFolder();
    if (!folder) throw new Error('contextls needs an open folder: open a folder or workspace first.');
    const { settings } = await this.client.request(ext.configure, { workspace: folder.uri.toString() });
    const config = vscode.workspace.getConfiguration('contextls', folder.uri);
    let key = only;
    if (key === undefined) {
      const picked = await vscode.window.showQuickPick(
        WINDOW_KEYS.map((k) => {
          const mine = explicitValue(config.inspect(k));
          const differs = mine !== undefined && mine !== settings[k];
          return {
            key: k,
            label: k,
            description: shown(k, settings[k]),
            detail: DESCRIBED[k].title + (differs ? ` · VS Code's setting says ${shown(k, mine)}` : ''),
          };
        }),
        { title: `contextls: the window of ${folder.name}`, placeHolder: 'What the window holds now; choose one to change it' },
      );
      if (!picked) return;
      key = picked.key;
    }
    const value = await this.ask(key, settings);
    if (value === undefined) return;
    // A folder setting: the window is the folder's, and the change reaches it through `changed`.
    await config.update(key, value, vscode.ConfigurationTarget.WorkspaceFolder);
  }

  private async ask(key: WindowKey, settings: WindowSettings): Promise<string | number | undefined> {
    const { title, values, min, text } = DESCRIBED[key];
    const current = settings[key];
    if (key === 'model') return this.askModel(String(current));
    if (text) {
      const typed = await vscode.window.showInputBox({
        title: `contextls: ${title}`,
        value: String(current),
        prompt: 'gpt-4o, claude-opus-4.6, gemini-2.5, qwen3, llama-3… (the server says which it knows)',
      });
      return typed?.trim();
    }
    if (values) {
      const picked = await vscode.window.showQuickPick(
        values.map((v) => ({ label: key === 'task' ? taskWords(v) : v, value: v, description: v === current ? 'now' : undefined })),
        { title: `contextls: ${title}` },
      );
      return picked?.value;
    }
    const typed = await vscode.window.showInputBox({
      title: `contextls: ${title}`,
      value: String(current),
      validateInput: (text) => (/^\d+$/.test(text.trim()) && Number(text) >= (min ?? 0) ? undefined : `A whole number, at least ${min ?? 0}`),
    });
    return typed === undefined ? undefined : Number(typed.trim());
  }

  /** The model, from the server's list: each says its tokenizer and whether its counts are exact. */
  private async askModel(current: string): Promise<string | undefined> {
    const info = await this.client.request(ext.serverInfo, {});
    const other = 'Another name…';
    const picked = await vscode.window.showQuickPick(
      [
        ...info.models.map((m) => ({
          label: m.name,
          description: [m.name === current ? 'now' : '', m.exact ? 'exact' : 'estimate', m.encoding].filter(Boolean).join(' · '),
          detail: m.unavailable ? `Not on this machine: ${m.unavailable}` : m.exact ? undefined : m.label,
        })),
        { label: other, description: 'claude-sonnet-4.5, claude-opus-4-5-20251101…: any name the server reads', detail: undefined },
      ],
      { title: 'contextls: The model the context is for', placeHolder: `Counts are in its tokens (now ${current || 'the encoding\'s'})`, matchOnDescription: true },
    );
    if (!picked) return undefined;
    if (picked.label !== other) return picked.label;
    const typed = await vscode.window.showInputBox({ title: 'contextls: The model the context is for', value: current });
    return typed?.trim();
  }
}
