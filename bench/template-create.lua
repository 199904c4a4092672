-- wrk script: every request POSTs <prefix><unique name><suffix> (run tag, thread id,
-- per-thread counter); responses other than the expected status are counted and reported on
-- one line, "unexpected-status N", that bench/lib/wrk.ts parses.
-- Script arguments: <tag> <expected status> <body prefix> <body suffix>.
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
  prefix = args[3]
  suffix = args[4]
  n = 0
  bad = 0
  headers = { ["Content-Type"] = "application/json" }
end

function request()
  n = n + 1
  return wrk.format("POST", wrk.path, headers, prefix .. tag .. "-" .. tid .. "-" .. n .. suffix)
end

function response(status, hdrs, body)
  if status ~= expected then bad = bad + 1 end
end

function done(summary, latency, requests)
  local total = 0
  for _, t in ipairs(threads) do total = total + t:get("bad") end
  io.write("unexpected-status " .. total .. "\n")
end
