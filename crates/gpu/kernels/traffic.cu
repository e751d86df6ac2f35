// fabdiag host-traffic kernels (gc-hosttraffictest on CUDA GPUs).
//
// Compiled to PTX by scripts/dev/gpu/gen-ptx.sh (NVRTC, no GPU needed); the PTX
// next to this file is committed and loaded at run time with
// cuModuleLoadData, so no CUDA toolkit is needed where fabdiag runs.
//
// mix/pattern_vec and slot_of must stay identical to
// crates/host-traffic/src/pattern.rs: the host checks what these kernels
// write, and these kernels check what the host wrote. The tests in
// crates/host-traffic/tests/kernels_on_cpu.rs build this file as host C++ and
// check that, the tile walk and the checks, without a GPU.

typedef unsigned long long u64;
typedef unsigned int u32;

__device__ __forceinline__ u64 mix(u32 seed, u64 v) {
    u64 x = v ^ ((u64)seed * 0xD6E8FEB86659FD93ull);
    x = (x ^ (x >> 32)) * 0x9E3779B97F4A7C15ull;
    return x ^ (x >> 29);
}

__device__ __forceinline__ uint4 pattern_vec(u32 seed, u64 v) {
    u64 h = mix(seed, v);
    u32 lo = (u32)h, hi = (u32)(h >> 32);
    return make_uint4(lo, hi, lo ^ 0xA5A5A5A5u, hi ^ 0x5A5A5A5Au);
}

#define SLOT_STRIDE 0x9E3779B1ull

__device__ __forceinline__ u64 slot_of(u64 q, u64 slots) {
    return (q * SLOT_STRIDE) & (slots - 1);
}

// On the GPU the global nanosecond timer; the CPU build of these kernels
// (crates/host-traffic/tests/kernels_on_cpu.rs) brings a clock of its own.
#ifdef __CUDA_ARCH__
__device__ __forceinline__ u64 globaltimer_ns() {
    u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
#else
u64 globaltimer_ns();
#endif

// Holds its stream until the host releases it (*flag != 0), so the copy
// stream and the kernel stream start together once everything is queued.
// Gives up after max_ns and says so in *timed_out (the host then fails
// the test instead of waiting on work that started unsynchronised).
extern "C" __global__ void gate(volatile u32 *flag, u64 max_ns, volatile u32 *timed_out) {
    u64 t0 = globaltimer_ns();
    while (*flag == 0) {
        if (globaltimer_ns() - t0 > max_ns) {
            *timed_out = 1;
            return;
        }
        __nanosleep(1000);
    }
}

// Tile work, one block per "tile": `iterations` transfers of 4096 bytes,
// each made of 4096/piece pieces of `piece` contiguous bytes (-p × 64),
// scattered over the block's power-of-two slice of the region. Thread i
// moves one 16-byte vector of each transfer. The value at a vector
// depends only on its index, so the data check needs no record of which
// transfer wrote it. progress[b] (host-mapped, may be null) counts the
// block's finished transfers, for the progress bar and failure reports.
extern "C" __global__ void tile_write(uint4 *region, u64 block_region, u64 piece, u64 iterations, u32 seed,
                                      volatile u64 *progress) {
    const u64 vpp = piece / 16, k = 4096 / piece, slots = block_region / piece;
    const u64 c = threadIdx.x / vpp, w = threadIdx.x % vpp;
    const u64 base = (u64)blockIdx.x * (block_region / 16);
#pragma unroll 4
    for (u64 t = 0; t < iterations; ++t) {
        u64 v = base + slot_of(t * k + c, slots) * vpp + w;
        region[v] = pattern_vec(seed, v);
        if (progress != 0 && threadIdx.x == 0 && (t & 4095) == 4095) progress[blockIdx.x] = t + 1;
    }
    if (progress != 0 && threadIdx.x == 0) progress[blockIdx.x] = iterations;
}

// The same walk, reading: every loaded vector is compared with the
// pattern, so the loads cannot be optimised away and a wrong byte in
// device memory is counted. Loads bypass L1 (ld.global.cg); the region is
// several times the L2, so device memory is what is measured.
extern "C" __global__ void tile_read(const uint4 *region, u64 block_region, u64 piece, u64 iterations, u32 seed,
                                     u64 *mismatches, volatile u64 *progress) {
    const u64 vpp = piece / 16, k = 4096 / piece, slots = block_region / piece;
    const u64 c = threadIdx.x / vpp, w = threadIdx.x % vpp;
    const u64 base = (u64)blockIdx.x * (block_region / 16);
    u64 bad = 0;
#pragma unroll 8
    for (u64 t = 0; t < iterations; ++t) {
        u64 v = base + slot_of(t * k + c, slots) * vpp + w;
        uint4 got = __ldcg(&region[v]);
        uint4 want = pattern_vec(seed, v);
        bad += (got.x != want.x) + (got.y != want.y) + (got.z != want.z) + (got.w != want.w);
        if (progress != 0 && threadIdx.x == 0 && (t & 4095) == 4095) progress[blockIdx.x] = t + 1;
    }
    if (bad != 0) atomicAdd(mismatches, bad);
    if (progress != 0 && threadIdx.x == 0) progress[blockIdx.x] = iterations;
}

// Vectors [first, first + n) of buf get the pattern (before a test that
// reads them: tile reads, host reads).
extern "C" __global__ void fill(uint4 *buf, u64 first, u64 n, u32 seed) {
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) {
        buf[i] = pattern_vec(seed, first + i);
    }
}

// Counts the vectors of [first, first + n) that do not hold the pattern
// and keeps the lowest bad index (after host writes).
extern "C" __global__ void verify(const uint4 *buf, u64 first, u64 n, u32 seed, u64 *mismatches, u64 *first_bad) {
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) {
        uint4 got = buf[i], want = pattern_vec(seed, first + i);
        if (got.x != want.x || got.y != want.y || got.z != want.z || got.w != want.w) {
            atomicAdd(mismatches, 1ull);
            atomicMin(first_bad, i);
        }
    }
}

// After tile writes: the first min(slots, pieces) pieces each block
// visited must hold the pattern (one block of threads per tile block).
extern "C" __global__ void verify_tiles(const uint4 *region, u64 block_region, u64 piece, u64 pieces, u32 seed,
                                        u64 *mismatches, u64 *first_bad) {
    const u64 vpp = piece / 16, slots = block_region / piece;
    const u64 n = pieces < slots ? pieces : slots;
    const u64 base = (u64)blockIdx.x * (block_region / 16);
    for (u64 j = threadIdx.x; j < n * vpp; j += blockDim.x) {
        u64 v = base + slot_of(j / vpp, slots) * vpp + j % vpp;
        uint4 got = region[v], want = pattern_vec(seed, v);
        if (got.x != want.x || got.y != want.y || got.z != want.z || got.w != want.w) {
            atomicAdd(mismatches, 1ull);
            atomicMin(first_bad, v);
        }
    }
}
