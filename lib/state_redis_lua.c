/* state_redis_lua.c: the Lua scripts the --frontier store runs in the
 * Redis server (state_redis.c says what the keys hold). Each runs
 * atomically. KEYS[1] is the crawl's prefix; every script but hello takes
 * ARGV worker, marker, session and the last change the worker saw, and
 * first checks that the server still holds the crawl the worker joined
 * (check): its marker, its meta, no going back to an older copy (CRAWLBACK
 * with the bytes of the worker's output the copy holds committed), and for
 * a script that changes the crawl, the worker's session, which ends when
 * the worker is reaped. A script that finds the data of the crawl not
 * whole says so before it changes anything: nothing the server holds is
 * taken on trust. */
#include "state_redis_internal.h"

/* The scripts' common part: the arguments, the server's clock, the
 * checks, the change counter, the reaping of silent workers. */
#define LUA_PRELUDE                                                                     \
    "local K, w, mark, sess, seen = KEYS[1], ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])\n" \
    "local function now() local t = redis.call('TIME')\n"                               \
    "  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) end\n"          \
    "local function lost(why) return redis.error_reply('" REDIS_LOST "' .. why) end\n"   \
    "local function foreign(why) return redis.error_reply('" REDIS_FOREIGN "' .. why) end\n" \
    "local function num(k, f) return tonumber(redis.call('HGET', K..k, f) or '0') end\n" \
    "local function session()\n"                                                       \
    "  if redis.call('HGET', K..'wsess', w) ~= sess then\n"                             \
    "    if redis.call('EXISTS', K..'wsess') == 0 then return lost(K..'wsess is gone') end\n" \
    "    return redis.error_reply('" REDIS_REAPED "') end\n"                             \
    "  if not redis.call('ZSCORE', K..'workers', w) then\n"                             \
    "    return lost(K..'workers lacks this worker, '..w) end\n"                        \
    "end\n"                                                                             \
    "local function check(mine)\n"                                                      \
    "  local m = redis.call('GET', K..'id')\n"                                          \
    "  if not m then return lost(K..'id, its marker, is gone') end\n"                   \
    "  if m ~= mark then return lost(K..'id, its marker, is another crawl\\'s now') end\n" \
    "  if redis.call('HEXISTS', K..'meta', 'opts') == 0 then\n"                         \
    "    return lost(K..'meta is gone') end\n"                                          \
    "  local gen = num('meta', 'gen')\n"                                                \
    "  if gen < seen then return redis.error_reply('" REDIS_BACK "'..\n"                \
    "    (redis.call('HGET', K..'woff', w) or '0')..' '..gen..' '..seen) end\n"         \
    "  if mine then return session() end\n"                                           \
    "end\n"                                                                             \
    "local function intact()\n"                                                        \
    "  local had, n = num('meta', 'seen_n'), redis.call('SCARD', K..'seen')\n"          \
    "  if n ~= had then return lost(K..'seen holds '..n..' of the '..had..' URLs seen') end\n" \
    "  local queued, leased = num('meta', 'queued'), num('meta', 'leased')\n"           \
    "  local inq, recs = redis.call('LLEN', K..'q') + redis.call('LLEN', K..'rq') +\n" \
    "    num('meta', 'parked'), redis.call('HLEN', K..'p')\n"                          \
    "  if inq ~= queued then return lost(K..'q, '..K..'rq and the parked hold '..inq..\n" \
    "    ' pages of the '..\n"                                                          \
    "    queued..' queued') end\n"                                                      \
    "  if recs ~= queued + leased then return lost(K..'p holds '..recs..' records of the '..\n" \
    "    (queued + leased)..' pages queued or leased') end\n"                           \
    "  local ws, held, parked = redis.call('HGETALL', K..'wsess'), 0, 0\n"              \
    "  for i = 1, #ws, 2 do\n"                                                          \
    "    if ws[i + 1] ~= '0' then\n"                                                    \
    "      if not redis.call('ZSCORE', K..'workers', ws[i]) then\n"                     \
    "        return lost(K..'workers lacks worker '..ws[i]) end\n"                      \
    "      held = held + redis.call('SCARD', K..'wl:'..ws[i])\n"                         \
    "      for _, hh in ipairs(redis.call('SMEMBERS', K..'wh:'..ws[i])) do\n"           \
    "        if redis.call('HGET', K..'ho', hh) ~= ws[i] then\n"                        \
    "          return lost(K..'ho lacks '..hh..', which worker '..ws[i]..' holds') end\n" \
    "        parked = parked + redis.call('LLEN', K..'hq:'..hh)\n"                      \
    "      end\n"                                                                       \
    "    end\n"                                                                         \
    "  end\n"                                                                           \
    "  if held ~= leased then return lost(K..'wl:* hold '..held..' of the '..leased..\n" \
    "    ' pages leased') end\n"                                                        \
    "  if parked ~= num('meta', 'parked') then return lost(K..'hq lists hold '..parked..\n" \
    "    ' of the '..num('meta', 'parked')..' pages parked') end\n"                     \
    "end\n"                                                                             \
    "local function bump() return redis.call('HINCRBY', K..'meta', 'gen', 1) end\n"     \
    "local function done_req(req) return req <= num('wreq', w) end\n"                   \
    "local function take_req(req) redis.call('HSET', K..'wreq', w, req) end\n"          \
    "local function host_of(rec)\n"                                                    \
    "  local key = string.match(rec, '^' .. string.rep('[^%z]*%z', 8) .. '([^%z]+)%z')\n" \
    "  if key then return key end\n"                                                   \
    "  local url = string.match(rec, '^[^%z]*%z[^%z]*%z[^%z]*%z([^%z]*)') or ''\n"         \
    "  local sch, auth = string.match(url, '^(%a[%w+.-]*)://([^/?#]*)')\n"               \
    "  if not sch then return url end\n"                                               \
    "  sch, auth = string.lower(sch), string.lower((string.gsub(auth, '^.*@', '')))\n"  \
    "  if not string.find(auth, ':%d+$') then auth = auth..(sch == 'https' and ':443' or ':80') end\n" \
    "  return sch..'://'..auth\n"                                                      \
    "end\n"                                                                             \
    "local function let_go(d, t)\n"                                                    \
    "  for _, hh in ipairs(redis.call('SMEMBERS', K..'wh:'..d)) do\n"                  \
    "    local ps = redis.call('LRANGE', K..'hq:'..hh, 0, -1)\n"                       \
    "    for i = 1, #ps do\n"                                                          \
    "      local id = string.match(ps[i], '^r(%d+)$')\n"                               \
    "      if id then redis.call('RPUSH', K..'rq', id) end\n"                          \
    "    end\n"                                                                         \
    "    for i = #ps, 1, -1 do\n"                                                      \
    "      if string.sub(ps[i], 1, 1) ~= 'r' then redis.call('LPUSH', K..'q', ps[i]) end\n" \
    "    end\n"                                                                         \
    "    if #ps > 0 then redis.call('HINCRBY', K..'meta', 'parked', -#ps) end\n"       \
    "    redis.call('DEL', K..'hq:'..hh)\n"                                             \
    "    redis.call('HSET', K..'ho', hh, '-'..t)\n"                                     \
    "  end\n"                                                                           \
    "  redis.call('DEL', K..'wh:'..d, K..'whn:'..d)\n"                                  \
    "end\n"                                                                             \
    "local function reap(t, lease, heard)\n"                                            \
    "  local last = tonumber(redis.call('HGET', K..'meta', 'tick') or t)\n"             \
    "  redis.call('HSET', K..'meta', 'tick', t)\n"                                      \
    "  if heard and t - last > lease / 2 then\n"                                        \
    "    for _, x in ipairs(redis.call('ZRANGE', K..'workers', 0, -1)) do\n"            \
    "      redis.call('ZINCRBY', K..'workers', t - last, x) end\n"                      \
    "  end\n"                                                                           \
    "  local dead = redis.call('ZRANGEBYSCORE', K..'workers', '-inf', t - lease)\n"     \
    "  for _, d in ipairs(dead) do\n"                                                   \
    "    local ids = redis.call('SMEMBERS', K..'wl:'..d)\n"                             \
    "    for _, id in ipairs(ids) do redis.call('RPUSH', K..'rq', id) end\n"            \
    "    if #ids > 0 then redis.call('HINCRBY', K..'meta', 'leased', -#ids)\n"          \
    "      redis.call('HINCRBY', K..'meta', 'queued', #ids)\n"                          \
    "      redis.call('HINCRBY', K..'meta', 'returned', #ids) end\n"                    \
    "    let_go(d, t)\n"                                                             \
    "    redis.call('DEL', K..'wl:'..d, K..'wlast:'..d)\n"                              \
    "    redis.call('ZREM', K..'workers', d)\n"                                         \
    "    redis.call('HSET', K..'wsess', d, '0')\n"                                      \
    "    if redis.call('GET', K..'seedlock') == d then redis.call('DEL', K..'seedlock') end\n" \
    "  end\n"                                                                           \
    "end\n"

