// Window settings changed in VS Code reach the window when the person is done with them. The
// Settings UI writes a number as it is typed (deleting the digits of 30000 writes 3000, 300, 30,
// 3), so a change waits until the settings stop changing for a while, or until the person leaves
// the Settings UI or VS Code; a change from a file or a picker is a whole value and goes at once.
// A change that would evict more than half of the window is not sent: the setting goes back to
// what it was, and a notification says what it would evict and offers to set it all the same.
// In the Settings UI such a value may be a number half typed (a pause after the 1 of 15000): it
// waits there, unsent and unasked, until the person types on or leaves; and a question answered
// after a newer change of its setting is out of date, and says so instead of setting anything.
import * as vscode from 'vscode';
import { ServerError, type ContextClient } from './client';
import { consentTo } from './commandKit';
import { grouped } from './format';
import type { WindowSettings, WindowSettingsChange } from './generated/protocol';
import * as ext from './lsp_ext';
import { changeWords, plannedSettings, refusedPlan, settingsPlanOf, settingsQuestion, type SettingsPlan } from './settingsPlan';
import { explicitValue, windowChange, WINDOW_KEYS, type WindowKey } from './settings';

/** Quiet after a change from a settings file or a picker: it is whole, only gather a burst. */
const SETTLED_MS = 300;
/** Quiet after a change while an editor that is not a document (the Settings UI) is active. */
const TYPING_MS = 3000;

type Inspected = ReturnType<vscode.WorkspaceConfiguration['inspect']>;

/** The Settings UI (or another editor that is not a document) is where the person is. */
function inSettingsEditor(): boolean {
  const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
  return tab !== undefined && tab.input === undefined;
}

export class SettingsDelivery implements vscode.Disposable {
  /** Keys changed per folder and not sent yet. */
  private readonly pending = new Map<string, Set<WindowKey>>();
  /** What VS Code's settings said when they last agreed with the window, per folder and key. */
  private readonly agreed = new Map<string, Inspected>();
  /** Writes this class itself makes (a setting put back), per folder and key: their change
   * events are not a person's. */
  private readonly writing = new Map<string, number>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** How many changes of each folder's key were handled: a question asked at an older count is
   * out of date. */
  private readonly generation = new Map<string, number>();
  private sending: Promise<void> = Promise.resolve();
  private readonly subscriptions: vscode.Disposable[];

  constructor(
    private readonly client: ContextClient,
    private readonly log: vscode.LogOutputChannel,
  ) {
    for (const folder of vscode.workspace.workspaceFolders ?? []) this.remember(folder, WINDOW_KEYS);
    this.subscriptions = [
      client.onReady(() => void this.send()),
      vscode.window.tabGroups.onDidChangeTabs(() => {
        this.leftSettingsEditor();
      }),
      vscode.window.tabGroups.onDidChangeTabGroups(() => {
        this.leftSettingsEditor();
      }),
      vscode.window.onDidChangeWindowState((state) => {
        if (!state.focused) this.sendNow();
      }),
    ];
  }

