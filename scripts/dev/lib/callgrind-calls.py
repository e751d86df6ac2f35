#!/usr/bin/env python3
"""Instructions per call, inclusive, of the functions a callgrind output
file names that match a pattern: the sum of the costs callgrind records
under each call to the function, over the number of calls. Unlike
per-iteration totals, these do not move with the number of empty polls a
busy wait happened to make, so two builds' send and receive paths compare
exactly.

usage: scripts/dev/lib/callgrind-calls.py CALLGRIND_OUT REGEX
"""
import collections
import re
import sys


def per_call(path):
    names, calls, cost = {}, collections.Counter(), collections.Counter()
    callee, pending = None, None
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if pending is not None:
                parts = line.split()
                if len(parts) >= 2:
                    cost[pending] += int(parts[1])
                pending = None
                continue
            m = re.match(r"(c?)fn=\((\d+)\)(?: (.*))?", line)
            if m:
                if m.group(3):
                    names[m.group(2)] = m.group(3)
                if m.group(1):
                    callee = names.get(m.group(2))
                continue
            if line.startswith("calls="):
                calls[callee] += int(line.split("=")[1].split()[0])
                pending = callee
    return calls, cost


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[-1])
    calls, cost = per_call(sys.argv[1])
    pattern = re.compile(sys.argv[2])
    for fn in sorted(calls, key=lambda f: -calls[f]):
        if fn and pattern.search(fn):
            print(f"{calls[fn]:9d} calls {cost[fn] / calls[fn]:9.1f} per call  {fn[:140]}")


main()