/* The reaping, explained: a worker silent for a whole lease (its last
 * heartbeat in workers older than that) loses its pages to rq and its
 * session. But when nobody at all was heard for more than half a lease
 * (every worker beats four times a lease) and the silence ends with a
 * script of a live worker (heard: its session checked), the server
 * itself, or every worker's link to it, was stopped: nobody could have
 * taken anyone's pages meanwhile, so that time counts against nobody and
 * every heartbeat moves on by it (tick: the last time a script reaped).
 * A silence that ends with a hello is not one: a worker started again
 * where the only one was killed finds it reaped once its lease is over. */

/* The keys of a crawl, with the type each must have. */
#define LUA_TYPES                                                                       \
    "local SHAPE = {id = 'string', meta = 'hash', seen = 'set', p = 'hash', q = 'list',\n" \
    "  rq = 'list', workers = 'zset', wreq = 'hash', woff = 'hash', wsess = 'hash',\n"  \
    "  wfile = 'hash', robots = 'hash', seedlock = 'string', listed = 'list',\n"        \
    "  v = 'hash', vl = 'hash', ho = 'hash'}\n"                                          \
    "local ORDER = {'id', 'meta', 'seen', 'p', 'q', 'rq', 'workers', 'wreq', 'woff',\n" \
    "  'wsess', 'wfile', 'robots', 'seedlock', 'listed', 'v', 'vl', 'ho'}\n"            \
    "local NAMES = {string = 'a string', hash = 'a hash', set = 'a set', list = 'a list',\n" \
    "  zset = 'a sorted set', stream = 'a stream'}\n"                                   \
    "local function shape_of(k, want)\n"                                                \
    "  local t = redis.call('TYPE', k).ok\n"                                            \
    "  if t ~= 'none' and t ~= want then\n"                                             \
    "    return foreign(k..' is '..(NAMES[t] or t)..', not '..NAMES[want]) end\n"       \
    "end\n"                                                                             \
    "local function types(w)\n"                                                         \
    "  for _, s in ipairs(ORDER) do\n"                                                  \
    "    local e = shape_of(K..s, SHAPE[s]) if e then return e end end\n"               \
    "  return shape_of(K..'wl:'..w, 'set') or shape_of(K..'wlast:'..w, 'list') or\n"    \
    "    shape_of(K..'wh:'..w, 'set') or shape_of(K..'whn:'..w, 'hash')\n"              \
    "end\n"

