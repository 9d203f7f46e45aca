// check.mjs drives ewp-mcp with the official MCP TypeScript SDK, the client
// library most agents are built on, and asserts what an agent would see.
//
//   node check.mjs stdio /path/to/ewp-mcp   spawn `ewp-mcp --demo` over stdio
//   node check.mjs http  http://127.0.0.1:PORT/mcp
//                                            talk Streamable HTTP to a server
//                                            that serves the quickstart ledger
//
// Both ledgers hold fixtures/examples/quickstart.json. Every failed
// expectation is printed; the exit status is 1 if any failed, 2 on a usage
// error or a crash.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

// A fixed instant inside the examples' freshness windows, so warrant_now
// answers do not depend on the day the check runs. may_act always decides
// at the server clock, so its expectations are chosen to hold at any date
// after the examples were written.
const T = '2026-11-28T12:00:00Z';

const READ_TOOLS = ['list_propositions', 'warrant_now', 'evidence_view_get', 'memory_context', 'may_act'];
const WRITE_TOOLS = ['evidence_view_put', 'evidence_record', 'check_record'];
// The guard's tools. Checked like the others when the server has them.
const GUARD_READ_TOOLS = ['check_grounding', 'gap_template'];
const GUARD_WRITE_TOOLS = ['learn_gap'];

let failures = 0;
let passes = 0;

function ok(cond, what, detail) {
  if (cond) {
    passes++;
    console.log(`ok   ${what}`);
    return true;
  }
  failures++;
  console.log(`FAIL ${what}${detail === undefined ? '' : `: ${typeof detail === 'string' ? detail : JSON.stringify(detail)}`}`);
  return false;
}

