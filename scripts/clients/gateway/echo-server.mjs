// echo-server.mjs: a trivial MCP server written with the official
// TypeScript SDK, the downstream of the gateway's cost runs
// (scripts/gatewaybench) and of its proof's "other server".
//
//   node echo-server.mjs stdio            serve over stdin/stdout
//   node echo-server.mjs http PORT [HOST]  serve Streamable HTTP at /mcp
//                                           (stateless, JSON answers), and
//                                           print "listening URL" on stderr
//
// One tool, `echo`, answering its `text` argument as text. Nothing else:
// the cost of a call through a proxy is measured against this.
import http from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const TOOL = {
  name: 'echo',
  description: 'Answers its text argument unchanged.',
  inputSchema: {
    type: 'object',
    properties: { text: { type: 'string', description: 'the text to answer' } },
    required: ['text'],
  },
  annotations: { readOnlyHint: true },
};

// The SDK's low-level Server, so the tool's schema is plain JSON Schema
// and nothing but the SDK itself is imported.
function newServer() {
  const s = new Server({ name: 'ts-echo', version: '1.0.0' }, { capabilities: { tools: {} } });
  s.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [TOOL] }));
  s.setRequestHandler(CallToolRequestSchema, async (req) => {
    if (req.params.name !== 'echo') {
      return { isError: true, content: [{ type: 'text', text: `no tool ${req.params.name}` }] };
    }
    return { content: [{ type: 'text', text: String(req.params.arguments?.text ?? '') }] };
  });
  return s;
}

const [mode, port, host] = process.argv.slice(2);
if (mode === 'stdio') {
  await newServer().connect(new StdioServerTransport());
} else if (mode === 'http' && port !== undefined) {
  // Stateless, as the SDK's examples do it: a server and a transport per
  // request, so no session is held between calls.
  const srv = http.createServer(async (req, res) => {
    if (req.url !== '/mcp' || req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    const server = newServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      transport.close();
      server.close();
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res);
    } catch (err) {
      if (!res.headersSent) res.writeHead(500).end(String(err));
    }
  });
  srv.keepAliveTimeout = 120_000;
  srv.listen(Number(port), host ?? '127.0.0.1', () => {
    const a = srv.address();
    console.error(`listening http://${a.address}:${a.port}/mcp`);
  });
} else {
  console.error('usage: node echo-server.mjs stdio | http PORT [HOST]');
  process.exit(2);
}
