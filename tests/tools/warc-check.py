#!/usr/bin/env python3
"""warc-check.py: reads WARC files with Python's standard library only and
checks what crawl's --warc promises, recomputing every digest.

  warc-check.py check FILE.warc.gz...   every rule below; prints one line per
                                        response (URI STATUS PAYLOAD-DIGEST
                                        [PROTOCOL]) or revisit (URI STATUS
                                        PAYLOAD-DIGEST revisit:PROFILE
                                        REFERS-TO-TARGET-URI) and "ok: N
                                        records"; exits 1 naming the first
                                        broken rule
  warc-check.py list FILE.warc.gz...    any WARC (wget's too): one line per
                                        response record, URI and the SHA-1 of
                                        its payload, recomputed; a revisit's
                                        payload is the one it refers to, its
                                        WARC-Payload-Digest
  warc-check.py payload URI FILE.warc.gz...  the HTTP body of the last
                                        response record for URI, as stored
                                        (content coding kept), on standard
                                        output; exits 1 when there is none

Rules of check: each gzip member holds exactly one record; WARC/1.1; the
first record of each file is a warcinfo; every record has a WARC-Record-ID,
a WARC-Date with a fraction of a second, a Content-Length that is the
block's; requests and responses have a WARC-Target-URI without angle
brackets, a WARC-IP-Address and a WARC-Concurrent-To naming the other
record of their pair; WARC-Block-Digest is sha1: base32 of the block and
WARC-Payload-Digest that of the HTTP body; a response's head is HTTP/1.1
syntax, and says WARC-Protocol when it came over HTTP/2. A revisit record
(WARC 1.1, 6.7) is a response's pair too: its block is the HTTP head alone,
its WARC-Profile one of the two of WARC 1.1; identical-payload-digest has a
WARC-Payload-Digest, WARC-Refers-To-Target-URI and WARC-Refers-To-Date, and
a WARC-Refers-To, when given, names a response record of the files checked
with that payload digest, target URI and date; server-not-modified is a
304's.
"""
import base64
import hashlib
import re
import sys
import zlib

DATE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{1,9}Z$")
REFDATE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z$")
IDENTICAL = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
NOT_MODIFIED = "http://netpreserve.org/warc/1.1/revisit/server-not-modified"
PROFILES = {IDENTICAL: "identical", NOT_MODIFIED: "not-modified"}


def fail(msg):
    print("warc-check: " + msg, file=sys.stderr)
    sys.exit(1)


def sha1(data):
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode()


def members(raw):
    """Yields (offset, bytes) for each gzip member of raw."""
    off = 0
    while off < len(raw):
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        out = d.decompress(raw[off:])
        out += d.flush()
        if not d.eof:
            fail(f"gzip member at offset {off} is cut short")
        used = len(raw) - off - len(d.unused_data)
        yield off, out
        off += used


def parse_records(data, where):
    """Splits uncompressed WARC data into (version, headers, block)."""
    recs = []
    pos = 0
    while pos < len(data):
        end = data.find(b"\r\n\r\n", pos)
        if end < 0:
            fail(f"{where}: record head without an end")
        lines = data[pos:end].decode("utf-8").split("\r\n")
        version = lines[0]
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "-1"))
        if length < 0:
            fail(f"{where}: no Content-Length")
        block = data[end + 4:end + 4 + length]
        if len(block) != length:
            fail(f"{where}: block shorter than its Content-Length")
        if data[end + 4 + length:end + 8 + length] != b"\r\n\r\n":
            fail(f"{where}: record does not end in CRLF CRLF")
        recs.append((version, headers, block))
        pos = end + 8 + length
    return recs


def http_body(block):
    i = block.find(b"\r\n\r\n")
    return block[i + 4:] if i >= 0 else b""


def check_revisit(where, h, block, code):
    """The rules of a revisit record; returns what its line adds."""
    profile = h.get("warc-profile", "")
    if profile not in PROFILES:
        fail(f"{where}: WARC-Profile {profile!r}")
    if http_body(block) or not block.endswith(b"\r\n\r\n"):
        fail(f"{where}: a revisit's block is the HTTP head alone")
    if profile == NOT_MODIFIED:
        if code != "304":
            fail(f"{where}: server-not-modified for a {code}")
    else:
        for f in ("warc-payload-digest", "warc-refers-to-target-uri", "warc-refers-to-date"):
            if not h.get(f):
                fail(f"{where}: identical-payload-digest without {f}")
    date = h.get("warc-refers-to-date")
    if date and not REFDATE.match(date):
        fail(f"{where}: WARC-Refers-To-Date {date!r}")
    return f" revisit:{PROFILES[profile]} {h.get('warc-refers-to-target-uri', '-')}"


