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
p under 0.05 says one tool is ahead round after round. With more than one
B (`-- B... -- C...`), each round's B is the lowest of that round's B and
C: A against the better peer of each round.

--median: as --paired, the median of the rounds' ratios alone (for a
column of bench.sh and psm3-bench.sh).

A run that gave no figure is passed as an empty argument or "nan": the
rank test leaves it out, and the paired tests leave out its round (and
say how many rounds were whole).

usage: scripts/dev/lib/rank-test.py [--paired | --median] A1 A2 ... -- B1 B2 ... [-- C1 C2 ...]
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


def groups(argv):
    """The figures of A and of each peer after it, split at every `--`."""
    out, cur = [], []
    for v in argv + ["--"]:
        if v == "--":
            out.append(cur)
            cur = []
            continue
        if v.strip() in ("", "nan"):
            cur.append(None)  # a run that gave no figure
            continue
        try:
            cur.append(float(v))
        except ValueError as e:
            sys.exit(f"rank-test.py: not a number: {e}")
    return out


def main(argv):
    mode = argv[0] if argv and argv[0] in ("--paired", "--median") else None
    if mode:
        argv = argv[1:]
    if "--" not in argv:
        sys.exit("usage: rank-test.py [--paired | --median] A1 A2 ... -- B1 B2 ... [-- C1 C2 ...]")
    a, *peers = groups(argv)
    if mode:
        if any(len(b) != len(a) for b in peers):
            sys.exit(f"rank-test.py: {mode} needs as many runs on each side ({[len(g) for g in [a] + peers]})")
        rounds = len(a)
        # a round with a run that gave no figure cannot be paired
        whole = [r for r in zip(a, *peers) if None not in r]
        a = [r[0] for r in whole]
        peers = [[r[i] for r in whole] for i in range(1, len(peers) + 1)]
    else:
        rounds = None
        a = [x for x in a if x is not None]
        peers = [[x for x in b if x is not None] for b in peers]
    if len(a) < 2 or any(len(b) < 2 for b in peers):
        sys.exit("rank-test.py: at least two runs (rounds, paired) with figures on each side")
    if mode:
        if min(a + sum(peers, [])) <= 0:
            sys.exit(f"rank-test.py: {mode} takes positive figures (times or rates)")
        # each round's better (lower) peer
        b = [min(r) for r in zip(*peers)]
        m, ahead, w, z, p = signed_rank_test(a, b)
        if mode == "--median":
            print(f"{m:.2f}")
        else:
            lost = f"  ({len(a)} of {rounds} rounds whole)" if len(a) < rounds else ""
            print(f"median ratio {m:.3f}  ahead in {ahead} of {len(a)}  W+ {w:.1f}  z {z:.2f}  p {p:.3f}{lost}")
        return
    if len(peers) != 1:
        sys.exit("rank-test.py: the rank test takes one peer")
    b = peers[0]
    u, z, p = rank_test(a, b)
    print(f"U {u:.1f}  z {z:.2f}  p {p:.3f}  (runs {len(a)} and {len(b)})")


if __name__ == "__main__":
    main(sys.argv[1:])
