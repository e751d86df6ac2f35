#!/usr/bin/env python3
"""How easy the tree is to find one's way in, measured.

Prints, for the Rust sources under crates/:
  - lines per crate (every .rs file, tests and examples included);
  - the longest functions (name, file, lines from `fn` to its closing brace);
  - import circles between files of one crate: files that reach each other
    through `use crate::...`, `crate::...` paths, `super::...` or a child
    module's name, found as strongly connected components of that graph.

Usage: scripts/dev/support/tree-metrics.py [--top N] [--over LINES] [ROOT]
Exit status 0 always: it measures, it does not judge (the test suite does).
"""
import argparse
import os
import re
import sys
from collections import defaultdict


def strip_code(text):
    """The text with comments, string and char literals blanked out (same
    length, newlines kept), so braces and paths are only the code's own."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:i + 40]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'r(#*)"', text[i:])
            end = '"' + m.group(1)
            j = text.find(end, i + len(m.group(0)))
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "'":
            # a char literal ('x', '\n', '\u{..}') or a lifetime ('a)
            m = re.match(r"'(\\.[^']*|[^'\\])'", text[i:i + 12])
            if m:
                out.append(" " * len(m.group(0)))
                i += len(m.group(0))
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


FN = re.compile(r"\bfn\s+([A-Za-z_][A-Za-z0-9_]*)")


def functions(path):
    """(name, first line, line count) of every fn with a body in the file."""
    text = open(path, encoding="utf-8").read()
    code = strip_code(text)
    found = []
    for m in FN.finditer(code):
        # the body starts at the first '{' after the signature, unless a ';'
        # ends a bodiless declaration first (trait methods, extern fns)
        j = m.end()
        depth_paren = 0
        while j < len(code):
            ch = code[j]
            if ch in "(<[":
                depth_paren += 1
            elif ch in ")>]":
                depth_paren -= 1
            elif ch == ";" and depth_paren <= 0:
                j = -1
                break
            elif ch == "{" and depth_paren <= 0:
                break
            j += 1
        if j < 0 or j >= len(code):
            continue
        depth, k = 0, j
        while k < len(code):
            if code[k] == "{":
                depth += 1
            elif code[k] == "}":
                depth -= 1
                if depth == 0:
                    break
            k += 1
        start = code.count("\n", 0, m.start()) + 1
        end = code.count("\n", 0, k) + 1
        found.append((m.group(1), start, end - start + 1))
    return found


def rust_files(root):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in ("target", ".git")]
        for f in filenames:
            if f.endswith(".rs"):
                yield os.path.join(dirpath, f)


def crate_of(path, crates_dir):
    rel = os.path.relpath(path, crates_dir)
    return rel.split(os.sep)[0]


def module_map(src):
    """Module path (tuple) -> file, for one crate's src/ tree."""
    mods = {}
    for path in rust_files(src):
        rel = os.path.relpath(path, src)[:-3].split(os.sep)
        if rel[-1] in ("lib", "main") and len(rel) == 1:
            mods[()] = path
        elif rel[-1] == "mod":
            mods[tuple(rel[:-1])] = path
        else:
            mods[tuple(rel)] = path
    return mods


PATH = re.compile(r"\b(crate|super|self)((?:\s*::\s*[A-Za-z_][A-Za-z0-9_]*)+)")
USE_GROUP = re.compile(r"\buse\s+(crate|super|self)\s*::\s*\{([^;]*)\}\s*;", re.S)


def reexports(mods):
    """(module, name) -> module path the name is re-exported from, for every
    `pub use` in a module file: a facade is not where an item lives."""
    out = {}
    for mp, path in mods.items():
        code = strip_code(open(path, encoding="utf-8").read())
        for m in re.finditer(r"\bpub(?:\([^)]*\))?\s+use\s+([^;]+);", code):
            body = re.sub(r"\s+", "", m.group(1))
            g = re.match(r"(.*?)::\{(.*)\}$", body)
            prefix, items = (g.group(1), g.group(2).split(",")) if g else (body.rsplit("::", 1)[0], [body.rsplit("::", 1)[-1]])
            head = prefix.split("::")
            for item in items:
                item = item.split("::")[-1].split(" as ")[-1]
                if item and item != "self":
                    out[(mp, item)] = (head, mp)
    return out


