#!/usr/bin/env bash
# On a GPU machine, in a copy of the repository with gpu-kit/ copied into
# its root (scripts/dev/gpu/gpu-kit.sh builds it on a machine with Rust):
# build libfabric with CUDA, run the GPU test path, run the real tools,
# and measure the independent reference figures, all packed under $OUT
# (copy $OUT back to read them). Every step has its own time limit and its
# own log, so one failure does not hide the rest.
# Usage: scripts/dev/gpu/gpu-run.sh [STEP...]  (default: all steps)
#   steps: info libfabric traffic loopback compare pairs tests serve before ratios
#   before: if gpu-kit/fabdiag-before exists (an earlier build), the
#   measurements a change touched, with it and with this build, side by
#   side on the same machine
#   (the default order: the most important measurements first, so a run
#   cut short by its deadline keeps them)
# GPU_RUN_DEADLINE=SECONDS (default 540: nine minutes) caps the whole
# run; each step's limit is cut to what is left of it, and a step with
# under 5 s left is skipped and says so in steps.txt.
# The libfabric step also leaves its build in $OUT/libfabric-built.tar.gz:
# copied into gpu-kit/ before the next run (on this machine or a fresh
# one), it is unpacked instead of built again (the step is then a few
# seconds).
set -u
OUT=${OUT:-/tmp/fabdiag-gpu-out}
mkdir -p "$OUT"
# $OUT holds few files, to be easy to copy back: every log goes to $LOGS
# and is packed into $OUT/logs.tar.gz after each step (so a run stopped at
# its time limit still leaves what ran), beside $OUT/steps.txt and the
# libfabric build.
LOGS=${LOGS:-/tmp/fabdiag-gpu-logs}
mkdir -p "$LOGS"
pack() {
  tar czf "$OUT/logs.tar.gz.part" -C "$LOGS" . && mv "$OUT/logs.tar.gz.part" "$OUT/logs.tar.gz"
  cp "$LOGS/steps.txt" "$OUT/steps.txt" 2>/dev/null
  return 0
}
kit=$PWD/gpu-kit
F=$kit/fabdiag
export FABDIAG_TEST_BIN=$F
export FABDIAG_LIBFABRIC=$kit/libfabric/lib/libfabric.so.1
# the toolkit: CUDA_HOME, else /usr/local/cuda, else wherever nvcc lives
if [ -z "${CUDA_HOME:-}" ] && [ ! -d /usr/local/cuda ] && command -v nvcc >/dev/null; then
  CUDA_HOME=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")
fi
cuda=${CUDA_HOME:-/usr/local/cuda}
# libfabric's CUDA support opens the toolkit's libcudart at run time; the
# 1.22 fallback also opens the driver as "libcuda.so", a development name
# a driver-only machine may lack, so one points at the driver's .so.1
links=/tmp/fabdiag-cuda-links
mkdir -p "$links"
drv=$(ldconfig -p 2>/dev/null | awk '/libcuda\.so\.1 /{print $NF; exit}')
[ -n "$drv" ] && ln -sf "$drv" "$links/libcuda.so"
# and libfabric's CUDA support opens the runtime as "libcudart.so", which
# only a toolkit's lib64 has: where that is missing, the versioned one
# found elsewhere (PyTorch's wheels carry libcudart.so.13 alone; seen with
# a libfabric 2.6 built against CUDA 13's headers: "Failed to dlopen
# libcudart.so")
if [ ! -e "$cuda/lib64/libcudart.so" ]; then
  rt=$(find "$cuda" /usr/local/lib /usr/lib /opt -name 'libcudart.so.1[0-9]*' 2>/dev/null | sort -V | tail -1)
  [ -n "$rt" ] && ln -sf "$rt" "$links/libcudart.so"
