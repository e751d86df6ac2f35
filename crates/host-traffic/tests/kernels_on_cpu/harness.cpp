// Runs the host-traffic kernels (crates/gpu/kernels/traffic.cu, the very
// source the committed PTX is made from) on the CPU, one thread after
// another, through the table in crates/testkit/cuda/kernels_on_cpu.h that the
// CPU stand-in for the CUDA driver also uses, for kernels_on_cpu.rs; built there with AddressSanitizer, so a
// kernel that touches memory outside the device buffer fails the test.
//
//   harness DEV_BYTES WORDS    a zeroed "device" buffer and mapped words,
// then one command a line on stdin:
//   call KERNEL GRID BLOCK ARG...  a launch as crates/gpu/src/launch.rs
//       makes it; ARG: d:OFFSET (device address), w:INDEX (a word's
//       address), z (none), u64:N, u32:N; each checked against the kind
//       the kernel declares
//   load OFFSET FILE / save OFFSET LEN FILE   device bytes from / to FILE
//   flip OFFSET                    invert one device byte
//   set INDEX VALUE / words        set a word / print `words W0 W1 ...`
#include "kernels_on_cpu.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

[[noreturn]] static void fail(const std::string &why) {
    std::cerr << "harness: " << why << "\n";
    exit(2);
}

static unsigned char *dev;
static u64 dev_bytes;
static u64 *words;
static u64 nwords;

// One argument as the kernel receives it.
struct Val {
    char kind; // 'p' pointer, 'q' u64, 'l' u32
    u64 v;
    void *p;
};

static Val parse(const std::string &t) {
    auto num = [&](size_t at) { return strtoull(t.c_str() + at, nullptr, 0); };
    if (t == "z") return {'p', 0, nullptr};
    if (t.rfind("d:", 0) == 0) {
        u64 off = num(2);
        if (off >= dev_bytes) fail("device address past the buffer: " + t);
        return {'p', 0, dev + off};
    }
    if (t.rfind("w:", 0) == 0) {
        u64 i = num(2);
        if (i >= nwords) fail("no such word: " + t);
        return {'p', 0, &words[i]};
    }
    if (t.rfind("u64:", 0) == 0) return {'q', num(4), nullptr};
    if (t.rfind("u32:", 0) == 0) return {'l', num(4), nullptr};
    fail("bad argument " + t);
}

// A launch, its arguments checked against the kinds the kernel declares.
static void call(const std::string &name, unsigned grid, unsigned block, const std::vector<Val> &a) {
    const CpuKernel *k = cpu_kernel(name.c_str());
    if (!k) fail("no kernel " + name);
    if (a.size() != strlen(k->params)) fail(name + ": wrong number of arguments");
    std::vector<u64> values;
    for (size_t i = 0; i < a.size(); ++i) {
        if (a[i].kind != k->params[i]) fail(name + ": argument " + std::to_string(i) + " of the wrong kind");
        values.push_back(a[i].kind == 'p' ? (u64)a[i].p : a[i].v);
    }
    cpu_run_grid(*k, grid, block, values.data());
}

static void range(u64 off, u64 len) {
    if (off > dev_bytes || len > dev_bytes - off) fail("range past the device buffer");
}

int main(int argc, char **argv) {
    if (argc != 3) fail("usage: harness DEV_BYTES WORDS");
    dev_bytes = strtoull(argv[1], nullptr, 0);
    nwords = strtoull(argv[2], nullptr, 0);
    // exactly this long, so AddressSanitizer sees any access past it
    dev = (unsigned char *)calloc(1, dev_bytes);
    words = (u64 *)calloc(nwords, sizeof(u64));
    if (!dev || !words) fail("cannot allocate");
    std::string line;
    while (std::getline(std::cin, line)) {
        std::istringstream in(line);
        std::string cmd;
        in >> cmd;
        if (cmd == "call") {
            std::string name, t;
            unsigned grid, block;
            in >> name >> grid >> block;
            std::vector<Val> args;
            while (in >> t) args.push_back(parse(t));
            call(name, grid, block, args);
        } else if (cmd == "load") {
            u64 off;
            std::string path;
            in >> off >> path;
            FILE *f = fopen(path.c_str(), "rb");
            if (!f) fail("cannot read " + path);
            std::vector<unsigned char> v;
            int c;
            while ((c = fgetc(f)) != EOF) v.push_back((unsigned char)c);
            fclose(f);
            range(off, v.size());
            memcpy(dev + off, v.data(), v.size());
        } else if (cmd == "save") {
            u64 off, len;
            std::string path;
            in >> off >> len >> path;
            range(off, len);
            FILE *f = fopen(path.c_str(), "wb");
            if (!f || fwrite(dev + off, 1, len, f) != len || fclose(f) != 0) fail("cannot write " + path);
        } else if (cmd == "flip") {
            u64 off;
            in >> off;
            range(off, 1);
            dev[off] ^= 0xff;
        } else if (cmd == "set") {
            u64 i, v;
            in >> i >> v;
            if (i >= nwords) fail("no such word");
            words[i] = v;
        } else if (cmd == "words") {
            std::cout << "words";
            for (u64 i = 0; i < nwords; ++i) std::cout << " " << words[i];
            std::cout << "\n";
        } else if (!cmd.empty()) {
            fail("unknown command " + cmd);
        }
    }
    free(dev);
    free(words);
    return 0;
}
