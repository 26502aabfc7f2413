-- wrk script for bench/webhook_ingest.sh: signed `pull_request` deliveries, each with its own
-- X-GitHub-Delivery. The bodies and their X-Hub-Signature-256 values are prepared by the shell
-- script (HMAC over the exact bytes sent); Lua only picks one and stamps a unique delivery id.

local dir = os.getenv("INGEST_BODIES")
local run = os.getenv("INGEST_RUN") or "run"
local count = tonumber(os.getenv("INGEST_BODY_COUNT"))
local threads = {}
local next_thread = 0

function setup(thread)
   thread:set("tid", next_thread)
   next_thread = next_thread + 1
   table.insert(threads, thread)
end

local bodies, signatures = {}, {}
local sent = 0

function init(args)
   for i = 1, count do
      local f = assert(io.open(string.format("%s/%d.json", dir, i), "rb"))
      bodies[i] = f:read("*a")
      f:close()
      local s = assert(io.open(string.format("%s/%d.sig", dir, i), "rb"))
      signatures[i] = s:read("*l")
      s:close()
   end
end

function request()
   sent = sent + 1
   local i = (sent * 7 + tid) % count + 1
   local headers = {
      ["Content-Type"] = "application/json",
      ["User-Agent"] = "GitHub-Hookshot/benchgate-bench",
      ["X-GitHub-Event"] = "pull_request",
      ["X-GitHub-Delivery"] = string.format("%s-%d-%d", run, tid, sent),
      ["X-Hub-Signature-256"] = signatures[i],
   }
   return wrk.format("POST", "/webhooks/github", headers, bodies[i])
end

function done(summary, latency, requests)
   local e = summary.errors
   io.write(string.format(
      "INGEST requests=%d duration_us=%d non2xx=%d connect=%d read=%d write=%d timeout=%d p50_us=%d p99_us=%d\n",
      summary.requests, summary.duration, e.status, e.connect, e.read, e.write, e.timeout,
      latency:percentile(50), latency:percentile(99)))
end