/* hello: ARGV worker, a new marker, options, lease ms, the output's
 * identity (host:device:inode). Makes the crawl when the server holds
 * none of its keys (with the new marker), and registers the worker
 * with a new session unless a live worker has its name or its output.
 * Returns {status, text...}: "ok" with the last request id, the marker,
 * the session, the last change and 1 when it made the crawl; "opts" with
 * the options the crawl was made with; "busy" with the worker's name. Or
 * an error reply, before it changed anything: a crawl there that is not
 * whole is not joined, nor reported busy or finished. */
static const char LUA_HELLO[] = LUA_PRELUDE LUA_TYPES
    "local cand, opts, lease, ident = ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5]\n"
    "local e = types(w) if e then return e end\n"
    "local had, m, made = redis.call('HGET', K..'meta', 'opts'), redis.call('GET', K..'id'), 0\n"
    "if not had then\n"
    "  if m then return lost(K..'meta is gone') end\n"
    "  for _, s in ipairs(ORDER) do\n"
    "    if redis.call('EXISTS', K..s) == 1 then\n"
    "      return foreign(K..s..' is there, but not the crawl\\'s marker, '..K..'id') end\n"
    "  end\n"
    "  redis.call('SET', K..'id', cand)\n"
    "  redis.call('HSET', K..'meta', 'opts', opts, 'version', '" REDIS_FORMAT "', 'gen', 0,\n"
    "    'tick', now())\n"
    "  m, made = cand, 1\n"
    "elseif not m then\n"
    "  if redis.call('HGET', K..'meta', 'version') == '1' then\n"
    "    return foreign(K..'meta is an older crawl\\'s, which kept no marker') end\n"
    "  return lost(K..'id, its marker, is gone')\n"
    "elseif redis.call('HGET', K..'meta', 'version') ~= '" REDIS_FORMAT "' then\n"
    "  local v = tonumber(redis.call('HGET', K..'meta', 'version')) or 0\n"
    "  return foreign(K..'meta is of format '..v..', made by '..\n"
    "    (v < " REDIS_FORMAT " and 'an older' or 'a newer')..' crawl; this crawl reads format '..\n"
    "    '" REDIS_FORMAT " only')\n"
    "elseif had ~= opts then return {'opts', had}\n"
    "else e = intact() if e then return e end end\n"
    "local t = now()\n"
    "reap(t, lease, false)\n"
    "if redis.call('ZSCORE', K..'workers', w) then return {'busy', w} end\n"
    "local holder = redis.call('HGET', K..'wfile', ident)\n"
    "if holder and holder ~= w and redis.call('ZSCORE', K..'workers', holder) then\n"
    "  return {'busy', holder} end\n"
    "redis.call('HSET', K..'wfile', ident, w)\n"
    "local s = redis.call('HINCRBY', K..'meta', 'sessions', 1)\n"
    "redis.call('HSET', K..'wsess', w, s)\n"
    "redis.call('ZADD', K..'workers', t, w)\n"
    "return {'ok', redis.call('HGET', K..'wreq', w) or '0', m, tostring(s),\n"
    "  tostring(num('meta', 'gen')), tostring(made)}\n";