fi
export LD_LIBRARY_PATH=$cuda/lib64:$links${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
steps=${*:-info libfabric traffic loopback compare pairs tests serve before ratios}
deadline=${GPU_RUN_DEADLINE:-540}
log() { echo "== $*" | tee -a "$LOGS/steps.txt"; pack; }
left() { echo $((deadline - SECONDS)); }
capped() { # SECONDS: as many, but never past the run's deadline, with
  # 5 s kept for packing
  local most=$(($(left) - 5))
  echo $(($1 < most ? $1 : most))
}
run() { # NAME SECONDS CMD...: output to $LOGS/NAME.txt, status to steps.txt
  local name=$1 secs; secs=$(capped "$2"); shift 2
  local t0=$SECONDS
  if [ "$secs" -lt 5 ]; then log "$name skipped (deadline)"; return; fi
  echo "\$ $*" >"$LOGS/$name.txt"
  timeout "$secs" "$@" >>"$LOGS/$name.txt" 2>&1
  local rc=$?
  log "$name rc=$rc $((SECONDS - t0))s"
}
serve_bg() { # NAME SECONDS CMD...: a server in the background, bounded by
  # the deadline like any step (a server whose client never came would
  # otherwise wait for ever); its PID in $srv
  local name=$1 secs; secs=$(capped "$2"); shift 2
  [ "$secs" -lt 5 ] && secs=5
  timeout "$secs" "$@" >"$LOGS/$name.txt" 2>&1 &
  srv=$!
}
reap() { # NAME [TENTHS]: the background server's end, at most TENTHS of a
  # second (default 150) after its client
  for _ in $(seq "${2:-150}"); do kill -0 "$srv" 2>/dev/null || break; sleep 0.1; done
  kill -TERM "$srv" 2>/dev/null
  wait "$srv"; log "$1 rc=$?"
}
pair() { # NAME BINARY TOOL PORT CLIENT_ARGS...: TOOL's server and client
  # as two processes over shm, both with their buffers on GPU 0; the
  # client's output in $LOGS/NAME.txt, the server's in NAME-server.txt
  local name=$1 bin=$2 tool=$3 port=$4; shift 4
  serve_bg "$name-server" 70 "$bin" "$tool" -P shm -p "$port" -t 0 -r 0
  listening "$port" "$srv"
  run "$name" 60 "$bin" "$tool" 127.0.0.1 -p "$port" -P shm "$@" -t 0 -r 0
  reap "$name-server"
}
listening() { # PORT PID: up to 10 s for a server's port (a GPU runtime
  # may load slowly), or until it has exited: one that failed to start is
  # not waited for
  for _ in $(seq 100); do
    grep -qE ":$(printf '%04X' "$1") [0-9A-F]+:0000 0A" /proc/net/tcp /proc/net/tcp6 2>/dev/null && return
    kill -0 "$2" 2>/dev/null || return
    sleep 0.1
  done
}
for s in $steps; do
  if [ "$(left)" -lt 10 ]; then log "$s skipped (deadline)"; continue; fi
  case $s in
  info)
    run nvidia-smi 30 nvidia-smi
    run nvcc 10 "$cuda/bin/nvcc" --version
    run cuda-paths 10 bash -c "echo toolkit: $cuda; command -v nvcc; ls -d /usr/local/cuda*; ldconfig -p | grep -E 'libcuda\.so|libcudart'; uname -r; cat /etc/os-release | head -2" ;;
  libfabric)
    if [ ! -e "$FABDIAG_LIBFABRIC" ] && [ -f "$kit/libfabric-built.tar.gz" ]; then
      run libfabric-unpack 60 tar xzf "$kit/libfabric-built.tar.gz" -C "$kit"
    fi
    # the newer release first; the older one if it does not build
    for tag in v2.6.0 v1.22.0; do
      [ -e "$FABDIAG_LIBFABRIC" ] && break
      run "libfabric-build-$tag" 150 scripts/build-libfabric-cuda.sh build "$kit/libfabric-$tag-src.tar.gz" "$kit/libfabric" "$cuda"
    done
    [ -e "$FABDIAG_LIBFABRIC" ] && [ ! -f "$kit/libfabric-built.tar.gz" ] &&
      run libfabric-pack 30 tar czf "$OUT/libfabric-built.tar.gz" -C "$kit" libfabric/lib libfabric/bin
    run fi-info-hmem 30 "$kit/libfabric/bin/fi_info" -c FI_HMEM -t FI_EP_RDM
    run fabdiag-doctor 60 "$F" doctor ;;
  tests)
    run gpu-tests 300 "$kit/gpu-tests" --include-ignored --test-threads=1 --nocapture gpu:: ;;
  traffic)
    # what a default run costs: timed as a whole
    run host-traffic-default 90 bash -c "time $F host-traffic -v"
    run host-traffic-default-json 90 "$F" host-traffic -j
    run host-traffic-tile 60 "$F" host-traffic --tile -R 3 -j
    run host-traffic-host 60 "$F" host-traffic --host -R 3 -j --test-duration 2 ;;
  loopback)
    for m in "-t 0 -r 0" "-t 0" "-r 0" ""; do
      n=loopback-$(echo "${m:-system}" | tr -d ' -')
      # -i 5 for GPU buffers: the original's 25 iterations move 107 GB,
      # which one process's shm copies through host bounce buffers
      it=""; [ -n "$m" ] && it="-i 5"
      run "$n" 60 "$F" gpu-loopback-bw -P shm -g Nvidia $m $it
    done ;;
  pairs)
    # two processes, as on a cluster: device memory registered with
    # FI_HMEM_DEVICE_ONLY, which shm moves through CUDA IPC; then the same
    # in one process (--local), where a process cannot open its own IPC
    # handle and shm copies through host bounce buffers: the two figures
    # side by side show what the path costs
    port=49196
    # -n 100 -l 16: 1600 operations a size (the default 1000 x 256 would
    # move 1 TB at 4 MiB)
    sizes=(-s 4096:4194304 -n 100 -l 16)
    for t in write-bw read-bw send-bw; do
      pair "$t-gpu-shm" "$F" "$t" $port "${sizes[@]}"
      port=$((port + 1))
      run "$t-gpu-shm-local" 60 "$F" "$t" --local -P shm "${sizes[@]}" -t 0 -r 0
      run "$t-gpu-tcp" 60 "$F" "$t" --local -P tcp "${sizes[@]}" -t 0 -r 0
    done
    # send-lat as two processes: with both ends in one (--local), libfabric
    # 2.5 and later's shm crashes above 4096 B, which fabdiag refuses
    # (docs/known-defects.md)
    pair send-lat-gpu-shm "$F" send-lat 49195 -s 8:65536 -n 1000 ;;
  serve)
    # a server whose own RX and TX buffers are on the GPU, serving clients
    # with host buffers and with GPU buffers, then an atomic test (system
    # memory on the server by design)
    serve_bg serve-log 200 "$F" serve -P shm -p 49194 -t 0 -r 0 --json
    listening 49194 "$srv"
    run serve-write-bw-host-client 45 "$F" write-bw 127.0.0.1 -p 49194 -P shm -s 4096:4194304 -n 100 -l 16
    run serve-write-bw-gpu-client 45 "$F" write-bw 127.0.0.1 -p 49194 -P shm -s 4096:4194304 -n 100 -l 16 -t 0 -r 0
    run serve-send-lat-gpu-client 45 "$F" send-lat 127.0.0.1 -p 49194 -P shm -s 8:65536 -n 1000 -t 0 -r 0
    run serve-atomic-bw 45 "$F" atomic-bw 127.0.0.1 -p 49194 -P shm -n 1000
    reap serve 0 ;;
  before)
    B=$kit/fabdiag-before
    [ -x "$B" ] || { log "before skipped (no $B)"; continue; }
    # GPU-buffer pairs beyond the sizes whose copies keep up with their
    # posting (the clock must include copies still queued), and tile reads
    port=49210
    for build in before after; do
      bin=$F; [ $build = before ] && bin=$B
      for s in 4194304 67108864; do
        pair "write-bw-gpu-shm-$s-$build" "$bin" write-bw $port -s $s -n 20 -l 16 --json
        port=$((port + 1))
      done
      run "host-traffic-tile-$build" 60 "$bin" host-traffic --tile -R 3 -j
    done ;;
  compare)
    run torch-compare 180 python3 scripts/dev/gpu/gpu-compare.py ;;
  ratios)
    # fabdiag's figures over PyTorch's, from the logs of this run
    run ratios 30 python3 scripts/dev/gpu/gpu-ratios.py "$LOGS" ;;
  *) log "unknown step $s" ;;
  esac
done
pack
cat "$LOGS/steps.txt"
