/* state_redis_lua.c: the Lua scripts the --frontier store runs in the
 * Redis server (state_redis.c says what the keys hold). Each runs
 * atomically; KEYS[1] is the crawl's prefix, ARGV[1] mostly the worker. */
#include "state_redis_internal.h"

/* The scripts' common part: the server's clock, and the reaping of
 * silent workers. */
#define LUA_PRELUDE                                                                     \
    "local K = KEYS[1]\n"                                                               \
    "local function now() local t = redis.call('TIME')\n"                               \
    "  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) end\n"          \
    "local function reap(t, lease)\n"                                                   \
    "  local dead = redis.call('ZRANGEBYSCORE', K..'workers', '-inf', t - lease)\n"     \
    "  for _, w in ipairs(dead) do\n"                                                   \
    "    local ids = redis.call('SMEMBERS', K..'wl:'..w)\n"                             \
    "    for _, id in ipairs(ids) do redis.call('RPUSH', K..'rq', id) end\n"            \
    "    if #ids > 0 then redis.call('HINCRBY', K..'meta', 'leased', -#ids)\n"          \
    "      redis.call('HINCRBY', K..'meta', 'returned', #ids) end\n"                    \
    "    redis.call('DEL', K..'wl:'..w, K..'wlast:'..w)\n"                              \
    "    redis.call('ZREM', K..'workers', w)\n"                                         \
    "  end\n"                                                                           \
    "end\n"                                                                             \
    "local function fresh(w, req)\n"                                                    \
    "  local last = tonumber(redis.call('HGET', K..'wreq', w) or '0')\n"                \
    "  if req <= last then return false end\n"                                          \
    "  redis.call('HSET', K..'wreq', w, req)\n"                                         \
    "  return true\n"                                                                   \
    "end\n"

/* hello: ARGV worker, options, lease ms. Registers the worker unless a
 * live one has its name. Returns {status, text}: "ok" with the last
 * request id, "opts" with the options the crawl was made with, "busy". */
static const char LUA_HELLO[] = LUA_PRELUDE
    "local w, opts, lease = ARGV[1], ARGV[2], tonumber(ARGV[3])\n"
    "local t = now()\n"
    "reap(t, lease)\n"
    "local had = redis.call('HGET', K..'meta', 'opts')\n"
    "if not had then redis.call('HSET', K..'meta', 'opts', opts, 'version', '1')\n"
    "elseif had ~= opts then return {'opts', had} end\n"
    "if redis.call('ZSCORE', K..'workers', w) then return {'busy', ''} end\n"
    "redis.call('ZADD', K..'workers', t, w)\n"
    "return {'ok', redis.call('HGET', K..'wreq', w) or '0'}\n";

/* beat: ARGV worker, lease ms. The worker's heartbeat; it keeps the
 * seeding lock while it holds it. Returns 0, or 1 when the worker had
 * been reaped (its pages given back). */
static const char LUA_BEAT[] = LUA_PRELUDE
    "local w, lease = ARGV[1], tonumber(ARGV[2])\n"
    "local t = now()\n"
    "local known = redis.call('ZSCORE', K..'workers', w)\n"
    "reap(t, lease)\n"
    "known = known and redis.call('ZSCORE', K..'workers', w)\n"
    "redis.call('ZADD', K..'workers', t, w)\n"
    "if redis.call('GET', K..'seedlock') == w then\n"
    "  redis.call('PEXPIRE', K..'seedlock', lease) end\n"
    "if known then return 0 end\n"
    "return 1\n";

/* admit: ARGV worker, request id, then pairs (kind..hash, record):
 * kind S adds the hash to the seen set; L queues the record (and adds
 * its hash when there is one); F queues it when its hash is new. */
static const char LUA_ADMIT[] = LUA_PRELUDE
    "local w, req = ARGV[1], tonumber(ARGV[2])\n"
    "if not fresh(w, req) then return 0 end\n"
    "local n = 0\n"
    "for i = 3, #ARGV, 2 do\n"
    "  local kind, hash = string.sub(ARGV[i], 1, 1), string.sub(ARGV[i], 2)\n"
    "  local new = 1\n"
    "  if hash ~= '' then new = redis.call('SADD', K..'seen', hash) end\n"
    "  if kind == 'L' or (kind == 'F' and new == 1) then\n"
    "    local id = redis.call('HINCRBY', K..'meta', 'next_id', 1)\n"
    "    redis.call('HSET', K..'p', id, ARGV[i + 1])\n"
    "    redis.call('RPUSH', K..'q', id)\n"
    "    n = n + 1\n"
    "  end\n"
    "end\n"
    "return n\n";