/* beat: ARGV lease ms. The worker's heartbeat; it keeps the seeding lock
 * while it holds it. Returns 0, or CRAWLREAPED when the worker was
 * reaped (its pages given back). */
static const char LUA_BEAT[] = LUA_PRELUDE
    "local lease = tonumber(ARGV[5])\n"
    "local e = check(true) if e then return e end\n"
    "local t = now()\n"
    "reap(t, lease, true)\n"
    "if redis.call('HGET', K..'wsess', w) ~= sess then\n"
    "  return redis.error_reply('" REDIS_REAPED "') end\n"
    "redis.call('ZADD', K..'workers', t, w)\n"
    "if redis.call('GET', K..'seedlock') == w then\n"
    "  redis.call('PEXPIRE', K..'seedlock', lease) end\n"
    "return 0\n";

/* admit: ARGV request id, then pairs (kind..hash, record): kind S adds
 * the hash to the seen set; L queues the record (and adds its hash when
 * there is one) and keeps it in listed, for a recrawl's next pass; F
 * queues it when its hash is new. A page whose host a worker holds is
 * parked for that worker (hq:HOST) rather than queued in q. The seen set
 * must hold as many hashes as were added (seen_n). */
static const char LUA_ADMIT[] = LUA_PRELUDE
    "local req = tonumber(ARGV[5])\n"
    "local e = check(true) if e then return e end\n"
    "if done_req(req) then return 0 end\n"
    "e = intact() if e then return e end\n"
    "take_req(req)\n"
    "bump()\n"
    "local added, q, parked = 0, 0, 0\n"
    "for i = 6, #ARGV, 2 do\n"
    "  local kind, hash = string.sub(ARGV[i], 1, 1), string.sub(ARGV[i], 2)\n"
    "  local new = 1\n"
    "  if hash ~= '' then new = redis.call('SADD', K..'seen', hash) added = added + new end\n"
    "  if kind == 'L' or (kind == 'F' and new == 1) then\n"
    "    local id = redis.call('HINCRBY', K..'meta', 'next_id', 1)\n"
    "    redis.call('HSET', K..'p', id, ARGV[i + 1])\n"
    "    local hh = host_of(ARGV[i + 1])\n"
    "    local o = redis.call('HGET', K..'ho', hh)\n"
    "    if o and string.sub(o, 1, 1) ~= '-' then\n"
    "      redis.call('RPUSH', K..'hq:'..hh, id) parked = parked + 1\n"
    "    else redis.call('RPUSH', K..'q', id) end\n"
    "    if kind == 'L' then redis.call('RPUSH', K..'listed', ARGV[i + 1]) end\n"
    "    q = q + 1\n"
    "  end\n"
    "end\n"
    "if added > 0 then redis.call('HINCRBY', K..'meta', 'seen_n', added) end\n"
    "if q > 0 then redis.call('HINCRBY', K..'meta', 'queued', q) end\n"
    "if parked > 0 then redis.call('HINCRBY', K..'meta', 'parked', parked) end\n"
    "return q\n";

/* lease: ARGV request id, pages wanted, lease ms, --max-pages, whole
 * hosts (1: the worker paces its hosts itself, so each host it leases a
 * page of becomes its alone). Takes pages for the worker: first the
 * parked pages of the hosts it holds, at most 4 of each, then the
 * given-back ones, then the queue's, then more of its hosts' parked pages
 * (a large host does not hold up the others it holds), parking for its
 * holder a page of a host another worker holds (at most 4 * wanted + 64
 * pages are looked at, so that a lease stays short); a page found past --max-pages is dropped. The queue must hold
 * as many pages as were queued, and p a record of each page queued or
 * leased. Returns {change, queued, leased elsewhere, id, record, kept,
 * idle, id, record, kept, idle...}: kept the head of what v holds of the
 * page for a recrawl ('' when nothing), idle the ms since another worker
 * let the page's host go when this lease took it ('' when it did not). */
