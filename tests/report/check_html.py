#!/usr/bin/env python3
"""check_html.py PAGE NBUFS [NEVICTED]: the page remat-report wrote is
well-formed (XML, hence also HTML), self-contained (no script, no external
reference) and has the two SVG charts with one lifetime bar per buffer."""
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

SVG = "{http://www.w3.org/2000/svg}"


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


path, nbufs = sys.argv[1], int(sys.argv[2])
nevicted = int(sys.argv[3]) if len(sys.argv) > 3 else 0
text = open(path, encoding="utf-8").read()


class Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        for k, v in attrs:
            if k in ("src", "href") or (v and ("http:" in v or "https:" in v) and k != "xmlns"):
                fail("external reference %s=%s" % (k, v))


p = Tags()
p.feed(text)
if "script" in p.tags:
    fail("the page has a script")
for tag in ("html", "head", "title", "style", "body", "table"):
    if tag not in p.tags:
        fail("no <%s>" % tag)

try:
    root = ET.fromstring(text)
except ET.ParseError as e:
    fail("not well-formed: %s" % e)
svgs = {s.get("class"): s for s in root.iter(SVG + "svg")}
if set(svgs) != {"memory", "lifetimes"}:
    fail("svg charts: %s" % sorted(svgs))
bars = [r for r in svgs["lifetimes"].iter(SVG + "rect") if "bar" in r.get("class", "").split()]
if len(bars) != nbufs:
    fail("%d lifetime bars, want one per buffer (%d)" % (len(bars), nbufs))
if sorted(int(b.get("data-buf")) for b in bars) != list(range(nbufs)):
    fail("bars do not cover buffers 0..%d once each" % (nbufs - 1))
for b in bars:
    if float(b.get("width")) <= 0:
        fail("bar for buffer %s has no width" % b.get("data-buf"))
ev = [r for r in svgs["lifetimes"].iter(SVG + "rect") if r.get("class") == "evicted"]
if len(ev) != nevicted:
    fail("%d evicted gaps drawn, want %d" % (len(ev), nevicted))
if not any(p.get("class", "").startswith("area periter") for p in svgs["memory"].iter(SVG + "path")):
    fail("memory chart has no per-iteration area")
print("ok: %d bars, %d evicted gaps" % (len(bars), len(ev)))
