#!/usr/bin/python3
"""The article's thread-pool crawler: concurrent.futures.ThreadPoolExecutor
with requests, results in submission order (executor.map), printed in the
article's format. A peer for scripts/bench.sh.

usage: threadpool_crawl.py URL-LIST [WORKERS]   (default 10, as the article)
"""
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import requests

local = threading.local()


def fetch(url):
    # One session per worker thread: connections are reused, as crawl does.
    session = getattr(local, "session", None)
    if session is None:
        session = local.session = requests.Session()
    try:
        return len(session.get(url, timeout=(10, 30)).content)
    except Exception as exc:
        return exc


if __name__ == "__main__":
    urls = [l.strip() for l in open(sys.argv[1]) if l.strip() and not l.startswith("#")]
    workers = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    start = time.monotonic()
    with ThreadPoolExecutor(workers) as executor:
        lengths = list(executor.map(fetch, urls))
    print("Use time: {:.2f}s".format(time.monotonic() - start))
    failed = 0
    for url, length in zip(urls, lengths):
        if isinstance(length, Exception):
            failed += 1
            print("Length: {:^7} URL: {} ({})".format("error", url, length))
        else:
            print("Length: {:^7d} URL: {}".format(length, url))
    sys.exit(1 if failed else 0)