function eq(got, want, what) {
  return ok(got === want, what, `got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
}

// textJSON parses the JSON a tool result carries as text: the structured
// result for clients that only read text, or the {error, message} refusal.
function textJSON(res) {
  const t = (res.content ?? []).find((c) => c.type === 'text');
  if (!t) throw new Error(`no text content in ${JSON.stringify(res).slice(0, 300)}`);
  return JSON.parse(t.text);
}

async function call(client, name, args) {
  return client.callTool({ name, arguments: args });
}

// expectRefusal calls a tool that must refuse with code.
async function expectRefusal(client, name, args, code, what) {
  const res = await call(client, name, args);
  if (!ok(res.isError === true, `${what}: isError`, res)) return;
  const body = textJSON(res);
  eq(body.error, code, `${what}: error code`);
  ok(typeof body.message === 'string' && body.message.length > 0, `${what}: message says why`, body);
}

async function checkInit(client) {
  const info = client.getServerVersion();
  eq(info?.name, 'ewp-mcp', 'initialize: serverInfo.name');
  const caps = client.getServerCapabilities() ?? {};
  ok(caps.tools && caps.resources && caps.prompts, 'initialize: tools, resources and prompts capabilities', caps);
  ok((client.getInstructions() ?? '').includes('Memory is evidence, not truth'), 'initialize: instructions carry the packet rules');
  await client.ping();
  ok(true, 'ping');
}

async function checkToolList(client) {
  const { tools } = await client.listTools();
  const byName = new Map(tools.map((t) => [t.name, t]));
  const present = (names) => names.filter((n) => byName.has(n));
  for (const n of [...READ_TOOLS, ...WRITE_TOOLS]) ok(byName.has(n), `tools/list: ${n} is listed`);
  const guard = present([...GUARD_READ_TOOLS, ...GUARD_WRITE_TOOLS]);
  console.log(`info guard tools listed: ${guard.length ? guard.join(', ') : 'none'}`);
  const known = new Set([...READ_TOOLS, ...WRITE_TOOLS, ...GUARD_READ_TOOLS, ...GUARD_WRITE_TOOLS]);
  const extra = tools.map((t) => t.name).filter((n) => !known.has(n));
  if (extra.length) console.log(`info other tools listed (not checked): ${extra.join(', ')}`);

  for (const t of tools.filter((t) => known.has(t.name))) {
    const write = WRITE_TOOLS.includes(t.name) || GUARD_WRITE_TOOLS.includes(t.name);
    ok(typeof t.description === 'string' && t.description.length > 20, `${t.name}: has a description`);
    ok(t.inputSchema?.type === 'object' && t.inputSchema.properties && Object.keys(t.inputSchema.properties).length > 0,
      `${t.name}: input schema is an object with properties`, t.inputSchema);
    ok(t.inputSchema?.additionalProperties === false, `${t.name}: input schema is closed`);
    ok(t.outputSchema?.type === 'object' && t.outputSchema.properties, `${t.name}: has an output schema`, t.outputSchema);
    for (const [p, s] of Object.entries(t.inputSchema?.properties ?? {})) {
      ok(typeof s.description === 'string' && s.description.length > 0, `${t.name}.${p}: described`);
    }
    const a = t.annotations ?? {};
    if (write) {
      ok(a.readOnlyHint === false && a.destructiveHint === false, `${t.name}: annotated readOnlyHint=false, destructiveHint=false`, a);
    } else {
      ok(a.readOnlyHint === true && a.openWorldHint === false, `${t.name}: annotated readOnlyHint=true, openWorldHint=false`, a);
    }
  }
  const wn = byName.get('warrant_now');
  ok(wn?.inputSchema?.required?.includes('evaluated_at'), 'warrant_now: evaluated_at is required in the schema');
  const ma = byName.get('may_act');
  ok(ma?.inputSchema?.properties?.action?.required?.includes('reversible'), 'may_act: action.reversible is required in the schema');
}

// Each demo proposition shows one axis; callTool also validates every
// structuredContent against the tool's output schema (the SDK does that).
async function checkWarrant(client) {
  const cases = [
    ['P-api-cert-valid', { acceptance: 'ACCEPTED', conflict: 'NONE', verification: 'EXTERNAL', currency: 'CURRENT', sufficiency: 'SUFFICIENT' }],
    ['P-db-major-version', { acceptance: 'TENTATIVE', conflict: 'OPEN', verification: 'EXTERNAL' }],
    ['P-backup-restores', { currency: 'STALE', verification: 'HUMAN' }],
    ['P-deploy-freeze-december', { sufficiency: 'DEGRADED' }],
  ];
  for (const [pid, want] of cases) {
    const res = await call(client, 'warrant_now', { proposition_id: pid, evaluated_at: T });
    if (!ok(!res.isError, `warrant_now ${pid}: not an error`, res)) continue;
    const w = res.structuredContent;
    eq(w.protocol_version, 'EWP-0.2.0', `warrant_now ${pid}: protocol_version`);
    eq(w.policy_id, 'reference-v2', `warrant_now ${pid}: policy_id`);
    eq(w.evaluated_at, T, `warrant_now ${pid}: evaluated_at echoed exactly`);
    for (const [axis, v] of Object.entries(want)) eq(w.warrant[axis], v, `warrant_now ${pid}: ${axis}`);
    ok(JSON.stringify(textJSON(res)) === JSON.stringify(w), `warrant_now ${pid}: text content equals structuredContent`);
  }
  await expectRefusal(client, 'warrant_now', { proposition_id: 'P-api-cert-valid' }, 'EWP_MISSING_EVALUATED_AT', 'warrant_now without evaluated_at');
  await expectRefusal(client, 'warrant_now', { proposition_id: 'P-nope', evaluated_at: T }, 'EWP_REFUSE_MISSING_VIEW', 'warrant_now of an unknown proposition');
  await expectRefusal(client, 'warrant_now', { proposition_id: 'P-api-cert-valid', evaluatedAt: T }, 'EWP_REFUSE_INVALID_ARGUMENT', 'warrant_now with a misspelt argument');

  // An inline view is a hypothesis: its tool origin is demoted.
  const inline = {
    proposition_id: 'P-inline', subjects: ['h1'],
    checks: [{
      check_id: 'k1', method: 'tool_observation', scope: 'probe', subjects: ['h1'], result: 'supports',
      observed_at: '2026-11-20T08:00:00Z',
      source: { source_id: 's1', lineage_id: 'L1', origin_type: 'tool', origin_locator: 'probe', snapshot_id: 's1@1', content_hash: 'sha256:00', observed_at: '2026-11-20T08:00:00Z' },
    }],
  };
  const res = await call(client, 'warrant_now', { view: inline, evaluated_at: T });
  if (ok(!res.isError, 'warrant_now inline view: not an error', res)) {
    ok(JSON.stringify(res.structuredContent.inline_origins_demoted) === '["tool"]', 'warrant_now inline view: tool origin demoted', res.structuredContent.inline_origins_demoted);
    ok(res.structuredContent.warrant.verification !== 'EXTERNAL', 'warrant_now inline view: demoted check confers no EXTERNAL');
  }
}

async function checkMayAct(client) {
  const act = (risk, reversible) => ({ action_id: `act-${risk}`, kind: 'db_upgrade', risk, reversible });
  let res = await call(client, 'may_act', { proposition_id: 'P-db-major-version', action: act('high', false) });
  if (ok(!res.isError, 'may_act P-db-major-version high: not an error', res)) {
    const d = res.structuredContent;
    eq(d.decision, 'DENY', 'may_act P-db-major-version high irreversible: decision');
    eq(d.layers?.[0]?.layer, 'warrant', 'may_act: the warrant layer comes first');
    eq(d.view_id, 'example-db-1', 'may_act: judged the latest snapshot');
    const skew = Math.abs(Date.parse(d.evaluated_at) - Date.now());
    ok(skew < 120_000, 'may_act: decided at the server clock', d.evaluated_at);
  }
  // Low risk and reversible never needs acceptance to stay fresh, so this
  // holds whatever the date.
  res = await call(client, 'may_act', { proposition_id: 'P-api-cert-valid', action: act('low', true) });
  if (ok(!res.isError, 'may_act P-api-cert-valid low: not an error', res)) {
    eq(res.structuredContent.decision, 'MAY_ACT', 'may_act P-api-cert-valid low reversible: decision');
  }
  res = await call(client, 'may_act', { proposition_id: 'P-deploy-freeze-december', action: act('medium', true) });
  if (ok(!res.isError, 'may_act P-deploy-freeze-december medium: not an error', res)) {
    eq(res.structuredContent.decision, 'REQUIRE_CONFIRMATION', 'may_act P-deploy-freeze-december medium (DEGRADED): decision');
  }
  await expectRefusal(client, 'may_act', { proposition_id: 'P-api-cert-valid', action: act('low', true), evaluated_at: '2020-01-01T00:00:00Z' },
    'EWP_REFUSE_EVALUATED_AT_SKEW', 'may_act with evaluated_at years off');
  await expectRefusal(client, 'may_act', { proposition_id: 'P-api-cert-valid', action: act('low', true), view_id: 'v-old' },
    'EWP_REFUSE_STALE_VIEW_FOR_ACTION', 'may_act on a view that is not the latest');
  await expectRefusal(client, 'may_act', { proposition_id: 'P-api-cert-valid', action: { action_id: 'a', kind: 'k', risk: 'high' } },
    'EWP_REFUSE_INVALID_ACTION', 'may_act without reversible');
  await expectRefusal(client, 'may_act', { proposition_id: 'P-api-cert-valid', action: act('high', true), risk_policy: { high_requires_accepted: false } },
    'EWP_REFUSE_CLIENT_RISK_POLICY', 'may_act with a risk_policy from an agent');
}

async function checkOtherTools(client) {
  let res = await call(client, 'list_propositions', {});
  if (ok(!res.isError, 'list_propositions: not an error', res)) {
    eq(res.structuredContent.count, 4, 'list_propositions: four example propositions');
  }
  res = await call(client, 'list_propositions', { query: 'postgresql' });
  if (ok(!res.isError, 'list_propositions query: not an error', res)) {
    eq(res.structuredContent.propositions?.[0]?.proposition_id, 'P-db-major-version', 'list_propositions query "postgresql" finds the database');
  }
  res = await call(client, 'memory_context', { proposition_id: 'P-db-major-version', evaluated_at: T });
  if (ok(!res.isError, 'memory_context: not an error', res)) {
    const w = res.structuredContent.warnings ?? [];
    ok(w.some((s) => s.startsWith('conflict=OPEN')), 'memory_context: warns conflict=OPEN', w);
    ok(w.some((s) => s.includes('OPPOSES')), 'memory_context: warns that a trusted check opposes', w);
  }
  res = await call(client, 'evidence_view_get', { proposition_id: 'P-api-cert-valid' });
  if (ok(!res.isError, 'evidence_view_get: not an error', res)) {
    eq(res.structuredContent.is_latest, true, 'evidence_view_get: latest');
    eq(res.structuredContent.view?.checks?.[0]?.check_id, 'k-openssl', 'evidence_view_get: the stored evidence');
  }
  await expectRefusal(client, 'evidence_record', {
    proposition_id: 'P-api-cert-valid', evidence_id: 'e-x', polarity: 'supports', content: 'x',
    source: { content_hash: 'sha256:00', observed_at: T },
  }, 'EWP_REFUSE_INGEST_ROLE', 'evidence_record without the ingest role');
}

async function checkResources(client) {
  const { resources } = await client.listResources();
  ok(resources.some((r) => r.uri === 'ewp://protocol'), 'resources/list: ewp://protocol');
  const { resourceTemplates } = await client.listResourceTemplates();
  const tpl = resourceTemplates.map((t) => t.uriTemplate);
  ok(tpl.includes('ewp://proposition/{proposition_id}'), 'resources/templates/list: proposition template', tpl);
  ok(tpl.includes('ewp://proposition/{proposition_id}/warrant?evaluated_at={evaluated_at}'), 'resources/templates/list: warrant template', tpl);

  let r = await client.readResource({ uri: 'ewp://protocol' });
  ok(r.contents?.[0]?.mimeType === 'text/markdown' && r.contents[0].text.includes('may_act'), 'resources/read ewp://protocol');
  r = await client.readResource({ uri: 'ewp://proposition/P-api-cert-valid' });
  eq(JSON.parse(r.contents?.[0]?.text ?? '{}').view_id, 'example-cert-1', 'resources/read proposition: latest snapshot');
  r = await client.readResource({ uri: `ewp://proposition/P-api-cert-valid/warrant?evaluated_at=${T}` });
  eq(JSON.parse(r.contents?.[0]?.text ?? '{}').warrant?.acceptance, 'ACCEPTED', 'resources/read warrant (raw ":" in the instant)');
  try {
    await client.readResource({ uri: 'ewp://proposition/P-nope' });
    ok(false, 'resources/read unknown proposition: refused');
  } catch (e) {
    eq(e.code, -32002, 'resources/read unknown proposition: -32002');
  }
}

async function checkPrompts(client) {
  const { prompts } = await client.listPrompts();
  ok(prompts.some((p) => p.name === 'packet_rules'), 'prompts/list: packet_rules');
  let p = await client.getPrompt({ name: 'packet_rules' });
  let text = p.messages?.[0]?.content?.text ?? '';
  ok(text.includes('conflict=OPEN') && text.includes('Memory is evidence'), 'prompts/get packet_rules', text.slice(0, 200));
  p = await client.getPrompt({ name: 'packet_rules', arguments: { proposition_id: 'P-db-major-version' } });
  text = p.messages?.[0]?.content?.text ?? '';
  ok(text.includes('P-db-major-version') && text.includes('memory_context'), 'prompts/get packet_rules with proposition_id', text.slice(0, 200));
}

// Several calls in flight on one connection: answers must match requests.
async function checkConcurrency(client) {
  const ids = ['P-api-cert-valid', 'P-db-major-version', 'P-backup-restores', 'P-deploy-freeze-december'];
  const calls = [];
  for (let i = 0; i < 32; i++) {
    const pid = ids[i % ids.length];
    calls.push(call(client, 'warrant_now', { proposition_id: pid, evaluated_at: T }).then((r) => r.structuredContent?.proposition_id === pid));
  }
  const results = await Promise.all(calls);
  ok(results.every(Boolean), '32 concurrent warrant_now calls: each answer matches its request');
}

// Raw HTTP properties no SDK call shows: a plain JSON POST works without a
// session, a foreign Host is refused, and a body over 1 MiB gets 413.
async function checkRawHTTP(url) {
  const post = (body, headers = {}) => fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
    body,
  });
  let res = await post(JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'warrant_now', arguments: { proposition_id: 'P-api-cert-valid', evaluated_at: T } } }));
  eq(res.status, 200, 'HTTP: a plain POST needs no session');
  const body = await res.json();
  eq(body?.result?.structuredContent?.warrant?.acceptance, 'ACCEPTED', 'HTTP: plain POST answer');
  res = await post('{"jsonrpc":"2.0","id":1,"method":"ping"}', { Origin: 'http://evil.example' });
  eq(res.status, 403, 'HTTP: a foreign Origin is refused');
  res = await post(JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'ping', params: { pad: 'x'.repeat(1 << 20) } }));
  eq(res.status, 413, 'HTTP: a body over 1 MiB is refused');
  res = await post('{"jsonrpc":"2.0","id":null,"method":"ping"}');
  const nullID = await res.json();
  eq(nullID?.error?.code, -32600, 'HTTP: "id": null is an invalid request');
}

