// An agent host's side of `contextls mcp`, written with the official TypeScript SDK's Client
// over stdio (what Claude Desktop, VS Code and the MCP Inspector build on; protocol 2025-11-25).
// It starts the server in / and declares the project as its root, lists and calls every tool,
// reads the resources and the prompt, subscribes to the context, lets the CLI change the window,
// kills the daemon under the live session, and prints what it saw as one JSON document on stdout
// for test_mcp_typescript.py to check.
//
// Usage: node client.mjs CONTEXTLS PROJECT   (the server's environment comes from this one's)
import { execFileSync } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  ListRootsRequestSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

const [executable, project] = process.argv.slice(2);
const SETTLE_MS = 1500; // longer than the server gathers pushes: a second notification would come
const report = { tools: [], calls: {}, heard: {} };

const client = new Client({ name: "contextls-ts-test", version: "1.0.0" }, { capabilities: { roots: {} } });
client.setRequestHandler(ListRootsRequestSchema, async () => ({
  roots: [{ uri: pathToFileURL(project).href, name: "project" }],
}));
let heard = [];
client.setNotificationHandler(ResourceUpdatedNotificationSchema, (note) => {
  heard.push(`updated ${note.params.uri}`);
});
client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
  heard.push("list_changed");
});

const transport = new StdioClientTransport({
  command: executable,
  args: ["mcp"],
  cwd: "/", // as Claude Desktop starts servers: the roots say which project
  env: Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith("CONTEXTLS_"))),
  stderr: "inherit",
});
const started = Date.now();
await client.connect(transport);
report.connectMs = Date.now() - started;
report.capabilities = client.getServerCapabilities();
report.instructions = client.getInstructions();

for (const tool of (await client.listTools()).tools) {
  const properties = tool.inputSchema.properties ?? {};
  report.tools.push({
    name: tool.name,
    title: tool.title,
    annotations: tool.annotations,
    undescribed: Object.entries(properties).filter(([, schema]) => !schema.description).map(([name]) => name),
    hasOutputSchema: tool.outputSchema !== undefined,
  });
}

async function call(name, args = {}) {
  const result = await client.callTool({ name, arguments: args });
  const text = result.content.map((block) => block.text).join("");
  report.calls[name] = { isError: Boolean(result.isError), text, structured: result.structuredContent ?? null };
  return text;
}

function cli(...args) {
  execFileSync(executable, args, { cwd: project, env: process.env, stdio: ["ignore", "ignore", "inherit"] });
}

async function heardAfter(action) {
  await sleep(SETTLE_MS); // what the agent's own calls changed is told first
  heard = [];
  action();
  await sleep(SETTLE_MS);
  return heard.slice().sort();
}

await call("add_text", { content: "the cache is warmed at start", kind: "text" });
await call("add_file", { path: "app.py" });
await call("add_region", { path: "app.py", start_line: 4, end_line: 5 });
await call("get_context", { format: "markdown" });
await call("list");
await call("pin", { id: "ctx-1" });
await call("refresh", { ids: ["ctx-2"] });
await call("remove", { ids: ["ctx-1"] });
await call("search_archive", { query: "cache warmed" });
await call("restore", { ids: ["ctx-1"] });
await call("status");

const resources = (await client.listResources()).resources.map((resource) => resource.uri);
report.resources = resources;
report.templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
const contextUri = resources.find((uri) => uri.startsWith("contextls://context/"));
report.contextText = (await client.readResource({ uri: contextUri })).contents[0].text;
report.prompts = (await client.listPrompts()).prompts.map((prompt) => prompt.name);
report.promptText = (await client.getPrompt({ name: "context", arguments: {} })).messages[0].content.text;

await client.subscribeResource({ uri: contextUri });
report.heard.cliChange = await heardAfter(() => cli("add-text", "from the shell"));

const pid = Number(/daemon pid (\d+)/.exec(await call("status"))[1]);
process.kill(pid, "SIGKILL");
await sleep(300);
report.afterKill = { text: await call("get_context"), isError: report.calls.get_context.isError };
report.newPid = Number(/daemon pid (\d+)/.exec(await call("status"))[1]);
report.oldPid = pid;
report.heard.afterRestart = await heardAfter(() => cli("add-text", "after the restart"));
await call("add_symbol", { name: "app.py::f3" });
await call("add_map", { tokens: 100 });

await client.close();
process.stdout.write(JSON.stringify(report));
