#!/usr/bin/python3
"""The article's coroutine crawler: asyncio + aiohttp, every URL at once with
asyncio.gather, printed in the article's format. A peer for scripts/bench.sh.

usage: aiohttp_crawl.py URL-LIST [LIMIT]   (LIMIT 0: no connection limit)
"""
import asyncio
import sys
import time

import aiohttp


async def get_content(session, url):
    async with session.get(url) as resp:
        return await resp.read()


async def fetch(session, url):
    try:
        return len(await get_content(session, url))
    except Exception as exc:  # one failed URL must not end the run
        return exc


async def main(urls, limit):
    connector = aiohttp.TCPConnector(limit=limit, force_close=limit == 0)
    timeout = aiohttp.ClientTimeout(total=30, connect=10)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        return await asyncio.gather(*(fetch(session, u) for u in urls))


if __name__ == "__main__":
    urls = [l.strip() for l in open(sys.argv[1]) if l.strip() and not l.startswith("#")]
    limit = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    start = time.monotonic()
    lengths = asyncio.run(main(urls, limit))
    print("Use time: {:.2f}s".format(time.monotonic() - start))
    failed = 0
    for url, length in zip(urls, lengths):
        if isinstance(length, Exception):
            failed += 1
            print("Length: {:^7} URL: {} ({})".format("error", url, length))
        else:
            print("Length: {:^7d} URL: {}".format(length, url))
    sys.exit(1 if failed else 0)
