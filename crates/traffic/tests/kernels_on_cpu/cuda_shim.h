// Just enough of CUDA C for crates/gpu/kernels/traffic.cu to compile as
// host C++ and run one thread at a time (kernels_on_cpu.rs). It stands in
// for nothing the measurement depends on: what it checks is the kernels'
// own logic (the pattern, the walk, the checks), not the GPU, its memory
// model or its speed. Serial execution is faithful here because no kernel
// shares data between threads except through atomics.
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

// The running thread's coordinates, set by launch() in harness.cpp.
extern cpu_dim3 threadIdx, blockIdx, blockDim, gridDim;

static inline uint4 __ldcg(const uint4 *p) { return *p; }

static inline unsigned long long atomicAdd(unsigned long long *p, unsigned long long v) {
    unsigned long long old = *p;
    *p = old + v;
    return old;
}

static inline unsigned long long atomicMin(unsigned long long *p, unsigned long long v) {
    unsigned long long old = *p;
    if (v < old) *p = v;
    return old;
}

static inline void __nanosleep(unsigned int) {}
