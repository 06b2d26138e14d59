"""The Lua scripts of the Redis log: each check-and-write is one atomic step in Redis.

Keys of one stream share the hash tag `{sid}`, so every script touches one Cluster slot.
Only `TERMINATE` writes a terminal entry: it checks `state == running` and sets the
entry and the state together, so of the racers (the producer, `cancel` with no lease,
a resumer finding the lease gone) exactly one wins; the others read the winner's.
Redis 7.0 is the floor: nothing here needs more.
"""

from __future__ import annotations

__all__ = ["APPEND", "CANCEL", "REGISTER", "RENEW", "TERMINATE"]

REGISTER = """
-- KEYS: log meta lease cancel; ARGV: token lease_ms ttl_ms message_id
-- A lease held by a live producer refuses; a finished (or dead) turn is replaced.
-- Ids start at Redis's clock, after the previous turn's, so a cursor of an earlier
-- turn is always before this one's first entry, whatever the producers' clocks say.
if not redis.call('SET', KEYS[3], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return {'running'}
end
local now = redis.call('TIME')
local start_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local previous = tonumber(redis.call('HGET', KEYS[2], 'start_ms'))
if previous then
  start_ms = math.max(start_ms, previous + 1)
end
if redis.call('EXISTS', KEYS[2]) == 1 then
  -- the previous turn's log and cancel request end with it
  redis.call('DEL', KEYS[1], KEYS[2], KEYS[4])
end
start_ms = string.format('%.0f', start_ms)
redis.call('HSET', KEYS[2], 'state', 'running', 'owner', ARGV[1],
           'message_id', ARGV[4], 'start_ms', start_ms)
redis.call('PEXPIRE', KEYS[2], ARGV[3])
-- a cancel that came before the producer (same sid, no turn yet) still counts
return {'ok', start_ms, redis.call('GET', KEYS[4])}
"""

APPEND = """
-- KEYS: log meta lease; ARGV: token maxlen ttl_ms, then id, event JSON pairs.
-- Fenced on the lease: a producer that lost it never writes again. With no meta
-- either, Redis lost the stream (a restart, a flush): no other writer has it.
if redis.call('GET', KEYS[3]) ~= ARGV[1] then
  if redis.call('EXISTS', KEYS[2]) == 0 then return 'gone' end
  return 'fenced'
end
if redis.call('HGET', KEYS[2], 'state') ~= 'running' then return 'over' end
-- A batch whose answer was lost (the connection broke after Redis ran it) is sent
-- again: its entries already in the log are skipped (XADD refuses an id at or below
-- the last one, and the batch would fail on every retry).
local top_ms, top_seq = -1, -1
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
if #last > 0 then
  local ms, seq = string.match(last[1][1], '^(%d+)-(%d+)$')
  top_ms, top_seq = tonumber(ms), tonumber(seq)
end
for i = 4, #ARGV, 2 do
  local ms, seq = string.match(ARGV[i], '^(%d+)-(%d+)$')
  ms, seq = tonumber(ms), tonumber(seq)
  if ms > top_ms or (ms == top_ms and seq > top_seq) then
    redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], ARGV[i], 'e', ARGV[i + 1])
  end
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return 'ok'
"""

TERMINATE = """
-- KEYS: log meta lease; ARGV: state event_json retention_ms token id last_seq
-- With a token (the producer): only while it holds the lease, at its own id.
-- Without (cancel, a resumer): only once the lease is gone, at the turn's last
-- possible id. Not after the last entry: a producer whose log was dropped streamed
-- on live, past the log, and its ids there must not name the terminal too (a client
-- that saw one would resume after the terminal, and never get it).
local state = redis.call('HGET', KEYS[2], 'state')
if not state then return {'unknown'} end
if state ~= 'running' then return {state} end
local holder = redis.call('GET', KEYS[3])
if ARGV[4] ~= '' then
  if holder ~= ARGV[4] then return {'fenced'} end
elseif holder then
  return {'leased'}
end
local id = ARGV[5]
if id == '' then
  id = redis.call('HGET', KEYS[2], 'start_ms') .. '-' .. ARGV[6]
end
redis.call('XADD', KEYS[1], id, 'e', ARGV[2])
redis.call('HSET', KEYS[2], 'state', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
redis.call('DEL', KEYS[3])
return {'won', id}
"""

RENEW = """
-- KEYS: lease meta log cancel; ARGV: token lease_ms ttl_ms
-- The heartbeat: keep the lease and the keys alive, and see a cancel request.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  if redis.call('EXISTS', KEYS[2]) == 0 then return {'gone'} end
  return {'fenced'}
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
redis.call('PEXPIRE', KEYS[3], ARGV[3])
return {'ok', redis.call('GET', KEYS[4])}
"""

CANCEL = """
-- KEYS: meta lease cancel; ARGV: reason ttl_ms channel sid
-- A finished turn is left alone; otherwise the request is kept (a late producer and
-- the heartbeat read it) and published to a live producer: one whose lease expired
-- after Redis failed it (its log dropped) still streams, and stops on it too.
local state = redis.call('HGET', KEYS[1], 'state')
if state and state ~= 'running' then return {state} end
redis.call('SET', KEYS[3], ARGV[1], 'PX', ARGV[2])
if not state then return {'unknown'} end
redis.call('PUBLISH', ARGV[3], ARGV[4])
if redis.call('EXISTS', KEYS[2]) == 1 then return {'running', 'leased'} end
return {'running'}
"""