  /** Takes note of the window settings a configuration change touched; sends them when due. */
  changed(e: vscode.ConfigurationChangeEvent): void {
    for (const folder of vscode.workspace.workspaceFolders ?? []) {
      const keys = WINDOW_KEYS.filter((key) => e.affectsConfiguration(`contextls.${key}`, folder.uri));
      const mine = keys.filter((key) => !this.ownWrite(slot(folder, key)));
      if (mine.length === 0) continue;
      const pending = this.pending.get(folder.uri.toString()) ?? new Set();
      for (const key of mine) pending.add(key);
      this.pending.set(folder.uri.toString(), pending);
    }
    if (this.pending.size === 0) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.send(), inSettingsEditor() ? TYPING_MS : SETTLED_MS);
  }

  private ownWrite(at: string): boolean {
    const left = this.writing.get(at) ?? 0;
    if (left === 0) return false;
    if (left === 1) this.writing.delete(at);
    else this.writing.set(at, left - 1);
    return true;
  }

  private async write(folder: vscode.WorkspaceFolder, key: WindowKey, value: unknown, target: vscode.ConfigurationTarget): Promise<void> {
    const at = slot(folder, key);
    this.writing.set(at, (this.writing.get(at) ?? 0) + 1);
    await vscode.workspace.getConfiguration('contextls', folder.uri).update(key, value, target);
  }

  /** The person left the Settings UI: what they typed there is done. */
  private leftSettingsEditor(): void {
    if (this.pending.size > 0 && !inSettingsEditor()) this.sendNow();
  }

  private sendNow(): void {
    if (this.pending.size === 0) return;
    clearTimeout(this.timer);
    void this.send();
  }

  /** Sends what is pending, one folder after the other, never two sends at once. */
  send(): Promise<void> {
    this.sending = this.sending.then(() => this.sendPending());
    return this.sending;
  }

  private async sendPending(): Promise<void> {
    clearTimeout(this.timer);
    if (!this.client.running) return; // kept: sent when a server is ready
    const due = [...this.pending];
    this.pending.clear();
    for (const [uri, keys] of due) {
      const folder = vscode.workspace.workspaceFolders?.find((f) => f.uri.toString() === uri);
      if (!folder) continue;
      try {
        await this.deliver(folder, [...keys]);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        await this.putBack(folder, [...keys]);
        void vscode.window.showErrorMessage(`contextls: the window of ${folder.name} keeps its settings: ${message}`);
      }
    }
  }

  private async deliver(folder: vscode.WorkspaceFolder, keys: WindowKey[]): Promise<void> {
    const config = vscode.workspace.getConfiguration('contextls', folder.uri);
    const { settings, reset } = windowChange(keys, (key) => explicitValue(config.inspect(key)));
    const workspace = folder.uri.toString();
    const now = (await this.client.request(ext.configure, { workspace })).settings;
    const defaultOf = (key: WindowKey): unknown => config.inspect(key)?.defaultValue;
    const words = changeWords(settings, reset, defaultOf);
    const after = withChange(now, settings, reset, defaultOf);
    const changes = keys.filter((key) => after[key] !== now[key]);
    if (changes.length > 0) {
      const plan = await this.plan(workspace, settings, reset);
      if ((plan.asks || plan.refused !== undefined) && inSettingsEditor()) {
        // Maybe half typed: ask (or send, to be refused) once the person leaves the Settings UI
        // or types on.
        const pending = this.pending.get(workspace) ?? new Set();
        for (const key of keys) pending.add(key);
        this.pending.set(workspace, pending);
        const why = plan.refused !== undefined ? `${plan.refused}.` : settingsQuestion(plan, words);
        vscode.window.setStatusBarMessage(`contextls: ${words} is not sent: ${why} Type on, or leave the Settings to decide.`, TYPING_MS);
        return;
      }
      for (const key of keys) this.generation.set(slot(folder, key), (this.generation.get(slot(folder, key)) ?? 0) + 1);
      if (plan.asks) {
        this.log.info(`settings not sent to the window of ${folder.name}: ${settingsQuestion(plan, words)}`);
        const typedIn = await this.putBack(folder, keys);
        void this.offer(folder, { settings, reset }, words, settingsQuestion(plan, words), plan.evicted.map((i) => i.id), now, typedIn);
        return;
      }
    }
    for (const key of keys) this.generation.set(slot(folder, key), (this.generation.get(slot(folder, key)) ?? 0) + 1);
    await this.client.request(ext.configure, { workspace, settings, reset });
    this.log.info(`settings sent to the window of ${folder.name}: ${words}`);
    this.remember(folder, keys);
  }

  /** What the change would do, as the server plans it: a dry run, changing nothing. */
  private async plan(workspace: string, settings: WindowSettingsChange, reset: WindowKey[]): Promise<SettingsPlan> {
    try {
      return settingsPlanOf(await this.client.request(ext.configure, { workspace, settings, reset, dryRun: true }), false);
    } catch (error) {
      if (!(error instanceof ServerError)) throw error;
      const planned = error.codeName === 'NEEDS_FORCE' ? plannedSettings(error.data) : undefined;
      // Refused outright: sent as it is, it is refused again, and the refusal is shown.
      return planned === undefined ? refusedPlan(error.message) : settingsPlanOf(planned, true);
    }
  }

  /**
   * Puts VS Code's settings back to what they said when they last agreed with the window; returns
   * where each key had been changed (the scope the person wrote it in).
   */
  private async putBack(folder: vscode.WorkspaceFolder, keys: readonly WindowKey[]): Promise<Map<WindowKey, vscode.ConfigurationTarget>> {
    const config = vscode.workspace.getConfiguration('contextls', folder.uri);
    const typedIn = new Map<WindowKey, vscode.ConfigurationTarget>();
    for (const key of keys) {
      const before = this.agreed.get(slot(folder, key));
      const now = config.inspect(key);
      for (const [scope, target] of SCOPES) {
        if (now?.[scope] === before?.[scope]) continue;
        if (!typedIn.has(key)) typedIn.set(key, target);
        await this.write(folder, key, before?.[scope], target);
      }
    }
    return typedIn;
  }

  /** Offers the change the person made, which was not sent: "Set maxTokens to 3 and Evict 5". */
  private async offer(
    folder: vscode.WorkspaceFolder,
    change: { settings: WindowSettingsChange; reset: WindowKey[] },
    words: string,
    question: string,
    evicted: string[],
    now: WindowSettings,
    typedIn: Map<WindowKey, vscode.ConfigurationTarget>,
  ): Promise<void> {
    const kept = [...typedIn.keys()].map((key) => `${key} ${shown(now[key])}`).join(', ');
    const asked = new Map([...typedIn.keys()].map((key) => [key, this.generation.get(slot(folder, key)) ?? 0]));
    const go = `Set ${words.replace(/ \(its default\)/g, '')} and Evict ${grouped(evicted.length)}`;
    const answer = await vscode.window.showWarningMessage(
      `contextls: ${question} Nothing was evicted: the window keeps ${kept}${multiRoot() ? ` for ${folder.name}` : ''}.`,
      go,
    );
    if (answer !== go) return;
    const newer = [...asked].filter(([key, at]) => (this.generation.get(slot(folder, key)) ?? 0) !== at).map(([key]) => key);
    if (newer.length > 0) {
      const { settings } = await this.client.request(ext.configure, { workspace: folder.uri.toString() });
      const holds = newer.map((key) => `${key} ${shown(settings[key])}`).join(', ');
      void vscode.window.showInformationMessage(`contextls: that question is out of date: ${newer.join(', ')} changed after it, and the window holds ${holds}. Nothing was changed.`);
      return;
    }
    consentTo(evicted);
    await this.client.request(ext.configure, { workspace: folder.uri.toString(), ...change, force: true });
    // The Settings UI shows what the window now holds: the value the person typed.
    for (const [key, target] of typedIn) await this.write(folder, key, (change.settings as Record<string, unknown>)[key], target);
    this.remember(folder, [...typedIn.keys()]);
  }

  private remember(folder: vscode.WorkspaceFolder, keys: readonly WindowKey[]): void {
    const config = vscode.workspace.getConfiguration('contextls', folder.uri);
    for (const key of keys) this.agreed.set(slot(folder, key), config.inspect(key));
  }

  dispose(): void {
    clearTimeout(this.timer);
    for (const s of this.subscriptions) s.dispose();
  }
}

