#!/usr/bin/env python3
"""Whether two sets of benchmark runs differ beyond chance, for the per-run
figures that bench.sh and psm3-bench.sh print with RUN_FIGURES=1. Not a
test of the project: a reading aid for results pages.

Unpaired (the default): the Mann-Whitney rank test (two-sided, normal
approximation, ties counted half). Prints U, z and p; p under 0.05 says
the two tools' runs are apart.

--paired: the runs given in the order they ran, A's i-th and B's i-th from
the same round of an alternation. Each round's ratio B/A (for times: A's
speed over B's) is taken, so that what moves slowly on the machine (which
host cores the vCPUs sit on, other guests' load) moves both runs of a
round and drops out of the ratio. Prints the median of the rounds' ratios,
how many rounds A was the faster (lower) in, and the Wilcoxon signed-rank
test on the logarithms of the ratios (two-sided, normal approximation):
p under 0.05 says one tool is ahead round after round.

usage: scripts/dev/rank-test.py [--paired] A1 A2 ... -- B1 B2 ...
"""
import math
import statistics
import sys


def rank_test(a, b):
    u = sum((x > y) + 0.5 * (x == y) for x in a for y in b)
    n1, n2 = len(a), len(b)
    z = (u - n1 * n2 / 2) / math.sqrt(n1 * n2 * (n1 + n2 + 1) / 12)
    return u, z, math.erfc(abs(z) / math.sqrt(2))


def ranks(values):
    """1-based ranks of `values`, ties given the mean of their ranks."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    r = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r


def signed_rank_test(a, b):
    """Median of b[i]/a[i], rounds with a lower, and Wilcoxon's W+, z, p."""
    ratios = [y / x for x, y in zip(a, b)]
    d = [math.log(q) for q in ratios if q != 1.0]
    n = len(d)
    r = ranks([abs(v) for v in d])
    w = sum(rv for rv, v in zip(r, d) if v > 0)
    sd = math.sqrt(n * (n + 1) * (2 * n + 1) / 24) if n else 0.0
    z = (w - n * (n + 1) / 4) / sd if sd else 0.0
    ahead = sum(1 for x, y in zip(a, b) if x < y)
    return statistics.median(ratios), ahead, w, z, math.erfc(abs(z) / math.sqrt(2))


def main(argv):
    paired = bool(argv) and argv[0] == "--paired"
    if paired:
        argv = argv[1:]
    if "--" not in argv:
        sys.exit("usage: rank-test.py [--paired] A1 A2 ... -- B1 B2 ...")
    cut = argv.index("--")
    try:
        a = [float(v) for v in argv[:cut]]
        b = [float(v) for v in argv[cut + 1:]]
    except ValueError as e:
        sys.exit(f"rank-test.py: not a number: {e}")
    if len(a) < 2 or len(b) < 2:
        sys.exit("rank-test.py: at least two runs on each side")
    if paired:
        if len(a) != len(b):
            sys.exit(f"rank-test.py: --paired needs as many runs on each side ({len(a)} and {len(b)})")
        if min(a + b) <= 0:
            sys.exit("rank-test.py: --paired takes positive figures (times or rates)")
        m, ahead, w, z, p = signed_rank_test(a, b)
        print(f"median ratio {m:.3f}  ahead in {ahead} of {len(a)}  W+ {w:.1f}  z {z:.2f}  p {p:.3f}")
        return
    u, z, p = rank_test(a, b)
    print(f"U {u:.1f}  z {z:.2f}  p {p:.3f}  (runs {len(a)} and {len(b)})")


if __name__ == "__main__":
    main(sys.argv[1:])