async function main() {
  const [mode, target] = process.argv.slice(2);
  let transport;
  if (mode === 'stdio' && target) {
    transport = new StdioClientTransport({ command: target, args: ['--demo'], stderr: 'pipe' });
    transport.stderr?.on('data', () => {}); // the server logs there; keep the pipe drained
  } else if (mode === 'http' && target) {
    transport = new StreamableHTTPClientTransport(new URL(target));
  } else {
    console.error('usage: node check.mjs stdio /path/to/ewp-mcp | node check.mjs http http://127.0.0.1:PORT/mcp');
    process.exit(2);
  }
  const client = new Client({ name: 'ewp-mcp-check', version: '0.1.0' });
  await client.connect(transport);
  const proto = mode === 'http' ? `, protocol ${transport.protocolVersion}` : '';
  console.log(`info ${mode}: connected to ${JSON.stringify(client.getServerVersion())}${proto}`);
  try {
    await checkInit(client);
    await checkToolList(client);
    await checkWarrant(client);
    await checkMayAct(client);
    await checkOtherTools(client);
    await checkResources(client);
    await checkPrompts(client);
    await checkConcurrency(client);
    if (mode === 'http') await checkRawHTTP(target);
  } finally {
    await client.close();
  }
  console.log(`${mode}: ${passes} passed, ${failures} failed`);
  process.exit(failures ? 1 : 0);
}

// A hung server must not hang CI.
setTimeout(() => {
  console.error('check.mjs: timed out after 60 s');
  process.exit(2);
}, 60_000).unref();

main().catch((e) => {
  console.error('check.mjs: crashed:', e?.stack ?? e);
  process.exit(2);
});