def check(paths):
    n = 0
    ids = {}
    pairs = []
    refers = []
    out = []
    for path in paths:
        raw = open(path, "rb").read()
        first = True
        for off, data in members(raw):
            recs = parse_records(data, f"{path}@{off}")
            if len(recs) != 1:
                fail(f"{path}@{off}: {len(recs)} records in one gzip member")
            version, h, block = recs[0]
            where = f"{path}@{off}"
            n += 1
            if version != "WARC/1.1":
                fail(f"{where}: version {version}")
            t = h.get("warc-type")
            if first and t != "warcinfo":
                fail(f"{where}: the first record is {t}, not warcinfo")
            first = False
            rid = h.get("warc-record-id", "")
            if not re.match(r"^<urn:uuid:[0-9a-f-]{36}>$", rid):
                fail(f"{where}: WARC-Record-ID {rid!r}")
            if rid in ids:
                fail(f"{where}: WARC-Record-ID {rid} given twice")
            ids[rid] = (t, h)
            if not DATE.match(h.get("warc-date", "")):
                fail(f"{where}: WARC-Date {h.get('warc-date')!r} without a fraction of a second")
            if t not in ("request", "response", "revisit"):
                continue
            uri = h.get("warc-target-uri", "")
            if not uri.startswith(("http://", "https://")):
                fail(f"{where}: WARC-Target-URI {uri!r}")
            if not h.get("warc-ip-address"):
                fail(f"{where}: no WARC-IP-Address")
            if h.get("warc-block-digest") != sha1(block):
                fail(f"{where}: WARC-Block-Digest {h.get('warc-block-digest')} is not {sha1(block)}")
            pairs.append((where, rid, h.get("warc-concurrent-to", "")))
            head = block.split(b"\r\n", 1)[0].decode("latin-1")
            if t == "request":
                if not re.match(r"^[A-Z]+ \S+ HTTP/1\.1$", head):
                    fail(f"{where}: request line {head!r}")
                if h.get("content-type") != "application/http;msgtype=request":
                    fail(f"{where}: Content-Type {h.get('content-type')}")
                continue
            m = re.match(r"^HTTP/1\.[01] (\d{3})( .*)?$", head)
            if not m:
                fail(f"{where}: status line {head!r}")
            if h.get("content-type") != "application/http;msgtype=response":
                fail(f"{where}: Content-Type {h.get('content-type')}")
            if t == "revisit":
                more = check_revisit(where, h, block, m.group(1))
                pay = h.get("warc-payload-digest", "-")
                if h.get("warc-refers-to"):
                    refers.append((where, h))
            else:
                more = ""
                pay = sha1(http_body(block))
                if h.get("warc-payload-digest") != pay:
                    fail(f"{where}: WARC-Payload-Digest {h.get('warc-payload-digest')} is not {pay}")
            line = f"{uri} {m.group(1)} {pay}"
            if h.get("warc-protocol"):
                line += " " + h["warc-protocol"]
            if h.get("warc-truncated"):
                line += " truncated:" + h["warc-truncated"]
            out.append(line + more)
    for where, rid, other in pairs:
        kinds = {"request": ("response", "revisit"), "response": ("request",), "revisit": ("request",)}
        want = kinds.get(ids.get(rid, (None,))[0], ())
        if ids.get(other, (None,))[0] not in want:
            fail(f"{where}: WARC-Concurrent-To {other!r} names no {' or '.join(want)}")
    for where, h in refers:
        t, o = ids.get(h["warc-refers-to"], (None, {}))
        if t != "response":
            fail(f"{where}: WARC-Refers-To {h['warc-refers-to']} names no response record")
        for mine, theirs in (("warc-payload-digest", "warc-payload-digest"),
                             ("warc-refers-to-target-uri", "warc-target-uri"),
                             ("warc-refers-to-date", "warc-date")):
            if h.get(mine) and h.get(mine) != o.get(theirs):
                fail(f"{where}: {mine} {h.get(mine)} is not the referred record's {o.get(theirs)}")
    for line in out:
        print(line)
    print(f"ok: {n} records")


def list_responses(paths):
    for path in paths:
        with open(path, "rb") as f:
            raw = f.read()
        data = b"".join(d for _, d in members(raw)) if raw[:2] == b"\x1f\x8b" else raw
        for _, h, block in parse_records(data, path):
            uri = h.get("warc-target-uri", "").strip("<>")
            if h.get("warc-type") == "response":
                print(f"{uri} {sha1(http_body(block))}")
            elif h.get("warc-type") == "revisit" and h.get("warc-payload-digest"):
                print(f"{uri} {h['warc-payload-digest']}")


def payload(uri, paths):
    body = None
    for path in paths:
        with open(path, "rb") as f:
            raw = f.read()
        data = b"".join(d for _, d in members(raw)) if raw[:2] == b"\x1f\x8b" else raw
        for _, h, block in parse_records(data, path):
            if h.get("warc-type") == "response" and h.get("warc-target-uri", "").strip("<>") == uri:
                body = http_body(block)
    if body is None:
        fail(f"no response record for {uri}")
    sys.stdout.buffer.write(body)


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "payload":
        payload(sys.argv[2], sys.argv[3:])
        sys.exit(0)
    if len(sys.argv) < 3 or sys.argv[1] not in ("check", "list"):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    (check if sys.argv[1] == "check" else list_responses)(sys.argv[2:])