static const char LUA_LEASE[] = LUA_PRELUDE
    "local req, want, lease, max = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7]),\n"
    "  tonumber(ARGV[8])\n"
    "local whole = ARGV[9] == '1'\n"
    "local e = check(true) if e then return e end\n"
    "local t = now()\n"
    "reap(t, lease, true)\n"
    "if redis.call('HGET', K..'wsess', w) ~= sess then\n"
    "  return redis.error_reply('" REDIS_REAPED "') end\n"
    "redis.call('ZADD', K..'workers', t, w)\n"
    "e = intact() if e then return e end\n"
    "local ids, idle = {}, {}\n"
    "local function give(id, again, rec)\n"
    "  local depth = tonumber(string.match(rec, '^(%d+)'))\n"
    "  if not again and max > 0 and depth > 0 and num('meta', 'started') >= max then\n"
    "    redis.call('HDEL', K..'p', id)\n"
    "    redis.call('HINCRBY', K..'meta', 'dropped', 1)\n"
    "    return false\n"
    "  end\n"
    "  if not again then redis.call('HINCRBY', K..'meta', 'started', 1) end\n"
    "  redis.call('SADD', K..'wl:'..w, id)\n"
    "  redis.call('HINCRBY', K..'meta', 'leased', 1)\n"
    "  redis.call('RPUSH', K..'wlast:'..w, id)\n"
    "  ids[#ids + 1] = id\n"
    "  return true\n"
    "end\n"
    "if not done_req(req) then\n"
    "  take_req(req)\n"
    "  bump()\n"
    "  redis.call('DEL', K..'wlast:'..w)\n"
    "  local held = redis.call('SMEMBERS', K..'wh:'..w)\n"
    "  local function drain(per)\n"
    "    for _, hh in ipairs(held) do\n"
    "      local n = 0\n"
    "      while #ids < want and (per == 0 or n < per) do\n"
    "        local x = redis.call('LPOP', K..'hq:'..hh)\n"
    "        if not x then break end\n"
    "        n = n + 1\n"
    "        local again, id = string.match(x, '^(r?)(%d+)$')\n"
    "        if not id then return lost(K..'hq:'..hh..' holds '..x..', not a page id') end\n"
    "        redis.call('HINCRBY', K..'meta', 'parked', -1)\n"
    "        redis.call('HINCRBY', K..'meta', 'queued', -1)\n"
    "        local rec = redis.call('HGET', K..'p', id)\n"
    "        if not rec then return lost(K..'p has no record of page '..id) end\n"
    "        if give(id, again == 'r', rec) then redis.call('HINCRBY', K..'whn:'..w, hh, 1) end\n"
    "      end\n"
    "      if #ids >= want then return end\n"
    "    end\n"
    "  end\n"
    "  e = drain(4) if e then return e end\n"
    "  local looks = 4 * want + 64\n"
    "  while #ids < want and looks > 0 do\n"
    "    looks = looks - 1\n"
    "    local again, id = true, redis.call('LPOP', K..'rq')\n"
    "    if not id then again, id = false, redis.call('LPOP', K..'q') end\n"
    "    if not id then break end\n"
    "    local rec = redis.call('HGET', K..'p', id)\n"
    "    if not rec then return lost(K..'p has no record of page '..id) end\n"
    "    local hh = host_of(rec)\n"
    "    local o = redis.call('HGET', K..'ho', hh)\n"
    "    local held = o and string.sub(o, 1, 1) ~= '-'\n"
    "    if held and o ~= w then\n"
    "      redis.call('RPUSH', K..'hq:'..hh, (again and 'r' or '')..id)\n"
    "      redis.call('HINCRBY', K..'meta', 'parked', 1)\n"
    "    else\n"
    "      redis.call('HINCRBY', K..'meta', 'queued', -1)\n"
    "      if give(id, again, rec) and (held or whole) then\n"
    "        if not held then\n"
    "          redis.call('HSET', K..'ho', hh, w)\n"
    "          redis.call('SADD', K..'wh:'..w, hh)\n"
    "          local at = o and tonumber(string.sub(o, 2))\n"
    "          if at then idle[id] = math.max(t - at, 0) end\n"
    "        end\n"
    "        redis.call('HINCRBY', K..'whn:'..w, hh, 1)\n"
    "      end\n"
    "    end\n"
    "  end\n"
    "  e = drain(0) if e then return e end\n"
    "else\n"
    "  ids = redis.call('LRANGE', K..'wlast:'..w, 0, -1)\n"
    "end\n"
    "local out = {num('meta', 'gen'), num('meta', 'queued'),\n"
    "  num('meta', 'leased') - redis.call('SCARD', K..'wl:'..w)}\n"
    "for _, id in ipairs(ids) do\n"
    "  if redis.call('SISMEMBER', K..'wl:'..w, id) == 1 then\n"
    "    local rec = redis.call('HGET', K..'p', id) or ''\n"
    "    local h = string.match(rec, '^[^%z]*%z[^%z]*%z(%x+)%z')\n"
    "    out[#out + 1] = id\n"
    "    out[#out + 1] = rec\n"
    "    out[#out + 1] = h and redis.call('HGET', K..'v', h) or ''\n"
    "    out[#out + 1] = idle[id] and tostring(idle[id]) or ''\n"
    "  end\n"
    "end\n"
    "return out\n";

