// client.mjs drives cordon mcp from the official TypeScript MCP SDK, the
// way a non-Go agent would. cmd/cordon's TestTypeScriptClient runs it with
// node and checks the effects from outside (files, processes).
//
// Environment: MODE (stdio or http); for stdio CORDON_BIN and CORDON_ARGS
// (a JSON array) and CORDON_ENV (a JSON object added to the environment);
// for http CORDON_URL and CORDON_TOKEN (the bearer token). It prints one
// JSON object on stdout.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const out = { mode: process.env.MODE, steps: {}, elicitations: [], notifications: [] };

const client = new Client({ name: 'cordon-ts-test', version: '1.0.0' }, { capabilities: { elicitation: {} } });
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  const msg = req.params.message;
  out.elicitations.push(msg);
  // Deny what touches denied.txt, allow everything else once.
  const decision = msg.includes('denied.txt') ? 'deny' : 'allow_once';
  return { action: 'accept', content: { decision } };
});
client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => { out.notifications.push(n.params); });

let transport;
if (process.env.MODE === 'stdio') {
  transport = new StdioClientTransport({
    command: process.env.CORDON_BIN,
    args: JSON.parse(process.env.CORDON_ARGS),
    env: { ...getDefaultEnvironment(), ...JSON.parse(process.env.CORDON_ENV || '{}') },
    stderr: 'inherit',
  });
} else {
  transport = new StreamableHTTPClientTransport(new URL(process.env.CORDON_URL), {
    requestInit: { headers: { Authorization: `Bearer ${process.env.CORDON_TOKEN}` } },
  });
}

async function call(name, args) {
  const r = await client.callTool({ name, arguments: args });
  return {
    isError: !!r.isError,
    text: (r.content || []).map((c) => c.text || '').join('\n'),
    structured: r.structuredContent,
  };
}

async function main() {
  await client.connect(transport);
  await client.setLoggingLevel('info');
  out.instructions = client.getInstructions();
  const tools = await client.listTools();
  out.tools = tools.tools.map((t) => ({ name: t.name, readOnly: !!(t.annotations && t.annotations.readOnlyHint) }));

  const s = out.steps;
  s.read = await call('read_file', { path: 'notes.md' });
  s.list = await call('list_files', {});
  s.grep = await call('grep_files', { pattern: 'hello' });
  s.write = await call('write_file', { path: 'out-ts.txt', content: 'from typescript\n' });
  s.edit = await call('edit_file', { path: 'notes.md', old_string: 'hello', new_string: 'hello ts' });
  s.deniedRead = await call('read_file', { path: 'app/.env' });
  s.askAllowed = await call('shell', { command: './probe.sh' });
  s.askDenied = await call('shell', { command: 'touch denied.txt' });
  s.spawn = await call('spawn_process', { command: 'sleep 1000' });
  s.readOutput = await call('read_process_output', { id: s.spawn.structured.id });
  s.listProcesses = await call('list_processes', {});
  s.kill = await call('kill_process', { id: s.spawn.structured.id });
  s.left = await call('spawn_process', { command: 'sleep 1000' });
  s.exits = await call('spawn_process', { command: 'echo bye; exit 3' });
  for (let i = 0; i < 200 && out.notifications.length === 0; i++) {
    await new Promise((r) => setTimeout(r, 50));
  }
  s.afterExit = await call('list_processes', {});
  s.wrongType = await call('read_file', { path: 42 });
  try {
    await client.callTool({ name: 'no_such_tool', arguments: {} });
    s.unknownTool = { isError: false };
  } catch (e) {
    s.unknownTool = { isError: true, text: String(e && e.message) };
  }
  out.leftPid = s.left.structured.pid;
  out.killedPid = s.spawn.structured.pid;
  if (process.env.MODE === 'http') {
    await transport.terminateSession();
  }
  await client.close();
}

main().then(
  () => { process.stdout.write(JSON.stringify(out) + '\n'); },
  (e) => { out.error = String(e && e.stack || e); process.stdout.write(JSON.stringify(out) + '\n'); process.exitCode = 1; },
);
