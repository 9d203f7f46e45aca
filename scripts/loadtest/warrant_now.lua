-- wrk script: the load test's warrant_now call on a random proposition of
-- the 100,000-proposition ledger, for a second opinion from another client:
--
--   go run ./scripts/loadtest -serve        # prints url=... ; or any ewp-mcp --http
--   wrk -t2 -c64 -d10s --latency -s scripts/loadtest/warrant_now.lua URL
--
-- wrk does not check the answers; the load test does.
local props = 100000
local n = 0

request = function()
  n = n + 1
  local body = string.format(
    '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"warrant_now",' ..
    '"arguments":{"proposition_id":"P-%07d","evaluated_at":"2026-09-21T12:00:00Z"}}}',
    n, math.random(0, props - 1))
  return wrk.format("POST", nil, {
    ["Content-Type"] = "application/json",
    ["Accept"] = "application/json, text/event-stream",
    ["MCP-Protocol-Version"] = "2025-06-18",
  }, body)
end