/* commit: ARGV request id, output offset ('' to keep it), then marks: id
 * with a suffix, f fetched, x fetched and failed, d dropped, nothing
 * done. Only pages the worker holds under its lease, each with its
 * record, are committed: a worker reaped while its rows were on their way
 * is refused (CRAWLREAPED, its pages are others' now) and commits
 * nothing. A host the worker holds, once none of its pages is leased or
 * parked, is let go (ho: '-' and the time). Returns the change it made. */
static const char LUA_COMMIT[] = LUA_PRELUDE
    "local req, off = tonumber(ARGV[5]), ARGV[6]\n"
    "local e = check(false) if e then return e end\n"
    "if done_req(req) then return num('meta', 'gen') end\n"
    "e = session()\n"
    "if e then\n"
    "  if e.err == '" REDIS_REAPED "' and #ARGV > 6 then\n"
    "    redis.call('HINCRBY', K..'meta', 'refused', #ARGV - 6) end\n"
    "  return e end\n"
    "local ids, hows, recs = {}, {}, {}\n"
    "for i = 7, #ARGV do\n"
    "  local id, how = string.match(ARGV[i], '^(%d+)(%a?)$')\n"
    "  if id then\n"
    "    if redis.call('SISMEMBER', K..'wl:'..w, id) == 0 then\n"
    "      return lost(K..'wl:'..w..' lacks page '..id..', which this worker leased') end\n"
    "    local rec = redis.call('HGET', K..'p', id)\n"
    "    if not rec then return lost(K..'p has no record of page '..id) end\n"
    "    ids[#ids + 1], hows[#ids + 1], recs[#ids + 1] = id, how, rec\n"
    "  end\n"
    "end\n"
    "take_req(req)\n"
    "local gen, t = bump(), now()\n"
    "for i, id in ipairs(ids) do\n"
    "  local how, hh = hows[i], host_of(recs[i])\n"
    "  if redis.call('HGET', K..'ho', hh) == w and\n"
    "    redis.call('HINCRBY', K..'whn:'..w, hh, -1) <= 0 then\n"
    "    redis.call('HDEL', K..'whn:'..w, hh)\n"
    "    if redis.call('LLEN', K..'hq:'..hh) == 0 then\n"
    "      redis.call('HSET', K..'ho', hh, '-'..t)\n"
    "      redis.call('SREM', K..'wh:'..w, hh)\n"
    "    end\n"
    "  end\n"
    "  redis.call('SREM', K..'wl:'..w, id)\n"
    "  redis.call('HDEL', K..'p', id)\n"
    "  redis.call('HINCRBY', K..'meta', 'leased', -1)\n"
    "  if how == 'd' then redis.call('HINCRBY', K..'meta', 'dropped', 1)\n"
    "  else redis.call('HINCRBY', K..'meta', 'done', 1) end\n"
    "  if how == 'f' or how == 'x' then redis.call('HINCRBY', K..'meta', 'fetched', 1) end\n"
    "  if how == 'x' then redis.call('HINCRBY', K..'meta', 'failed', 1) end\n"
    "end\n"
    "if off ~= '' then redis.call('HSET', K..'woff', w, off) end\n"
    "redis.call('ZADD', K..'workers', t, w)\n"
    "return gen\n";

/* host: ARGV host, per-host bound, delay ms. Takes a slot of the host
 * (the counts of reaped workers are freed) and its next start. Returns 0
 * when taken, -1 when its slots are full, else the ms to wait. */
static const char LUA_HOST[] = LUA_PRELUDE
    "local host, per, delay = ARGV[5], tonumber(ARGV[6]), tonumber(ARGV[7])\n"
    "local e = check(true) if e then return e end\n"
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

/* give: ARGV host. Gives a slot back. */
static const char LUA_GIVE[] = LUA_PRELUDE
    "local e = check(false) if e then return e end\n"
    "local hk = K..'h:'..ARGV[5]..':run'\n"
    "if redis.call('HINCRBY', hk, w, -1) <= 0 then redis.call('HDEL', hk, w) end\n"
    "return 0\n";

/* get: ARGV name. A value of the crawl's meta, or "offset": the bytes of
 * the worker's output that hold committed rows. Returns it, or nil. */
