// Just enough of CUDA C for crates/gpu/kernels/traffic.cu to compile as
// host C++ and run on the CPU: by the kernels' own tests
// (crates/host-traffic/tests/kernels_on_cpu.rs, one thread at a time) and by
// the CPU stand-in for the CUDA driver (cpu_cuda.cpp, each stream on a
// thread of its own). It stands in for nothing the measurement depends
// on: what runs on it is the kernels' logic (the pattern, the walk, the
// checks) and fabdiag's use of the driver, not the GPU, its memory model
// or its speed. A launch's threads run one after another, which is
// faithful because no kernel shares data between its threads except
// through atomics; the coordinates are per CPU thread because two
// streams may run kernels at once.
#pragma once
#include <cstdint>

#define __global__
#define __device__
#define __forceinline__ inline

struct uint4 {
    unsigned int x, y, z, w;
};

static inline uint4 make_uint4(unsigned int x, unsigned int y, unsigned int z, unsigned int w) {
    return uint4{x, y, z, w};
}

struct cpu_dim3 {
    unsigned int x, y, z;
};

// The running thread's coordinates, set by whoever launches.
extern thread_local cpu_dim3 threadIdx, blockIdx, blockDim, gridDim;

static inline uint4 __ldcg(const uint4 *p) { return *p; }

// Atomic as on the GPU: the host reads these words while kernels run.
static inline unsigned long long atomicAdd(unsigned long long *p, unsigned long long v) {
    return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
}

static inline unsigned long long atomicMin(unsigned long long *p, unsigned long long v) {
    unsigned long long old = __atomic_load_n(p, __ATOMIC_SEQ_CST);
    while (v < old && !__atomic_compare_exchange_n(p, &old, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
    }
    return old;
}

static inline void __nanosleep(unsigned int) {}
