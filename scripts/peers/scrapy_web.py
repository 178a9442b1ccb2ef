#!/usr/bin/python3
"""A Scrapy spider for the synthetic web (docs/web.md): it starts from the
seeds, follows every <a href> to any host under the web's domain, obeys
robots.txt, and keeps one request per host at a time with a fixed delay,
the rules crawl is given in the same benchmark (scripts/bench-web.sh).
Each response or failure is one JSON line in OUT:
  {"url": ..., "status": N, "length": N}   or   {"url": ..., "error": "..."}

usage: scrapy_web.py SEEDS OUT [--domain D] [--concurrency N] [--per-host N]
                     [--delay S] [--timeout S] [--retry N]
"""
import argparse
import json
import sys

import scrapy
from scrapy.crawler import CrawlerProcess


class WebSpider(scrapy.Spider):
    name = "web"

    def __init__(self, seeds, out, domain, **kw):
        super().__init__(**kw)
        self.start_urls = seeds
        self.allowed_domains = [domain] if domain else []
        self.out = out

    def start_requests(self):
        for url in self.start_urls:
            yield scrapy.Request(url, callback=self.parse, errback=self.failed)

    def record(self, row):
        self.out.write(json.dumps(row) + "\n")

    def parse(self, response):
        self.record({"url": response.url, "status": response.status,
                     "length": len(response.body)})
        if not isinstance(response, scrapy.http.TextResponse):
            return
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href, callback=self.parse, errback=self.failed)

    def failed(self, failure):
        self.record({"url": failure.request.url, "error": repr(failure.value)})


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("seeds")
    ap.add_argument("out")
    ap.add_argument("--domain", default="web.test",
                    help="follow links to this domain and its subdomains only ('' for any)")
    ap.add_argument("--concurrency", type=int, default=2000)
    ap.add_argument("--per-host", type=int, default=1)
    ap.add_argument("--delay", type=float, default=0.2)
    ap.add_argument("--timeout", type=float, default=30)
    ap.add_argument("--retry", type=int, default=1)
    args = ap.parse_args()
    seeds = [l.strip() for l in open(args.seeds) if l.strip() and not l.startswith("#")]
    settings = {
        "CONCURRENT_REQUESTS": args.concurrency,
        "CONCURRENT_REQUESTS_PER_DOMAIN": args.per_host,
        "DOWNLOAD_DELAY": args.delay,
        "RANDOMIZE_DOWNLOAD_DELAY": False,
        "AUTOTHROTTLE_ENABLED": False,
        "ROBOTSTXT_OBEY": True,
        "DOWNLOAD_TIMEOUT": args.timeout,
        # Every status reaches parse(), as every status is a row of crawl's;
        # redirects are still followed.
        "HTTPERROR_ALLOW_ALL": True,
        # As crawl's --retry 1: a 5xx, 429 or a timeout is asked once more
        # (Scrapy retries at once, with no regard for Retry-After).
        "RETRY_ENABLED": True,
        "RETRY_TIMES": args.retry,
        "COOKIES_ENABLED": False,
        "TELNETCONSOLE_ENABLED": False,
        "LOG_LEVEL": "ERROR",
        "DEPTH_LIMIT": 0,
        # The name lookups of thousands of hosts go through Twisted's thread
        # pool: give it as many threads as a host's lookup could wait for.
        "REACTOR_THREADPOOL_MAXSIZE": 20,
        "REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7",
    }
    with open(args.out, "w") as out:
        process = CrawlerProcess(settings)
        process.crawl(WebSpider, seeds=seeds, out=out, domain=args.domain)
        process.start()
    return 0


if __name__ == "__main__":
    sys.exit(main())