/* lease: ARGV worker, request id, pages wanted, lease ms, --max-pages.
 * Takes pages for the worker, the given-back ones first; a page found
 * past --max-pages is dropped. Returns {queued, leased elsewhere, id,
 * record, id, record...}. */
static const char LUA_LEASE[] = LUA_PRELUDE
    "local w, req, want, lease, max = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]),\n"
    "  tonumber(ARGV[4]), tonumber(ARGV[5])\n"
    "local t = now()\n"
    "reap(t, lease)\n"
    "redis.call('ZADD', K..'workers', t, w)\n"
    "local ids = {}\n"
    "if fresh(w, req) then\n"
    "  redis.call('DEL', K..'wlast:'..w)\n"
    "  while #ids < want do\n"
    "    local again, id = true, redis.call('LPOP', K..'rq')\n"
    "    if not id then again, id = false, redis.call('LPOP', K..'q') end\n"
    "    if not id then break end\n"
    "    local rec = redis.call('HGET', K..'p', id)\n"
    "    if rec then\n"
    "      local depth = tonumber(string.match(rec, '^(%d+)'))\n"
    "      local started = tonumber(redis.call('HGET', K..'meta', 'started') or '0')\n"
    "      if not again and max > 0 and depth > 0 and started >= max then\n"
    "        redis.call('HDEL', K..'p', id)\n"
    "        redis.call('HINCRBY', K..'meta', 'dropped', 1)\n"
    "      else\n"
    "        if not again then redis.call('HINCRBY', K..'meta', 'started', 1) end\n"
    "        redis.call('SADD', K..'wl:'..w, id)\n"
    "        redis.call('HINCRBY', K..'meta', 'leased', 1)\n"
    "        redis.call('RPUSH', K..'wlast:'..w, id)\n"
    "        ids[#ids + 1] = id\n"
    "      end\n"
    "    end\n"
    "  end\n"
    "else\n"
    "  ids = redis.call('LRANGE', K..'wlast:'..w, 0, -1)\n"
    "end\n"
    "local out = {redis.call('LLEN', K..'q') + redis.call('LLEN', K..'rq'),\n"
    "  tonumber(redis.call('HGET', K..'meta', 'leased') or '0') -\n"
    "  redis.call('SCARD', K..'wl:'..w)}\n"
    "for _, id in ipairs(ids) do\n"
    "  if redis.call('SISMEMBER', K..'wl:'..w, id) == 1 then\n"
    "    out[#out + 1] = id\n"
    "    out[#out + 1] = redis.call('HGET', K..'p', id) or ''\n"
    "  end\n"
    "end\n"
    "return out\n";

/* commit: ARGV worker, request id, output offset ('' to keep it), then
 * marks: id with a suffix, f fetched, x fetched and failed, d dropped,
 * nothing done. The first commit of a page wins; a later one (a page its
 * worker held past its lease, fetched again elsewhere) counts as twice. */
static const char LUA_COMMIT[] = LUA_PRELUDE
    "local w, req, off = ARGV[1], tonumber(ARGV[2]), ARGV[3]\n"
    "if not fresh(w, req) then return 0 end\n"
    "for i = 4, #ARGV do\n"
    "  local id, how = string.match(ARGV[i], '^(%d+)(%a?)$')\n"
    "  if id then\n"
    "    local mine = redis.call('SREM', K..'wl:'..w, id)\n"
    "    if mine == 1 then redis.call('HINCRBY', K..'meta', 'leased', -1) end\n"
    "    if redis.call('HDEL', K..'p', id) == 1 then\n"
    "      if mine == 0 then redis.call('LREM', K..'rq', 0, id) end\n"
    "      if how == 'd' then redis.call('HINCRBY', K..'meta', 'dropped', 1)\n"
    "      else redis.call('HINCRBY', K..'meta', 'done', 1) end\n"
    "      if how == 'f' or how == 'x' then redis.call('HINCRBY', K..'meta', 'fetched', 1) end\n"
    "      if how == 'x' then redis.call('HINCRBY', K..'meta', 'failed', 1) end\n"
    "    elseif how ~= 'd' then redis.call('HINCRBY', K..'meta', 'twice', 1) end\n"
    "  end\n"
    "end\n"
    "if off ~= '' then redis.call('HSET', K..'woff', w, off) end\n"
    "redis.call('ZADD', K..'workers', now(), w)\n"
    "return 1\n";

