// The host-traffic kernels (crates/gpu/kernels/traffic.cu) as the CPU runs
// them: each kernel's name, its parameters as cuLaunchKernel passes them
// ('p' pointer, 'q' u64, 'l' u32), and a grid run one thread after
// another. Shared by the kernels' test harness
// (crates/host-traffic/tests/kernels_on_cpu/harness.cpp) and the CPU stand-in
// for the CUDA driver (cpu_cuda.cpp), so both launch exactly what the
// source declares. Included by one translation unit per program: it
// defines the thread coordinates and the clock the shim declares.
#pragma once
#include "cuda_shim.h"

#include <cstring>
#include <ctime>

#include "traffic.cu"

thread_local cpu_dim3 threadIdx, blockIdx, blockDim, gridDim;

u64 globaltimer_ns() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (u64)ts.tv_sec * 1000000000ull + (u64)ts.tv_nsec;
}

// A kernel: its name, its parameters, and one thread of it run from an
// array of pointers to its parameter values (as cuLaunchKernel takes).
struct CpuKernel {
    const char *name;
    const char *params;
    void (*thread)(void **a);
};

#define P(i) (*(void **)a[i])
#define Q(i) (*(u64 *)a[i])
#define L(i) (*(u32 *)a[i])
static const CpuKernel CPU_KERNELS[] = {
    {"gate", "pqp", [](void **a) { gate((volatile u32 *)P(0), Q(1), (volatile u32 *)P(2)); }},
    {"tile_write", "pqqqlp",
     [](void **a) { tile_write((uint4 *)P(0), Q(1), Q(2), Q(3), L(4), (volatile u64 *)P(5)); }},
    {"tile_read", "pqqqlpp",
     [](void **a) { tile_read((const uint4 *)P(0), Q(1), Q(2), Q(3), L(4), (u64 *)P(5), (volatile u64 *)P(6)); }},
    {"fill", "pqql", [](void **a) { fill((uint4 *)P(0), Q(1), Q(2), L(3)); }},
    {"verify", "pqqlpp",
     [](void **a) { verify((const uint4 *)P(0), Q(1), Q(2), L(3), (u64 *)P(4), (u64 *)P(5)); }},
    {"verify_tiles", "pqqqlpp",
     [](void **a) { verify_tiles((const uint4 *)P(0), Q(1), Q(2), Q(3), L(4), (u64 *)P(5), (u64 *)P(6)); }},
};
#undef P
#undef Q
#undef L

// The kernel named `name`, or null.
static inline const CpuKernel *cpu_kernel(const char *name) {
    for (const CpuKernel &k : CPU_KERNELS)
        if (strcmp(k.name, name) == 0) return &k;
    return nullptr;
}

// Runs `k` on a grid of `grid` blocks of `block` threads, one thread after
// another (faithful: no kernel shares data between its threads except
// through atomics), each parameter a u64 (a u32 in its low half).
static inline void cpu_run_grid(const CpuKernel &k, unsigned grid, unsigned block, const u64 *values) {
    u64 v[8];
    void *a[8];
    size_t n = strlen(k.params);
    for (size_t i = 0; i < n && i < 8; ++i) {
        v[i] = values[i];
        a[i] = &v[i];
    }
    gridDim = {grid, 1, 1};
    blockDim = {block, 1, 1};
    for (unsigned b = 0; b < grid; ++b)
        for (unsigned t = 0; t < block; ++t) {
            blockIdx = {b, 0, 0};
            threadIdx = {t, 0, 0};
            k.thread(a);
        }
}
