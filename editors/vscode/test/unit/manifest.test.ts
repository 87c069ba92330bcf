// What package.json promises VS Code: activation once startup is done (the server only where it is
// needed), the menus' titles, the row menu's order, the welcome views, Restricted Mode, the chat
// contributions the code registers, and a package that ships its README's screenshots.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { WINDOW_KEYS } from '../../src/settings';

const extensionDir = join(__dirname, '..', '..', '..');
interface MenuEntry {
  command: string;
  when?: string;
  group?: string;
}
const manifest = JSON.parse(readFileSync(join(extensionDir, 'package.json'), 'utf8')) as {
  activationEvents: string[];
  icon?: string;
  repository?: { type?: string; url?: string; directory?: string };
  keywords?: string[];
  capabilities: { untrustedWorkspaces: { supported: boolean; description?: string } };
  contributes: {
    commands: { command: string; title: string; category?: string }[];
    menus: Record<string, MenuEntry[]>;
    keybindings: { command: string; key: string; when?: string }[];
    viewsWelcome: { view: string; when?: string; contents: string }[];
    configuration: { properties: Record<string, { scope?: string; markdownDescription?: string }> };
    languageModelTools: { name: string; inputSchema: object; modelDescription: string }[];
    chatParticipants: { id: string; name: string; commands: { name: string }[] }[];
    mcpServerDefinitionProviders: { id: string }[];
    modelContextServerCollections: { id: string }[];
  };
};
const { contributes } = manifest;
const titleOf = (command: string): string => {
  const c = contributes.commands.find((x) => x.command === command);
  assert.ok(c, `no command ${command}`);
  return c.category ? `${c.category}: ${c.title}` : c.title;
};

describe('activation', () => {
  it('comes after startup (never before it, with *), and for a restored contextls: document', () => {
    assert.ok(manifest.activationEvents.includes('onStartupFinished'));
    assert.ok(!manifest.activationEvents.includes('*'));
    assert.ok(manifest.activationEvents.includes('onFileSystem:contextls'));
    // a marker is looked for by the extension itself, at the folder's top, without a workspace search
    assert.ok(!manifest.activationEvents.some((e) => e.startsWith('workspaceContains:')));
  });
  it('says why it stays off in Restricted Mode', () => {
    assert.equal(manifest.capabilities.untrustedWorkspaces.supported, false);
    assert.match(manifest.capabilities.untrustedWorkspaces.description ?? '', /trust/);
  });
});

describe('menus', () => {
  it('say "contextls:" in the Explorer and the editor', () => {
    for (const menu of ['explorer/context', 'editor/context']) {
      for (const entry of contributes.menus[menu] ?? []) assert.match(titleOf(entry.command), /^contextls: /, `${menu}: ${entry.command}`);
    }
    assert.equal(titleOf('contextls.addFile'), 'contextls: Add File');
  });
  it('give a row Pin/Unpin, Remove, Read Again, Show Whole/as Outline, Copy, then Forget in a group of its own', () => {
    const row = (contributes.menus['view/item/context'] ?? []).filter((e) => e.when?.includes('view == contextls.items') && !e.group?.startsWith('inline'));
    const ordered = [...row].sort((a, b) => (a.group ?? '').localeCompare(b.group ?? '', 'en', { numeric: true }));
    assert.deepEqual(
      ordered.map((e) => e.command),
      ['contextls.pin', 'contextls.unpin', 'contextls.remove', 'contextls.reread', 'contextls.showWhole', 'contextls.showOutline', 'contextls.copyItem', 'contextls.forget'],
    );
    const forget = ordered.at(-1);
    assert.notEqual(forget?.group?.split('@')[0], ordered[0]?.group?.split('@')[0]);
  });
  it('hide commands from the palette where they do not apply', () => {
    const palette = new Map((contributes.menus.commandPalette ?? []).map((e) => [e.command, e.when]));
    assert.equal(palette.get('contextls.openItem'), 'false');
    assert.equal(palette.get('contextls.reread'), '!contextls.running || contextls.hasStale');
    assert.equal(palette.get('contextls.restore'), '!contextls.running || contextls.hasArchived');
    // before the extension runs, its context keys are unset: the command must show, to start it
    assert.equal(palette.get('contextls.search'), '!contextls.running || contextls.hasArchived');
    assert.equal(palette.get('contextls.addSelection'), 'editorIsOpen');
  });
  it('bind Delete on a row to removing the focused row (never a picker)', () => {
    const del = contributes.keybindings.find((k) => k.key === 'delete');
    assert.equal(del?.command, 'contextls.removeFocused');
    assert.equal(new Map((contributes.menus.commandPalette ?? []).map((e) => [e.command, e.when])).get('contextls.removeFocused'), 'false');
    assert.match(del.when ?? '', /focusedView == contextls\.items/);
  });
});