/** Where a setting can be written, most specific first. */
const SCOPES: readonly [keyof NonNullable<Inspected>, vscode.ConfigurationTarget][] = [
  ['workspaceFolderValue', vscode.ConfigurationTarget.WorkspaceFolder],
  ['workspaceValue', vscode.ConfigurationTarget.Workspace],
  ['globalValue', vscode.ConfigurationTarget.Global],
];

function slot(folder: vscode.WorkspaceFolder, key: WindowKey): string {
  return `${folder.uri.toString()}#${key}`;
}

function multiRoot(): boolean {
  return (vscode.workspace.workspaceFolders?.length ?? 0) > 1;
}

function shown(value: unknown): string {
  return typeof value === 'number' ? grouped(value) : String(value);
}

/** The window's settings with a change in (a reset key at its default). */
function withChange(now: WindowSettings, settings: WindowSettingsChange, reset: readonly WindowKey[], defaultOf: (key: WindowKey) => unknown): WindowSettings {
  const after: Record<string, unknown> = { ...now };
  for (const [key, value] of Object.entries(settings)) if (value !== undefined && value !== null) after[key] = value;
  for (const key of reset) {
    const value = defaultOf(key);
    if (value !== undefined) after[key] = value;
  }
  return after as unknown as WindowSettings;
}
