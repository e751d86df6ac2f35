#!/usr/bin/env python3
"""Fills the guide's captured examples by running what their comment says.

A captured example in README.md or docs/*.md follows a comment that says
how it was made (crates/cli/tests/integration/docs.rs holds every such
block to the shape of what the command prints now):

    <!-- shape: fabdiag ARGS -->                          one command
    <!-- shape: server|client | fabdiag T | fabdiag T 127.0.0.1 ARGS -->

This runs each command with target/release/fabdiag on this machine and
writes its output into the block below the comment: by default only blocks
that hold the placeholder CAPTURE, with --all every block (after a change
to what a tool prints). JSON blocks are pretty-printed. serve and
sections comments are left alone (their blocks are edited by hand).

Usage: scripts/dev/capture-docs.py [--all] [PAGE...]
"""

import json
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = ROOT / "target" / "release" / "fabdiag"
PORT = "49601"


def pretty(value, indent=0):
    """JSON indented by two, but an object or array that fits in 96
    characters on one line stays on one line, so a page shows the shape of
    a document without a line per number."""
    flat = json.dumps(value, separators=(", ", ": "))
    if len(flat) + indent <= 96 or not isinstance(value, (dict, list)) or not value:
        return flat
    pad = " " * (indent + 2)
    if isinstance(value, dict):
        items = [f"{pad}{json.dumps(k)}: {pretty(v, indent + 2)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    items = [pad + pretty(v, indent + 2) for v in value]
    return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"


def run_one(args):
    p = subprocess.run([str(BIN), *args], capture_output=True, text=True, timeout=120)
    return p.stdout


def run_pair(side, server, client):
    srv = subprocess.Popen([str(BIN), *server, "-p", PORT], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.0)
    cl = subprocess.run([str(BIN), *client, "-p", PORT], capture_output=True, text=True, timeout=120)
    out, _ = srv.communicate(timeout=120)
    # the page shows the default port, as a reader would run it
    return (out if side == "server" else cl.stdout).replace(PORT, "49194")


def output(spec):
    parts = [p.strip() for p in spec.split("|")]
    words = [p.split() for p in parts]
    if len(parts) == 1:
        return run_one(words[0][1:])
    side, server, client = parts[0], words[1][1:], words[2][1:]
    return run_pair(side, server, client)


def fill(page, everything):
    lines = page.read_text().split("\n")
    changed = False
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        if not (line.startswith("<!-- shape:") and line.endswith("-->")):
            i += 1
            continue
        spec = line[len("<!-- shape:"):-len("-->")].strip()
        if spec.split("|")[0].strip() == "serve":
            i += 1
            continue
        start = i + 1
        end = next(k for k in range(start + 1, len(lines)) if lines[k].startswith("```"))
        if not everything and lines[start + 1:end] != ["CAPTURE"]:
            i = end + 1
            continue
        text = output(spec).rstrip("\n")
        if lines[start].startswith("```json"):
            text = pretty(json.loads(text))
        lines[start + 1:end] = text.split("\n")
        changed = True
        print(f"{page.relative_to(ROOT)}:{i + 1}: {spec}")
        i = start + 1
    if changed:
        page.write_text("\n".join(lines))


def main():
    everything = "--all" in sys.argv[1:]
    pages = [pathlib.Path(a).resolve() for a in sys.argv[1:] if a != "--all"]
    if not pages:
        pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    if not BIN.exists():
        sys.exit(f"capture-docs.py: {BIN} is missing: cargo build --release first")
    for page in pages:
        fill(page, everything)


if __name__ == "__main__":
    main()
