// Runs the host-traffic kernels (crates/gpu/kernels/traffic.cu, the very
// source the committed PTX is made from) on the CPU, one thread after
// another, for kernels_on_cpu.rs; built there with AddressSanitizer, so a
// kernel that touches memory outside what it was given fails the test.
// Each command prints what the kernels left as `name value ...` lines.
//
//   fill GRID BLOCK SEED FIRST NVEC OUT    pattern into NVEC vectors, to OUT
//   verify GRID BLOCK SEED FIRST IN        check IN's vectors
//   tiles BLOCKS THREADS VT_BLOCK BLOCK_REGION PIECE ITER PIECES SEED OUT [BYTE]
//       tile_write over a zeroed region (to OUT), then verify_tiles and
//       tile_read; with BYTE, that byte flipped and both again
//   gate FLAG MAX_NS                       the start gate with *flag = FLAG
#include "cuda_shim.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

#include "traffic.cu"

cpu_dim3 threadIdx, blockIdx, blockDim, gridDim;

u64 globaltimer_ns() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (u64)ts.tv_sec * 1000000000ull + (u64)ts.tv_nsec;
}

template <class F> static void launch(unsigned grid, unsigned block, F kernel) {
    gridDim = {grid, 1, 1};
    blockDim = {block, 1, 1};
    for (unsigned b = 0; b < grid; ++b) {
        for (unsigned t = 0; t < block; ++t) {
            blockIdx = {b, 0, 0};
            threadIdx = {t, 0, 0};
            kernel();
        }
    }
}

static u64 num(const char *s) { return strtoull(s, nullptr, 0); }

// Exactly `bytes` long, so AddressSanitizer sees any access past it.
static uint4 *alloc(u64 bytes) {
    void *p = calloc(1, bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "harness: cannot allocate %llu bytes\n", bytes);
        exit(2);
    }
    return (uint4 *)p;
}

static void save(const char *path, const void *p, u64 bytes) {
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, bytes, f) != bytes || fclose(f) != 0) {
        fprintf(stderr, "harness: cannot write %s\n", path);
        exit(2);
    }
}

static std::vector<unsigned char> load(const char *path) {
    std::vector<unsigned char> v;
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "harness: cannot read %s\n", path);
        exit(2);
    }
    int c;
    while ((c = fgetc(f)) != EOF) v.push_back((unsigned char)c);
    fclose(f);
    return v;
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    const char *cmd = argv[1];
    if (!strcmp(cmd, "fill") && argc == 8) {
        unsigned grid = num(argv[2]), block = num(argv[3]);
        u32 seed = num(argv[4]);
        u64 first = num(argv[5]), n = num(argv[6]);
        uint4 *buf = alloc(n * 16);
        launch(grid, block, [&] { fill(buf, first, n, seed); });
        save(argv[7], buf, n * 16);
        free(buf);
        return 0;
    }
    if (!strcmp(cmd, "verify") && argc == 7) {
        unsigned grid = num(argv[2]), block = num(argv[3]);
        u32 seed = num(argv[4]);
        u64 first = num(argv[5]);
        std::vector<unsigned char> in = load(argv[6]);
        u64 n = in.size() / 16;
        uint4 *buf = alloc(n * 16);
        memcpy(buf, in.data(), n * 16);
        u64 bad = 0, first_bad = ~0ull;
        launch(grid, block, [&] { verify(buf, first, n, seed, &bad, &first_bad); });
        printf("verify %llu %llu\n", bad, first_bad);
        free(buf);
        return 0;
    }
    if (!strcmp(cmd, "tiles") && (argc == 11 || argc == 12)) {
        unsigned blocks = num(argv[2]), threads = num(argv[3]), vt_block = num(argv[4]);
        u64 block_region = num(argv[5]), piece = num(argv[6]), iterations = num(argv[7]), pieces = num(argv[8]);
        u32 seed = num(argv[9]);
        u64 bytes = blocks * block_region;
        uint4 *region = alloc(bytes);
        u64 *progress = (u64 *)calloc(blocks, sizeof(u64));
        launch(blocks, threads, [&] { tile_write(region, block_region, piece, iterations, seed, progress); });
        printf("progress");
        for (unsigned b = 0; b < blocks; ++b) printf(" %llu", progress[b]);
        printf("\n");
        save(argv[10], region, bytes);
        for (int round = 0; round < (argc == 12 ? 2 : 1); ++round) {
            if (round == 1) ((unsigned char *)region)[num(argv[11])] ^= 0xff;
            u64 bad = 0, first_bad = ~0ull, read_bad = 0;
            launch(blocks, vt_block,
                   [&] { verify_tiles(region, block_region, piece, pieces, seed, &bad, &first_bad); });
            launch(blocks, threads,
                   [&] { tile_read(region, block_region, piece, iterations, seed, &read_bad, progress); });
            printf("verify_tiles %llu %llu\ntile_read %llu\n", bad, first_bad, read_bad);
        }
        free(progress);
        free(region);
        return 0;
    }
    if (!strcmp(cmd, "gate") && argc == 4) {
        u32 flag = num(argv[2]), timed_out = 0;
        u64 max_ns = num(argv[3]);
        launch(1, 1, [&] { gate(&flag, max_ns, &timed_out); });
        printf("timed_out %u\n", timed_out);
        return 0;
    }
    fprintf(stderr, "harness: bad command line\n");
    return 2;
}