/* host: ARGV worker, host, per-host bound, delay ms. Takes a slot of the
 * host (the counts of reaped workers are freed) and its next start.
 * Returns 0 when taken, -1 when its slots are full, else the ms to wait. */
static const char LUA_HOST[] = LUA_PRELUDE
    "local w, host, per, delay = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])\n"
    "local hk = K..'h:'..host\n"
    "if per > 0 then\n"
    "  local run, sum = redis.call('HGETALL', hk..':run'), 0\n"
    "  for i = 1, #run, 2 do\n"
    "    if redis.call('ZSCORE', K..'workers', run[i]) then sum = sum + tonumber(run[i + 1])\n"
    "    else redis.call('HDEL', hk..':run', run[i]) end\n"
    "  end\n"
    "  if sum >= per then return -1 end\n"
    "end\n"
    "if delay > 0 then\n"
    "  local t, nx = now(), tonumber(redis.call('GET', hk..':next') or '0')\n"
    "  if t < nx then return nx - t end\n"
    "  redis.call('SET', hk..':next', t + delay, 'PX', delay + 60000)\n"
    "end\n"
    "if per > 0 then redis.call('HINCRBY', hk..':run', w, 1) end\n"
    "return 0\n";

/* give: ARGV worker, host. Gives a slot back. */
static const char LUA_GIVE[] =
    "local hk = KEYS[1]..'h:'..ARGV[2]..':run'\n"
    "if redis.call('HINCRBY', hk, ARGV[1], -1) <= 0 then redis.call('HDEL', hk, ARGV[1]) end\n"
    "return 0\n";

const char *const redis_scripts[NSCRIPTS] = {
    LUA_HELLO, LUA_BEAT, LUA_ADMIT, LUA_LEASE, LUA_COMMIT, LUA_HOST, LUA_GIVE,
};

/* bye: ARGV worker. A worker that ends gives back what it still holds. */
const char redis_lua_bye[] =
    "local K, w = KEYS[1], ARGV[1]\n"
    "local ids = redis.call('SMEMBERS', K..'wl:'..w)\n"
    "for _, id in ipairs(ids) do redis.call('RPUSH', K..'rq', id) end\n"
    "if #ids > 0 then redis.call('HINCRBY', K..'meta', 'leased', -#ids) end\n"
    "redis.call('DEL', K..'wl:'..w, K..'wlast:'..w)\n"
    "redis.call('ZREM', K..'workers', w)\n"
    "return #ids\n";

/* left: the pages queued and leased, by every worker. */
const char redis_lua_left[] =
    "local K = KEYS[1]\n"
    "return redis.call('LLEN', K..'q') + redis.call('LLEN', K..'rq') +\n"
    "  tonumber(redis.call('HGET', K..'meta', 'leased') or '0')\n";

/* status: the crawl's counters, the server's time, the workers with their
 * last heartbeat and committed bytes. */
const char redis_lua_status[] =
    "local K = KEYS[1]\n"
    "local m = redis.call('HGETALL', K..'meta')\n"
    "local t = redis.call('TIME')\n"
    "local out = {redis.call('LLEN', K..'q') + redis.call('LLEN', K..'rq'),\n"
    "  tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000), #m}\n"
    "for _, v in ipairs(m) do out[#out + 1] = v end\n"
    "local ws = redis.call('ZRANGE', K..'workers', 0, -1, 'WITHSCORES')\n"
    "for i = 1, #ws, 2 do\n"
    "  out[#out + 1] = ws[i]\n"
    "  out[#out + 1] = ws[i + 1]\n"
    "  out[#out + 1] = redis.call('HGET', K..'woff', ws[i]) or '0'\n"
    "  out[#out + 1] = redis.call('SCARD', K..'wl:'..ws[i])\n"
    "end\n"
    "return out\n";