static const char LUA_GET[] = LUA_PRELUDE
    "local e = check(false) if e then return e end\n"
    "if ARGV[5] == 'offset' then return redis.call('HGET', K..'woff', w) end\n"
    "return redis.call('HGET', K..'meta', ARGV[5])\n";

/* set: ARGV name, value. Sets a value of the crawl's meta; a seeding
 * done lets go of the seeding lock. */
static const char LUA_SET[] = LUA_PRELUDE
    "local e = check(true) if e then return e end\n"
    "redis.call('HSET', K..'meta', ARGV[5], ARGV[6])\n"
    "bump()\n"
    "if ARGV[5] == 'seed_done' and ARGV[6] ~= '0' and\n"
    "  redis.call('GET', K..'seedlock') == w then redis.call('DEL', K..'seedlock') end\n"
    "return 0\n";

/* robots_get: ARGV host. Its robots.txt as stored, or nil. */
static const char LUA_ROBOTS_GET[] = LUA_PRELUDE
    "local e = check(false) if e then return e end\n"
    "return redis.call('HGET', K..'robots', ARGV[5])\n";

/* robots_put: ARGV host, robots.txt as stored. */
static const char LUA_ROBOTS_PUT[] = LUA_PRELUDE
    "local e = check(true) if e then return e end\n"
    "redis.call('HSET', K..'robots', ARGV[5], ARGV[6])\n"
    "return 0\n";

/* left: the pages queued (parked too) and leased, by every worker. */
static const char LUA_LEFT[] = LUA_PRELUDE
    "local e = check(false) if e then return e end\n"
    "return redis.call('LLEN', K..'q') + redis.call('LLEN', K..'rq') + num('meta', 'parked') +\n"
    "  num('meta', 'leased')\n";

/* seed: ARGV lease ms. The seeding's turn: 0 when the list is in, 1 when
 * this worker now holds the lock (and reads the list in), -1 while a live
 * worker holds it. A lock held by anything else (a value that names no
 * worker of the crawl, or one without an expiry, which workers always
 * set) is not the crawl's. */
static const char LUA_SEED[] = LUA_PRELUDE
    "local lease = tonumber(ARGV[5])\n"
    "local e = check(true) if e then return e end\n"
    "reap(now(), lease, true)\n"
    "if redis.call('HGET', K..'meta', 'seed_done') == '1' then return 0 end\n"
    "local holder = redis.call('GET', K..'seedlock')\n"
    "if not holder or holder == w then\n"
    "  redis.call('SET', K..'seedlock', w, 'PX', lease)\n"
    "  return 1\n"
    "end\n"
    "if not redis.call('ZSCORE', K..'workers', holder) then\n"
    "  return foreign(K..'seedlock is held by \\''..holder..'\\', which is no worker of this crawl') end\n"
    "if redis.call('PTTL', K..'seedlock') < 0 then\n"
    "  return foreign(K..'seedlock is held by \\''..holder..'\\' for good, as no worker holds it') end\n"
    "return -1\n";

/* vput: ARGV page hash (hex), the head of its record (fetched at, flags,
 * ETag, Last-Modified; '' keeps nothing of it), its links. What a recrawl
 * needs of a page: v holds the heads, vl the links. */
static const char LUA_VPUT[] = LUA_PRELUDE
    "local e = check(true) if e then return e end\n"
    "if ARGV[6] == '' then\n"
    "  redis.call('HDEL', K..'v', ARGV[5]) redis.call('HDEL', K..'vl', ARGV[5])\n"
    "else\n"
    "  redis.call('HSET', K..'v', ARGV[5], ARGV[6]) redis.call('HSET', K..'vl', ARGV[5], ARGV[7])\n"
    "end\n"
    "return 0\n";

/* vget: ARGV page hash (hex). Returns {head, links}, '' for none. */
static const char LUA_VGET[] = LUA_PRELUDE
    "local e = check(false) if e then return e end\n"
    "return {redis.call('HGET', K..'v', ARGV[5]) or '',\n"
    "  redis.call('HGET', K..'vl', ARGV[5]) or ''}\n";

/* recrawl: ARGV now (seconds since 1970), older (ms). A finished crawl's
 * next pass: the seen set emptied, the listed pages queued again (their
 * hashes seen), every count of the pass from 0, the pass numbered and
 * timed. Returns {1, pass, pages queued}, or {0} when the crawl was not
 * finished (another worker began the pass). */
