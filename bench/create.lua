-- wrk script for the create scenario: every request POSTs a ConfigMap with a unique name
-- (run tag, thread id, per-thread counter); responses other than the expected status are
-- counted and reported on one line, "unexpected-status N", that bench/lib/wrk.ts parses.
-- Script arguments: <tag> <expected status> <pad bytes>.
local threads = {}
local next_tid = 1

function setup(thread)
  thread:set("tid", next_tid)
  next_tid = next_tid + 1
  table.insert(threads, thread)
end

function init(args)
  tag = args[1]
  expected = tonumber(args[2])
  pad = string.rep("x", tonumber(args[3]))
  n = 0
  bad = 0
  headers = { ["Content-Type"] = "application/json" }
end

function request()
  n = n + 1
  local name = tag .. "-" .. tid .. "-" .. n
  local body = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"' .. name ..
    '","labels":{"bench":"create"}},"data":{"pad":"' .. pad .. '"}}'
  return wrk.format("POST", wrk.path, headers, body)
end

function response(status, hdrs, body)
  if status ~= expected then bad = bad + 1 end
end

function done(summary, latency, requests)
  local total = 0
  for _, t in ipairs(threads) do total = total + t:get("bad") end
  io.write("unexpected-status " .. total .. "\n")
end
