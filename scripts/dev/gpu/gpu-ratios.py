#!/usr/bin/env python3
"""fabdiag's GPU figures over the independent PyTorch ones, from one run of
scripts/dev/gpu/gpu-run.sh: the logs it packed (logs.tar.gz, unpacked into
DIR) are read, nothing is measured here.

    scripts/dev/gpu/gpu-ratios.py DIR

Prints one line per comparison (fabdiag's median over the repeats, the
reference, their ratio) and flags a host-only ratio below 0.90: a defect
to find, not a number to publish. A missing or failed step is named,
never guessed.
"""
import json
import re
import statistics
import sys
from pathlib import Path


def body(path):
    """A step's output without the '$ command' line gpu-run.sh puts first."""
    text = path.read_text(errors="replace")
    return text.split("\n", 1)[1] if text.startswith("$ ") else text


def first_json(path):
    """The first JSON object in a step's output (the tool may log lines
    before it)."""
    text = body(path)
    start = text.find("{")
    if start < 0:
        raise ValueError(f"{path.name}: no JSON in it")
    return json.JSONDecoder().raw_decode(text[start:])[0]


def traffic_median(doc, key, figure):
    """The median over the repeats of one host-traffic test's figure (the
    document holds every value as a string)."""
    values = []
    for name, repeat in doc.items():
        if name.startswith("repeat_") and key in repeat:
            test = repeat[key]
            if "error" in test:
                raise ValueError(f"{key} failed: {test['error']}")
            values.append(float(test[figure]))
    if not values:
        raise ValueError(f"no {key} test in the document")
    return statistics.median(values)


def loopback_gbps(path):
    """The BW[Gb/s] column of gpu-loopback-bw's table: every row's value
    (a size list gives several; the default run has one)."""
    rows = []
    seen_header = False
    for line in body(path).splitlines():
        if "BW[Gb/s]" in line:
            seen_header = True
            continue
        fields = line.split()
        if seen_header and len(fields) == 4 and re.fullmatch(r"\d+", fields[0]):
            rows.append(float(fields[2]))
    if not rows:
        raise ValueError(f"{path.name}: no table rows")
    return rows


def table_mbps(path, size):
    """The BW[MB/s] of one size's row in a pair tool's text table."""
    for line in body(path).splitlines():
        fields = line.split()
        if len(fields) == 4 and fields[0] == str(size):
            return float(fields[2])
    raise ValueError(f"{path.name}: no row for {size} B")


def json_gbps(path):
    """The first row's Gbps of a pair tool's --json document."""
    row = first_json(path)["results"][0]
    return float(row["bw_gbit_per_s"])


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    d = Path(sys.argv[1])
    problems = []
    lines = []

    def compare(what, fabdiag, reference, floor=None):
        ratio = fabdiag / reference
        flag = ""
        if floor is not None and ratio < floor:
            flag = f"  BELOW {floor}: a defect to find"
            problems.append(what)
        lines.append(f"{what:<44} {fabdiag:>10.2f} {reference:>10.2f} {ratio:>6.2f}{flag}")

    try:
        torch = first_json(d / "torch-compare.txt")
    except (OSError, ValueError) as e:
        sys.exit(f"no PyTorch reference: {e}")
    print(f"GPU: {torch.get('gpu')}; PyTorch {torch.get('torch')}, CUDA {torch.get('cuda')}")
    print(f"{'comparison (Gbps)':<44} {'fabdiag':>10} {'PyTorch':>10} {'ratio':>6}")

    steps = [
        ("host-traffic-host.txt", [
            ("host -> buffer (host only) vs pinned H2D", "host_to_buffer", "host_transfer_speed_gbps", "h2d_pinned_gbps", 0.90),
            ("host <- buffer (host only) vs pinned D2H", "host_from_buffer", "host_transfer_speed_gbps", "d2h_pinned_gbps", 0.90),
        ]),
        ("host-traffic-tile.txt", [
            ("buffer -> tile (tile only) vs D2D r+w", "buffer_to_tile", "tile_transfer_speed_gbps", "d2d_copy_read_plus_write_gbps", None),
            ("buffer <- tile (tile only) vs D2D r+w", "buffer_from_tile", "tile_transfer_speed_gbps", "d2d_copy_read_plus_write_gbps", None),
        ]),
    ]
    for name, comparisons in steps:
        try:
            doc = first_json(d / name)
            for what, key, figure, ref, floor in comparisons:
                compare(what, traffic_median(doc, key, figure), torch[ref], floor)
        except (OSError, ValueError, KeyError) as e:
            lines.append(f"{name}: {e}")
            problems.append(name)

    # one file, one figure each: (file, what, figure, reference, optional);
    # an optional file missing is left out (write-bw's pairs run in the
    # `pairs` and `before` steps, the latter only with an earlier build)
    loopback = lambda p: statistics.median(loopback_gbps(p))
    singles = [
        ("loopback-t0r0.txt", "gpu-loopback-bw GPU -> GPU vs D2D copy", loopback, "d2d_write_size_gbps", False),
        ("loopback-t0.txt", "gpu-loopback-bw GPU -> host vs D2H copy", loopback, "d2h_write_size_gbps", False),
        ("loopback-r0.txt", "gpu-loopback-bw host -> GPU vs H2D copy", loopback, "h2d_write_size_gbps", False),
        # write-bw between two processes, GPU to GPU: shm's CUDA IPC copies
        ("write-bw-gpu-shm.txt", "write-bw GPU -> GPU 4 MiB vs D2D copy", lambda p: table_mbps(p, 4194304) * 8 / 1000, "d2d_4mib_gbps", True),
        ("write-bw-gpu-shm-4194304-after.txt", "write-bw GPU -> GPU 4 MiB (-n 20) vs D2D", json_gbps, "d2d_4mib_gbps", True),
        ("write-bw-gpu-shm-67108864-after.txt", "write-bw GPU -> GPU 64 MiB vs D2D copy", json_gbps, "d2d_64mib_gbps", True),
        ("write-bw-gpu-shm-67108864-before.txt", "  the same, the build before", json_gbps, "d2d_64mib_gbps", True),
    ]
    for name, what, figure, ref, optional in singles:
        if optional and not (d / name).exists():
            continue
        try:
            compare(what, figure(d / name), torch[ref])
        except (OSError, ValueError, KeyError) as e:
            lines.append(f"{name}: {e}")
            problems.append(name)

    print("\n".join(lines))
    if problems:
        sys.exit(f"to look at: {', '.join(problems)}")


if __name__ == "__main__":
    main()
