#!/usr/bin/env python3
"""Independent reference figures for fabdiag's GPU results, measured with
PyTorch on the same GPU in the same run (scripts/dev/gpu/gpu-run.sh runs it):

- pinned host -> device and device -> host copies of one chunk (the size
  host-traffic streams), back to back on one stream, timed with CUDA events;
- a device-to-device copy of a buffer far larger than L2, counted as bytes
  read plus bytes written (what tile traffic moves);
- copies of gpu-loopback-bw's write size between device buffers and
  between device and pinned host memory;
- device-to-device copies of 4 MiB and 64 MiB (write-bw's sizes between
  two processes, which shm moves with CUDA IPC copies).

Prints one JSON object; figures in Gbps (10^9 bits per second).
"""
import json
import sys

import torch


def timed(fn, reps):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    fn()  # warm up
    torch.cuda.synchronize()
    start.record()
    for _ in range(reps):
        fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / 1e3  # seconds


def gbps(nbytes, seconds):
    return nbytes * 8 / 1e9 / seconds


def main():
    chunk = int(sys.argv[1]) if len(sys.argv) > 1 else 16 << 20
    write = int(sys.argv[2]) if len(sys.argv) > 2 else 524288
    dev = torch.device("cuda:0")
    out = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "cuda": torch.version.cuda}
    host = torch.empty(chunk, dtype=torch.uint8).pin_memory()
    d = torch.empty(chunk, dtype=torch.uint8, device=dev)
    reps = 200
    out["h2d_pinned_gbps"] = gbps(chunk * reps, timed(lambda: d.copy_(host, non_blocking=True), reps))
    out["d2h_pinned_gbps"] = gbps(chunk * reps, timed(lambda: host.copy_(d, non_blocking=True), reps))
    big = 2 << 30
    a = torch.empty(big, dtype=torch.uint8, device=dev)
    b = torch.empty(big, dtype=torch.uint8, device=dev)
    r = 10
    out["d2d_copy_read_plus_write_gbps"] = gbps(2 * big * r, timed(lambda: b.copy_(a), r))
    sa = torch.empty(write, dtype=torch.uint8, device=dev)
    sb = torch.empty(write, dtype=torch.uint8, device=dev)
    sh = torch.empty(write, dtype=torch.uint8).pin_memory()
    n = 2000
    out["loopback_size_bytes"] = write
    out["d2d_write_size_gbps"] = gbps(write * n, timed(lambda: sb.copy_(sa), n))
    out["d2h_write_size_gbps"] = gbps(write * n, timed(lambda: sh.copy_(sa, non_blocking=True), n))
    out["h2d_write_size_gbps"] = gbps(write * n, timed(lambda: sa.copy_(sh, non_blocking=True), n))
    # the pair tools' largest sizes, device to device (what shm's CUDA IPC
    # path does for write-bw between two processes)
    for size, reps in ((4 << 20, 1000), (64 << 20, 100)):
        x = torch.empty(size, dtype=torch.uint8, device=dev)
        y = torch.empty(size, dtype=torch.uint8, device=dev)
        out[f"d2d_{size >> 20}mib_gbps"] = gbps(size * reps, timed(lambda: y.copy_(x), reps))
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
