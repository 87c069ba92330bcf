// Test-only extension for the end-to-end test: a language-model tool can only be called from an
// extension (vscode.lm.invokeTool), so this one calls contextls's tools the way a chat does and
// writes what they answer to $CONTEXTLS_PROBE_OUT. What to call comes from $CONTEXTLS_PROBE_IN:
// [{ "tool": name, "input": {...} }, ...].
'use strict';
const fs = require('node:fs');
const vscode = require('vscode');

function activate(context) {
  context.subscriptions.push(
    vscode.commands.registerCommand('contextlsProbe.invokeTools', async () => {
      const calls = JSON.parse(fs.readFileSync(process.env.CONTEXTLS_PROBE_IN, 'utf8'));
      const answers = [];
      for (const call of calls) {
        try {
          const result = await vscode.lm.invokeTool(call.tool, { input: call.input, toolInvocationToken: undefined });
          const text = result.content.map((part) => (part instanceof vscode.LanguageModelTextPart ? part.value : '')).join('');
          answers.push({ tool: call.tool, text });
        } catch (e) {
          answers.push({ tool: call.tool, error: e instanceof Error ? e.message : String(e) });
        }
      }
      const tools = vscode.lm.tools.map((t) => t.name).filter((n) => n.startsWith('contextls'));
      fs.writeFileSync(process.env.CONTEXTLS_PROBE_OUT, JSON.stringify({ tools, answers }, null, 2));
    }),
  );
}

module.exports = { activate };
