-- wrk script for the apply scenario (bench/scenarios/apply.ts): two field managers take turns on
-- a fixed set of Deployments. Request n (this thread's n-th) goes to object n % objects at round
-- k = first + n // objects: an even round is the deployer's whole intent (new image tags and env
-- each round, no force), an odd one the autoscaler's spec.replicas (force=true). Run with one
-- thread (-t1) so n counts every request. Replies other than the expected status are counted and
-- reported on one line, "unexpected-status N", that bench/lib/wrk.ts parses.
-- Script arguments: <name prefix> <objects> <first round (even)> <expected status> <bodies file>;
--   the file's first line is the deployer's body, its second the autoscaler's: in them @N@ is
--   the object's name, @K@ the round, @R@ the replicas.
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  prefix = args[1]
  objects = tonumber(args[2])
  first = tonumber(args[3])
  expected = tonumber(args[4])
  local f = assert(io.open(args[5]))
  deployer = f:read("*l")
  scaler = f:read("*l")
  f:close()
  n = 0
  bad = 0
  headers = { ["Content-Type"] = "application/apply-patch+yaml", ["Accept"] = "application/json" }
end

function request()
  local name = prefix .. "-" .. (n % objects)
  local k = first + math.floor(n / objects)
  n = n + 1
  if k % 2 == 1 then
    local body = scaler:gsub("@N@", name):gsub("@R@", tostring(1 + k % 7))
    return wrk.format("PATCH", wrk.path .. "/" .. name .. "?fieldManager=autoscaler&force=true", headers, body)
  end
  local body = deployer:gsub("@N@", name):gsub("@K@", tostring(k))
  return wrk.format("PATCH", wrk.path .. "/" .. name .. "?fieldManager=deployer", headers, body)
end

function response(status, hdrs, body)
  if status ~= expected then bad = bad + 1 end
end

function done(summary, latency, requests)
  local total = 0
  for _, t in ipairs(threads) do total = total + t:get("bad") end
  io.write("unexpected-status " .. total .. "\n")
end
