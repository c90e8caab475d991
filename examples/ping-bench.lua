-- wrk script for examples/ping-bench.sh: GETs a list of paths round-robin.
-- The list is read from the file named by the environment variable PING_BENCH_PATHS (one
-- path per line, e.g. /ping/<uuid>). Each wrk thread starts at a different offset so the
-- threads do not hit the same check in lockstep.
local paths = {}
local file = os.getenv("PING_BENCH_PATHS")
if file then
  for line in io.lines(file) do
    if line ~= "" then
      paths[#paths + 1] = line
    end
  end
end
if #paths == 0 then
  paths[1] = "/"
end

local counter = 0
local thread_no = 0

function setup(thread)
  thread:set("counter", thread_no * 7919)
  thread_no = thread_no + 1
end

function request()
  counter = counter + 1
  return wrk.format("GET", paths[(counter % #paths) + 1])
end

-- Non-2xx answers are counted by wrk itself ("Non-2xx or 3xx responses").
