// drive.mjs: the official TypeScript SDK's client, driven line by line, so
// a Go test can put steps of its own (an operator's approval) between an
// agent's calls. It is how ewp-gateway's proof talks to the gateway as an
// agent built on the SDK would.
//
//   node drive.mjs stdio COMMAND [ARG...]   spawn the gateway, talk stdio
//   node drive.mjs http URL [HEADER: VALUE]  talk Streamable HTTP
//
// It reads one JSON object a line on stdin and answers each with one line
// on stdout:
//
//   {"op":"list"}                                  -> {"ok":true,"tools":[...]}
//   {"op":"call","name":N,"arguments":{...}}       -> {"ok":true,"result":{...}}
//   anything that throws                           -> {"ok":false,"error":"..."}
//
// The client declares URL-mode elicitation; each elicitation the server
// sends is printed as {"elicitation":{...params}} and declined (the
// operator decides in the log, not this client). stdin's end closes the
// client and exits 0.
import readline from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const [mode, target, ...rest] = process.argv.slice(2);
let transport;
if (mode === 'stdio' && target) {
  transport = new StdioClientTransport({ command: target, args: rest, stderr: 'inherit' });
} else if (mode === 'http' && target) {
  const headers = {};
  for (const h of rest) {
    const i = h.indexOf(':');
    headers[h.slice(0, i).trim()] = h.slice(i + 1).trim();
  }
  transport = new StreamableHTTPClientTransport(new URL(target), { requestInit: { headers } });
} else {
  console.error('usage: node drive.mjs stdio COMMAND [ARG...] | http URL [HEADER: VALUE...]');
  process.exit(2);
}

const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');
const client = new Client({ name: 'ewp-gateway-proof', version: '1.0.0' }, { capabilities: { elicitation: { url: {} } } });
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  out({ elicitation: req.params });
  return { action: 'decline' };
});
await client.connect(transport);

const rl = readline.createInterface({ input: process.stdin });
for await (const line of rl) {
  if (!line.trim()) continue;
  try {
    const cmd = JSON.parse(line);
    if (cmd.op === 'list') {
      const r = await client.listTools();
      out({ ok: true, tools: r.tools });
    } else if (cmd.op === 'call') {
      const r = await client.callTool({ name: cmd.name, arguments: cmd.arguments ?? {} }, undefined, { timeout: cmd.timeout_ms ?? 60000 });
      out({ ok: true, result: r });
    } else {
      out({ ok: false, error: `unknown op ${cmd.op}` });
    }
  } catch (err) {
    out({ ok: false, error: String(err?.message ?? err) });
  }
}
await client.close();
process.exit(0);