def resolve(mods, here, head, names, rex=None):
    """The file a path from module `here` lands in (the longest module
    prefix, following re-exports), or None."""
    if head == "crate":
        base = ()
    elif head == "self":
        base = here
    else:
        base = here[:-1]
        while names and names[0] == "super":
            base, names = base[:-1], names[1:]
    best = None
    cur = base
    if cur in mods:
        best = mods[cur]
    for name in names:
        if rex and (cur, name) in rex:
            (phead, origin) = rex[(cur, name)]
            h, rest = phead[0], phead[1:]
            if h in ("crate", "super", "self"):
                f = resolve(mods, origin, h, rest + [name], None)
            else:
                f = resolve(mods, origin, "self", phead + [name], None)
            return f or best
        cur = cur + (name,)
        if cur in mods:
            best = mods[cur]
        else:
            break
    return best


def import_graph(src):
    mods = module_map(src)
    rex = reexports(mods)
    files = {v: k for k, v in mods.items()}
    edges = defaultdict(set)
    for path, here in files.items():
        code = strip_code(open(path, encoding="utf-8").read())
        # inline #[cfg(test)] modules import their parent by design: drop them
        code = re.sub(r"#\[cfg\(test\)\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*\{.*", "", code, flags=re.S)
        # re-exports make a facade, not a dependency
        code = re.sub(r"\bpub(?:\([^)]*\))?\s+use\s+[^;]+;", "", code)
        targets = []
        for m in PATH.finditer(code):
            names = [s.strip() for s in m.group(2).split("::") if s.strip()]
            targets.append((m.group(1), names))
        for m in USE_GROUP.finditer(code):
            for part in re.split(r",(?![^{]*\})", m.group(2)):
                names = [s.strip() for s in re.split(r"::|\{", part) if s.strip() and s.strip() != "}"]
                if names:
                    targets.append((m.group(1), names))
        # a bare child module name used as a path (`child::item`), resolved
        # as far as it names modules
        for (mp, f) in mods.items():
            if len(mp) == len(here) + 1 and mp[:-1] == here:
                pat = r"(?<![:\w$])" + re.escape(mp[-1]) + r"((?:\s*::\s*[A-Za-z_][A-Za-z0-9_]*)+)"
                for m in re.finditer(pat, code):
                    names = [mp[-1]] + [x.strip() for x in m.group(1).split("::") if x.strip()]
                    g = resolve(mods, here, "self", names, rex)
                    if g and g != path:
                        edges[path].add(g)
        for head, names in targets:
            f = resolve(mods, here, head, names, rex)
            if f and f != path:
                edges[path].add(f)
    return files, edges


def circles(files, edges):
    """Strongly connected components with more than one file (Tarjan)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in files:
        if v not in index:
            visit(v)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("root", nargs="?", default=os.path.join(os.path.dirname(__file__), "..", "..", ".."))
    ap.add_argument("--top", type=int, default=15, help="longest functions to list")
    ap.add_argument("--over", type=int, default=120, help="count functions longer than this")
    ap.add_argument("--why", action="store_true", help="list each circle's edges")
    args = ap.parse_args()
    crates_dir = os.path.join(args.root, "crates")

    lines = defaultdict(int)
    fns = []
    for path in rust_files(crates_dir):
        crate = crate_of(path, crates_dir)
        lines[crate] += sum(1 for _ in open(path, encoding="utf-8"))
        for name, start, count in functions(path):
            fns.append((count, os.path.relpath(path, args.root), start, name))

    print("## Lines per crate")
    for crate in sorted(lines, key=lambda c: -lines[c]):
        print(f"{lines[crate]:7d}  {crate}")
    print(f"{sum(lines.values()):7d}  total")

    fns.sort(reverse=True)
    print(f"\n## Longest functions (of {len(fns)}; {sum(1 for f in fns if f[0] > args.over)} over {args.over} lines)")
    for count, path, start, name in fns[: args.top]:
        print(f"{count:5d}  {name}  {path}:{start}")

    print("\n## Import circles between files")
    total = 0
    for crate in sorted(os.listdir(crates_dir)):
        src = os.path.join(crates_dir, crate, "src")
        if not os.path.isdir(src):
            continue
        files, edges = import_graph(src)
        for comp in circles(files, edges):
            total += 1
            print(f"  {crate}: " + ", ".join(os.path.relpath(f, src) for f in comp))
            if args.why:
                for f in comp:
                    for t in sorted(edges[f] & set(comp)):
                        print(f"      {os.path.relpath(f, src)} -> {os.path.relpath(t, src)}")
    print(f"{total} circle(s)")


if __name__ == "__main__":
    main()
