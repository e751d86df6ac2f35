#!/usr/bin/env python3
"""Whether two sets of benchmark runs differ beyond chance: the
Mann-Whitney rank test (two-sided, normal approximation, ties counted
half), for the per-run figures that bench.sh and psm3-bench.sh print with
RUN_FIGURES=1. Prints U, z and p; p under 0.05 says the two tools' runs
are apart. Not a test of the project: a reading aid for results pages.

usage: scripts/dev/rank-test.py A1 A2 ... -- B1 B2 ...
"""
import math
import sys


def rank_test(a, b):
    u = sum((x > y) + 0.5 * (x == y) for x in a for y in b)
    n1, n2 = len(a), len(b)
    z = (u - n1 * n2 / 2) / math.sqrt(n1 * n2 * (n1 + n2 + 1) / 12)
    return u, z, math.erfc(abs(z) / math.sqrt(2))


def main(argv):
    if "--" not in argv:
        sys.exit("usage: rank-test.py A1 A2 ... -- B1 B2 ...")
    cut = argv.index("--")
    try:
        a = [float(v) for v in argv[:cut]]
        b = [float(v) for v in argv[cut + 1:]]
    except ValueError as e:
        sys.exit(f"rank-test.py: not a number: {e}")
    if len(a) < 2 or len(b) < 2:
        sys.exit("rank-test.py: at least two runs on each side")
    u, z, p = rank_test(a, b)
    print(f"U {u:.1f}  z {z:.2f}  p {p:.3f}  (runs {len(a)} and {len(b)})")


if __name__ == "__main__":
    main(sys.argv[1:])
