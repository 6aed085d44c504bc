#!/usr/bin/env python3
"""Turns a folder of reports (tests/golden/record_reports.sh) into golden text that a reviewer can
read, in the spirit of SimGrid's .tesh files: one file per scenario folder, each report in it as a
section headed by its name and the SHA-256 of its bytes.

  - Summaries, CSV and SVG as their text; a file of more than 120 lines keeps its first 80 and last
    10 lines (the digest in the heading covers the lines left out).
  - JSON pretty-printed, keys in the report's order; an array of more than 12 items shows its
    first 3 and the digest of all of them.
  - Volatile fields are left out everywhere, digests included: "ctwin_version" (a release changes
    it, not a behaviour).
  - stderr (NAME.err) only when something was written there.

A change of behaviour then shows in `diff -u` as the lines that changed, and any byte that changed
still changes a digest.

    golden_text.py REPORTS OUT      writes OUT/NAME.golden for each folder of REPORTS (and
                                    OUT/catalog.golden for the files at its top)
"""
import hashlib
import json
import os
import re
import sys

VOLATILE = re.compile(rb'("ctwin_version"\s*:\s*)"[^"]*"')
MAX_LINES, HEAD_LINES, TAIL_LINES = 120, 80, 10
MAX_ITEMS, SHOWN_ITEMS = 12, 3


def stable_bytes(data):
    """The bytes with volatile fields' values blanked: what the digests are taken over."""
    return VOLATILE.sub(rb'\1"-"', data)


def digest(data):
    return hashlib.sha256(data).hexdigest()[:16]


def drop_volatile(value):
    if isinstance(value, dict):
        return {k: drop_volatile(v) for k, v in value.items() if k != "ctwin_version"}
    if isinstance(value, list):
        return [drop_volatile(v) for v in value]
    return value


def pretty(value, indent=0):
    """JSON as indented lines; long arrays shortened to their first items and a digest."""
    pad, inner = "  " * indent, "  " * (indent + 1)
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = ["%s%s: %s" % (inner, json.dumps(k), pretty(v, indent + 1)) for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(value, list):
        if not value:
            return "[]"
        if all(not isinstance(v, (dict, list)) for v in value) and len(value) <= MAX_ITEMS:
            return "[" + ", ".join(json.dumps(v) for v in value) + "]"
        shown = value if len(value) <= MAX_ITEMS else value[:SHOWN_ITEMS]
        items = ["%s%s" % (inner, pretty(v, indent + 1)) for v in shown]
        if len(shown) < len(value):
            canonical = json.dumps(value, separators=(",", ":"), sort_keys=False).encode()
            items.append("%s... %d items in all, sha256 %s" % (inner, len(value), digest(canonical)))
        return "[\n" + ",\n".join(items) + "\n" + pad + "]"
    return json.dumps(value)


def section(name, data):
    stable = stable_bytes(data)
    head = "=== %s  (%d bytes, sha256 %s)" % (name, len(stable), digest(stable))
    if name.endswith(".json"):
        try:
            return head + "\n" + pretty(drop_volatile(json.loads(data))) + "\n"
        except ValueError:
            pass  # not JSON after all: shown as text, and the digest says it changed
    text = stable.decode("utf-8", errors="replace")
    lines = text.splitlines()
    if len(lines) > MAX_LINES:
        left_out = len(lines) - HEAD_LINES - TAIL_LINES
        lines = lines[:HEAD_LINES] + ["... %d lines left out" % left_out] + lines[-TAIL_LINES:]
    return head + "\n" + "\n".join(lines) + ("\n" if lines else "")


def order(name):
    """A report's summary first, then its JSON, its tables, its plot: run.txt, run.json, run.csv."""
    stem, _, ext = name.rpartition(".")
    return (stem, {"txt": 0, "err": 1, "json": 2, "csv": 3}.get(ext, 4), name)


def golden_of(folder, files):
    out = []
    for name in sorted(files, key=order):
        with open(os.path.join(folder, name), "rb") as f:
            data = f.read()
        if name.endswith(".err") and not data:
            continue
        out.append(section(name, data))
    return "\n".join(out)


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    reports, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    top = sorted(n for n in os.listdir(reports) if os.path.isfile(os.path.join(reports, n)))
    if top:
        with open(os.path.join(out, "catalog.golden"), "w") as f:
            f.write(golden_of(reports, top))
    for name in sorted(os.listdir(reports)):
        folder = os.path.join(reports, name)
        if not os.path.isdir(folder) or os.path.islink(folder):
            continue
        files = []
        for root, _, names in os.walk(folder):
            files += [os.path.relpath(os.path.join(root, n), folder) for n in names]
        with open(os.path.join(out, name + ".golden"), "w") as f:
            f.write(golden_of(folder, sorted(files)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