static const char LUA_RECRAWL[] = LUA_PRELUDE
    "local e = check(true) if e then return e end\n"
    "if redis.call('HGET', K..'meta', 'finished') ~= '1' then return {0} end\n"
    "e = intact() if e then return e end\n"
    "bump()\n"
    "redis.call('DEL', K..'seen')\n"
    "local n = 0\n"
    "for _, rec in ipairs(redis.call('LRANGE', K..'listed', 0, -1)) do\n"
    "  local id = redis.call('HINCRBY', K..'meta', 'next_id', 1)\n"
    "  redis.call('HSET', K..'p', id, rec)\n"
    "  redis.call('RPUSH', K..'q', id)\n"
    "  local h = string.match(rec, '^[^%z]*%z[^%z]*%z(%x+)%z')\n"
    "  if h then redis.call('SADD', K..'seen', (h:gsub('..', function(x)\n"
    "    return string.char(tonumber(x, 16)) end))) end\n"
    "  n = n + 1\n"
    "end\n"
    "local pass = num('meta', 'pass') + 1\n"
    "if pass < 2 then pass = 2 end\n"
    "for _, f in ipairs({'fetched', 'done', 'failed', 'started', 'dropped', 'returned',\n"
    "  'refused'}) do redis.call('HSET', K..'meta', f, 0) end\n"
    "redis.call('HSET', K..'meta', 'queued', n, 'seen_n', redis.call('SCARD', K..'seen'),\n"
    "  'finished', 0, 'pass', pass, 'pass_started', ARGV[5], 'pass_older', ARGV[6])\n"
    "return {1, pass, n}\n";

/* bye: a worker that ends gives back what it still holds (its pages, its
 * hosts with their parked pages), and the seeding lock. Nothing when it was reaped: that gave its pages back. */
static const char LUA_BYE[] = LUA_PRELUDE
    "local e = check(false) if e then return e end\n"
    "if redis.call('HGET', K..'wsess', w) ~= sess then return 0 end\n"
    "local ids = redis.call('SMEMBERS', K..'wl:'..w)\n"
    "for _, id in ipairs(ids) do redis.call('RPUSH', K..'rq', id) end\n"
    "if #ids > 0 then redis.call('HINCRBY', K..'meta', 'leased', -#ids)\n"
    "  redis.call('HINCRBY', K..'meta', 'queued', #ids) end\n"
    "let_go(w, now())\n"
    "redis.call('DEL', K..'wl:'..w, K..'wlast:'..w)\n"
    "redis.call('ZREM', K..'workers', w)\n"
    "redis.call('HDEL', K..'wsess', w)\n"
    "if redis.call('GET', K..'seedlock') == w then redis.call('DEL', K..'seedlock') end\n"
    "return #ids\n";

/* types: the first of the crawl's keys (and the worker's) that holds a
 * value of another type than the crawl's, as a CRAWLFOREIGN error; 0
 * when there is none. */
static const char LUA_TYPES_CHECK[] = LUA_PRELUDE LUA_TYPES
    "return types(w) or 0\n";

const char *const redis_scripts[NSCRIPTS] = {
    [S_HELLO] = LUA_HELLO, [S_BEAT] = LUA_BEAT, [S_ADMIT] = LUA_ADMIT,
    [S_LEASE] = LUA_LEASE, [S_COMMIT] = LUA_COMMIT, [S_HOST] = LUA_HOST,
    [S_GIVE] = LUA_GIVE, [S_GET] = LUA_GET, [S_SET] = LUA_SET,
    [S_ROBOTS_GET] = LUA_ROBOTS_GET, [S_ROBOTS_PUT] = LUA_ROBOTS_PUT, [S_LEFT] = LUA_LEFT,
    [S_SEED] = LUA_SEED, [S_BYE] = LUA_BYE, [S_TYPES] = LUA_TYPES_CHECK,
    [S_VPUT] = LUA_VPUT, [S_VGET] = LUA_VGET, [S_RECRAWL] = LUA_RECRAWL,
};

/* status: the crawl's counters, the server's time, the workers with their
 * last heartbeat and committed bytes; CRAWLNONE when the server holds no
 * such crawl, CRAWLLOST when it holds part of one without its marker. */
const char redis_lua_status[] =
    "local K = KEYS[1]\n"
    "if not redis.call('GET', K..'id') then\n"
    "  if redis.call('EXISTS', K..'meta') == 0 then return redis.error_reply('" REDIS_NONE "') end\n"
    "  return redis.error_reply('" REDIS_LOST "'..K..'id, its marker, is gone')\n"
    "end\n"
    "if redis.call('HEXISTS', K..'meta', 'opts') == 0 then\n"
    "  return redis.error_reply('" REDIS_LOST "'..K..'meta is gone') end\n"
    "local m = redis.call('HGETALL', K..'meta')\n"
    "local t = redis.call('TIME')\n"
    "local out = {redis.call('LLEN', K..'q') + redis.call('LLEN', K..'rq') +\n"
    "  tonumber(redis.call('HGET', K..'meta', 'parked') or '0'),\n"
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