describe('views', () => {
  it('welcome a person when the server is not running, and when the window is empty', () => {
    const items = contributes.viewsWelcome.filter((w) => w.view === 'contextls.items');
    const notRunning = items.find((w) => w.when?.startsWith('!contextls.running'));
    assert.match(notRunning?.contents ?? '', /command:contextls\.restartServer/);
    assert.match(notRunning?.contents ?? '', /command:contextls\.howToInstall/);
    assert.match(notRunning?.contents ?? '', /command:contextls\.showOutput/);
    assert.match(notRunning?.contents ?? '', /command:contextls\.openSettings/);
    assert.ok(items.some((w) => w.when === 'contextls.running && contextls.empty'));
  });
});

describe('settings', () => {
  it('each window setting says the window owns it, and can differ per folder', () => {
    for (const key of WINDOW_KEYS) {
      const setting = contributes.configuration.properties[`contextls.${key}`];
      assert.equal(setting?.scope, 'resource', key);
      assert.match(setting.markdownDescription ?? '', /belongs to the window/, key);
    }
  });
});

describe('package', () => {
  it('has an icon, keywords, and its repository (the extension page reads its links from it)', () => {
    assert.equal(manifest.icon, 'media/icon.png');
    assert.ok((manifest.keywords ?? []).includes('copilot'));
    assert.match(manifest.repository?.url ?? '', /^https:\/\/github\.com\/[\w.-]+\/[\w.-]+\.git$/);
    assert.equal(manifest.repository?.directory, 'editors/vscode');
  });
  it('ships the README screenshots in the .vsix, linked relative, so the extension page shows them offline', () => {
    const readme = readFileSync(join(extensionDir, 'README.md'), 'utf8');
    const images = [...readme.matchAll(/!\[[^\]]*\]\(([^)\s]+)\)/g)].map((m) => m[1] ?? '');
    assert.ok(images.length >= 2);
    const ignore = readFileSync(join(extensionDir, '.vscodeignore'), 'utf8').split('\n');
    for (const image of images) {
      assert.match(image, /^media\/screenshots\/[\w-]+\.png$/, `${image} is not a file of the package`);
      assert.ok(existsSync(join(extensionDir, image)), `${image} is not in the repository`);
    }
    assert.ok(ignore.includes('!media/screenshots/*.png'), 'the screenshots would be left out');
    assert.ok(ignore.includes('!media/icon.png'));
    // vsce would point relative links at the repository's web address
    assert.match((manifest as { scripts?: Record<string, string> }).scripts?.package ?? '', /--no-rewrite-relative-links/);
  });
});

describe('chat contributions', () => {
  it('declare the tools, the participant and the MCP provider the code registers', () => {
    const source = readFileSync(join(extensionDir, 'src', 'chat', 'register.ts'), 'utf8');
    for (const tool of contributes.languageModelTools) {
      assert.match(source, new RegExp(`'${tool.name}'`), `register.ts registers ${tool.name}`);
      assert.ok(tool.modelDescription.length > 80);
    }
    assert.deepEqual(contributes.languageModelTools.map((t) => t.name), ['contextls_context', 'contextls_search_archive']);
    assert.match(source, /createChatParticipant\('contextls\.chat'/);
    assert.deepEqual(contributes.chatParticipants.map((p) => [p.id, p.name, p.commands.map((c) => c.name)]), [['contextls.chat', 'contextls', ['show', 'search']]]);
    assert.deepEqual(contributes.mcpServerDefinitionProviders.map((p) => p.id), ['contextls.mcp']);
    // VS Code 1.100's name for the same contribution
    assert.deepEqual(contributes.modelContextServerCollections.map((p) => p.id), ['contextls.mcp']);
    assert.match(source, /registerMcpServerDefinitionProvider\('contextls\.mcp'/);
  });
});
