// The EWP gate in OpenClaw. before_tool_call asks the gate's generic
// tool-call endpoint (POST URL/hooks/tool-call, docs/hooks.md) about
// every tool call, with the agent's bearer token:
//   MAY_ACT               the call goes ahead;
//   DENY                  blocked, with the gate's reason;
//   REQUIRE_CONFIRMATION  confirm_by "user": OpenClaw's requireApproval
//                         asks the person; "operator": blocked, naming
//                         where the operator approves, or (waitMs > 0)
//                         asked again until the operator's once-approval
//                         lets it pass or the wait ends.
// Whatever fails (no URL, no answer, a non-200, an answer it cannot
// read), the call is blocked: the gate fails closed. after_tool_call
// reports what the tool did. Plain JavaScript, no dependencies.

const PLUGIN_ID = "ewp-gate";

// safe makes text the gate or an agent wrote fit to show: control, format
// (bidi, zero-width) and separator characters become \u escapes, and the
// text is cut to a bounded length.
export function safe(text, max = 2000) {
  let s = String(text ?? "");
  if (s.length > max) s = s.slice(0, max) + "…";
  return s.replace(/[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb]/gu,
    (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"));
}

function settings(api) {
  const c = api.pluginConfig ?? {};
  return {
    url: typeof c.url === "string" ? c.url.replace(/\/+$/, "") : "",
    token: process.env[c.tokenEnv || "EWP_AGENT_TOKEN"] ?? "",
    timeoutMs: Number.isInteger(c.timeoutMs) ? c.timeoutMs : 10000,
    waitMs: Number.isInteger(c.waitMs) ? c.waitMs : 0,
    pollMs: Number.isInteger(c.pollMs) ? c.pollMs : 3000,
  };
}

// ask posts one request to the endpoint and returns its parsed answer;
// it throws on anything but a 200 with a JSON object.
async function ask(cfg, body, signal) {
  if (!cfg.url) throw new Error("the plugin has no url configured (plugins.entries.ewp-gate.config.url)");
  const headers = { "content-type": "application/json" };
  if (cfg.token) headers.authorization = "Bearer " + cfg.token;
  const timeout = AbortSignal.timeout(cfg.timeoutMs);
  const res = await fetch(cfg.url + "/hooks/tool-call", {
    method: "POST", headers, body: JSON.stringify(body),
    signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
  });
  const text = await res.text();
  let answer;
  try { answer = JSON.parse(text); } catch { answer = null; }
  if (res.status !== 200) {
    throw new Error(`the gate answered ${res.status}: ${answer?.reason ?? text.slice(0, 300)}`);
  }
  if (!answer || typeof answer !== "object" || (body.event === "before" && typeof answer.decision !== "string")) {
    throw new Error("the gate's answer is not a decision");
  }
  return answer;
}

const blocked = (why) => ({ block: true, blockReason: safe(why) });

function request(event, ctx) {
  return {
    event: "before",
    tool: "openclaw/" + event.toolName,
    arguments: event.params ?? {},
    session: ctx?.sessionId ?? ctx?.sessionKey ?? event.runId ?? undefined,
    call_id: event.toolCallId ?? undefined,
    agent: ctx?.agentId ?? undefined,
  };
}

// waitForOperator asks again, without the call's id (each ask is a new
// decision, and a new decision is what finds the operator's once-approval)
// until the answer is no longer pending or the wait is over.
async function waitForOperator(cfg, body, signal) {
  const until = Date.now() + cfg.waitMs;
  const again = { ...body, call_id: undefined };
  for (;;) {
    await new Promise((r) => setTimeout(r, cfg.pollMs));
    const a = await ask(cfg, again, signal);
    if (a.decision !== "REQUIRE_CONFIRMATION" || Date.now() >= until) return a;
  }
}

async function decide(cfg, event, ctx) {
  const body = request(event, ctx);
  let a = await ask(cfg, body, ctx?.abortSignal);
  if (a.decision === "REQUIRE_CONFIRMATION" && a.confirm_by === "user") {
    return {
      requireApproval: {
        title: safe(`EWP: confirm ${event.toolName}`, 200),
        description: safe(a.reason),
        severity: "warning",
        timeoutMs: Math.max(cfg.waitMs, 120000),
        allowedDecisions: ["allow-once", "deny"],
      },
    };
  }
  if (a.decision === "REQUIRE_CONFIRMATION" && cfg.waitMs > 0) {
    a = await waitForOperator(cfg, body, ctx?.abortSignal);
  }
  if (a.decision === "MAY_ACT") return undefined;
  return blocked(a.reason || `ewp: ${a.decision}`);
}

export default {
  id: PLUGIN_ID,
  name: "EWP gate",
  description: "Asks the EWP gate before every tool call and blocks what it does not allow.",
  register(api) {
    const cfg = settings(api);
    api.on("before_tool_call", async (event, ctx) => {
      try {
        return await decide(cfg, event, ctx);
      } catch (err) {
        return blocked(`ewp: blocked: the gate could not be asked: ${err?.message ?? err}`);
      }
    }, { priority: 1000 });
    api.on("after_tool_call", async (event, ctx) => {
      const session = ctx?.sessionId ?? ctx?.sessionKey ?? event.runId;
      if (!session || !event.toolCallId) return;
      try {
        await ask(cfg, {
          event: "after", session, call_id: event.toolCallId,
          status: event.error ? "tool_error" : "ok",
          message: event.error ? String(event.error).slice(0, 500) : undefined,
        });
      } catch (err) {
        api.logger?.warn?.(safe(`ewp-gate: the result of ${event.toolName} was not recorded: ${err?.message ?? err}`));
      }
    });
  },
};
