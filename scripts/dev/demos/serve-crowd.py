#!/usr/bin/env python3
"""A hostile crowd in front of `fabdiag serve`, and an honest client in the middle.

Starts `fabdiag serve -p PORT` (FABDIAG: the binary, default target/release/fabdiag),
opens and holds CROWD connections for HOLD seconds: a fifth silent, a fifth sending half a
frame header, a fifth a frame that never completes, a fifth random bytes, a fifth whole frames
that are no hello (not JSON, another message, another magic); then runs an honest
`fabdiag write-bw 127.0.0.1 -p PORT -n 100` while they are held, and prints the server's
descriptors and memory before, during and after, the client's result and time, and how the
server's log lines end.

    scripts/dev/demos/serve-crowd.py [--port 47125] [--crowd 300] [--hold 20]
"""
import argparse, json, os, random, socket, struct, subprocess, sys, tempfile, time


def footprint(pid):
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    rss = next(l.split()[1] for l in open(f"/proc/{pid}/status") if l.startswith("VmRSS:"))
    return fds, int(rss)


def frame(payload):
    return struct.pack(">I", len(payload)) + payload


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=47125)
    ap.add_argument("--crowd", type=int, default=300)
    ap.add_argument("--hold", type=float, default=20)
    a = ap.parse_args()
    fab = os.environ.get("FABDIAG", "target/release/fabdiag")
    # the log to a file: a pipe read only at the end would fill and hold the server
    log = tempfile.TemporaryFile(mode="w+")
    srv = subprocess.Popen([fab, "serve", "-p", str(a.port), "--json"], stdout=log, stderr=subprocess.DEVNULL, text=True)
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", a.port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.05)
    fds0, rss0 = footprint(srv.pid)
    rnd = random.Random(7)
    hello = {"type": "hello", "magic": "fabdiag-contro1", "protocol": 1, "tool": "cxi_write_bw", "version": "0.1.0"}
    kinds = [
        b"",
        b"\x00\x00",
        b"\x00\x00\x01\x00{\"type\":\"hel",
        None,
        b"garbage",
    ]
    crowd = []
    for k in range(a.crowd):
        c = socket.create_connection(("127.0.0.1", a.port))
        kind = kinds[k % 5]
        if kind is None:
            c.sendall(bytes(rnd.randrange(256) for _ in range(64)))
        elif kind == b"garbage":
            c.sendall(rnd.choice([frame(b"\xff" + os.urandom(7)), frame(b'{"type":"barrier","phase":"ready","size":null}'), frame(json.dumps(hello).encode())]))
        elif kind:
            c.sendall(kind)
        crowd.append(c)
    fds1, rss1 = footprint(srv.pid)
    t0 = time.time()
    cli = subprocess.run([fab, "write-bw", "127.0.0.1", "-p", str(a.port), "-n", "100"], capture_output=True, text=True)
    took = time.time() - t0
    time.sleep(max(0.0, a.hold - (time.time() - t0)))
    for c in crowd:
        c.close()
    time.sleep(6)
    fds2, rss2 = footprint(srv.pid)
    srv.terminate()
    srv.wait(timeout=10)
    log.seek(0)
    out = log.read()
    ends = {}
    for line in out.splitlines():
        msg = (json.loads(line).get("error") or {}).get("message")
        if msg:
            key = msg.split(": ", 1)[-1].split(" (")[0]
            # the random bytes' announced lengths and text, as one kind each
            if key.startswith("frame of "):
                key = "frame of N bytes announced"
            elif key.startswith("received text starting"):
                key = "received text starting ..., not a fabdiag frame"
            ends[key] = ends.get(key, 0) + 1
    print(f"server before the crowd:          {fds0} descriptors, VmRSS {rss0} kB")
    print(f"server while the crowd is held:   {fds1} descriptors, VmRSS {rss1} kB")
    print(f"the honest client:                exit {cli.returncode}, {took:.1f} s from start to end")
    if cli.returncode:
        print(f"  {cli.stderr.strip()}")
    print(f"6 s after the crowd let go:       {fds2} descriptors, VmRSS {rss2} kB")
    print("server log, lines by how they end:")
    for k, n in sorted(ends.items(), key=lambda x: -x[1]):
        print(f"  {n:5d}  {k}")
    return cli.returncode


if __name__ == "__main__":
    sys.exit(main())
