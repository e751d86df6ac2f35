// A CPU stand-in for the part of the CUDA driver API fabdiag uses, and for
// the driver and runtime calls libfabric's CUDA support makes, built as
// libcuda.so.1 (also linked as libcudart.so) by scripts/dev/support/build-cpu-cuda.sh
// and found through LD_LIBRARY_PATH, so the real fabdiag binary runs its
// GPU paths end to end where there is no GPU: crates/cli/tests/cpu_cuda.rs
// in CI, and scripts/dev/support/cuda-standin-check.sh with a CUDA-enabled libfabric.
//
// It is a test double, never a measurement: its "device memory" is host
// memory, its copy engines are memcpy, its kernels are
// crates/gpu/kernels/traffic.cu compiled as host C++ (kernels_on_cpu.h),
// each stream a thread that runs its queue in order. Figures from it mean
// nothing and no test reads them as speed. What it is for:
//
// - fabdiag's use of the driver, held to the driver's rules: cuInit
//   first; a current context on every thread that allocates, copies,
//   records or launches; copies and memsets inside live allocations;
//   kernel pointers into device or GPU-mapped memory; timing only between
//   recorded, finished timing events; frees that wait for queued work, as
//   the real driver's do. Each broken rule is the real driver's error
//   code.
// - libfabric's CUDA paths: pointer attributes, address ranges, copies,
//   and IPC handles, with device memory in shared memory (a memfd) that a
//   peer process maps, as CUDA IPC maps a peer's device memory.
// - The committed PTX: cuModuleLoadData refuses an image whose .entry
//   parameters differ from the kernels compiled here (the same source).
// - Faults a real GPU can have, on demand (FABDIAG_CPU_CUDA_FAULT), each
//   as the driver reports it: out of memory, an illegal address in a
//   kernel (the context is then unusable, as on a GPU), an uncorrectable
//   ECC error after N launches, a kernel that never finishes, and copies
//   that corrupt one byte.
//
// Settings (environment): FABDIAG_CPU_CUDA_DEVICES (1), _MEMORY (bytes,
// 1 GiB), _SMS (4), _L2 (bytes, 1 MiB), _COPY_ENGINES (2), _TRACE (a file
// that gets a line for each IPC handle opened, so a check can tell which
// way libfabric moved device memory), _FAULT (none):
//   oom                   cuMemAlloc fails: CUDA_ERROR_OUT_OF_MEMORY
//   illegal-address:NAME  kernel NAME faults: CUDA_ERROR_ILLEGAL_ADDRESS
//   ecc:N                 the N-th launch fails: CUDA_ERROR_ECC_UNCORRECTABLE
//   hang:NAME             kernel NAME never finishes
//   gate-timeout          the start gate gives up at once, as if its 10 s
//                         had passed unreleased
//   corrupt:htod|dtoh     each async copy that way flips one byte
// A device attribute it does not model is refused with
// CUDA_ERROR_NOT_SUPPORTED and a line on stderr, and a call it lacks is a
// missing symbol: a new call fabdiag makes is noticed, not faked.

#include "kernels_on_cpu.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;

enum : CUresult {
    OK = 0,
    INVALID_VALUE = 1,
    OUT_OF_MEMORY = 2,
    NOT_INITIALIZED = 3,
    INVALID_DEVICE = 101,
    INVALID_IMAGE = 200,
    INVALID_CONTEXT = 201,
    ECC_UNCORRECTABLE = 214,
    INVALID_PTX = 218,
    INVALID_HANDLE = 400,
    NOT_FOUND = 500,
    NOT_READY = 600,
    ILLEGAL_ADDRESS = 700,
    NOT_SUPPORTED = 801,
};

// The attributes asked for (cuda.h's CUdevice_attribute): fabdiag's, and
// libfabric's CUDA support's.
enum {
    ATTR_MULTIPROCESSOR_COUNT = 16,
    ATTR_L2_CACHE_SIZE = 38,
    ATTR_ASYNC_ENGINE_COUNT = 40,
    ATTR_UNIFIED_ADDRESSING = 41,
    ATTR_DMA_BUF_SUPPORTED = 124,
};

// cuMemHostAlloc's flags.
enum { HOSTALLOC_PORTABLE = 1, HOSTALLOC_DEVICEMAP = 2, HOSTALLOC_WRITECOMBINED = 4 };

static u64 setting(const char *name, u64 fallback) {
    const char *v = getenv(name);
    return v && *v ? strtoull(v, nullptr, 0) : fallback;
}

static std::string fault() {
    const char *v = getenv("FABDIAG_CPU_CUDA_FAULT");
    return v ? v : "";
}

// "NAME" when the fault is "KIND:NAME".
static bool fault_is(const char *kind, const char *name) {
    return fault() == std::string(kind) + ":" + name;
}

static void say(const std::string &s) { fprintf(stderr, "cpu-cuda: %s\n", s.c_str()); }

// A line in the FABDIAG_CPU_CUDA_TRACE file, if one is named.
static void trace(const std::string &s) {
    const char *path = getenv("FABDIAG_CPU_CUDA_TRACE");
    if (!path || !*path) return;
    if (FILE *f = fopen(path, "a")) {
        fprintf(f, "%d %s\n", (int)getpid(), s.c_str());
        fclose(f);
    }
}

// ---- contexts, memory, streams, events --------------------------------

struct Stream;

struct Context {
    int device;
    int refs = 0;
    // Once a kernel faults, every later call in the context fails with
    // the fault's code, as on a GPU.
    std::atomic<int> sticky{OK};
    std::vector<std::shared_ptr<Stream>> streams;
};

struct Alloc {
    u64 len;
    bool device;  // device memory, else page-locked host memory
    bool mapped;  // host memory the GPU can address
    int device_ordinal = 0;
    int fd = -1;          // device memory: its memfd, for IPC handles
    bool owned = true;    // false: registered host memory, or opened by IPC
    bool ipc = false;     // mapped from another process's handle
};

// Heap-allocated and never freed: stream threads may still be running
// when the process exits, and must not meet destroyed globals.
struct Driver {
    std::mutex lock;
    bool initialised = false;
    std::vector<Context *> primary;
    std::map<u64, Alloc> allocs;
    u64 device_bytes = 0;
    std::atomic<u64> launches{0};
};
static Driver &drv() {
    static Driver *d = new Driver;
    return *d;
}

static thread_local Context *current = nullptr;

// The context this thread works in, or why it cannot.
static CUresult ctx_now(Context **out) {
    if (!drv().initialised) return NOT_INITIALIZED;
    if (!current || current->refs == 0) return INVALID_CONTEXT;
    *out = current;
    return current->sticky.load();
}

// The allocation holding p, if any (a copy of its record and its base).
static bool find_alloc(u64 p, u64 *base, Alloc *out) {
    std::lock_guard<std::mutex> g(drv().lock);
    auto &m = drv().allocs;
    auto it = m.upper_bound(p);
    if (it == m.begin()) return false;
    --it;
    if (p - it->first >= it->second.len) return false;
    *base = it->first;
    *out = it->second;
    return true;
}

// Is [p, p + len) inside one allocation that is device memory
// (`device_only`), or that the GPU can reach (device or mapped host
// memory)?
static bool inside(u64 p, u64 len, bool device_only) {
    u64 base;
    Alloc a;
    if (!find_alloc(p, &base, &a)) return false;
    if (device_only ? !a.device : !(a.device || a.mapped)) return false;
    return len <= a.len - (p - base);
}

// Bytes an allocation of `len` takes: whole pages.
static u64 pages(u64 len) { return (len + 4095) / 4096 * 4096; }

// The device memory there is (FABDIAG_CPU_CUDA_MEMORY).
static u64 memory_bytes() { return setting("FABDIAG_CPU_CUDA_MEMORY", 1ull << 30); }

struct Stream {
    Context *ctx;
    std::mutex m;
    std::condition_variable cv;
    std::deque<std::function<void()>> queue;
    bool busy = false;
    bool destroyed = false;

    void push(std::function<void()> f) {
        {
            std::lock_guard<std::mutex> g(m);
            queue.push_back(std::move(f));
        }
        cv.notify_all();
    }

    // Waits until everything queued so far has run.
    void drain() {
        std::unique_lock<std::mutex> g(m);
        cv.wait(g, [&] { return queue.empty() && !busy; });
    }

    static void run(std::shared_ptr<Stream> s) {
        for (;;) {
            std::function<void()> f;
            {
                std::unique_lock<std::mutex> g(s->m);
                s->cv.wait(g, [&] { return !s->queue.empty() || s->destroyed; });
                if (s->queue.empty()) break;
                f = std::move(s->queue.front());
                s->queue.pop_front();
                s->busy = true;
            }
            // after a fault the GPU runs nothing more
            if (s->ctx->sticky.load() == OK) f();
            {
                std::lock_guard<std::mutex> g(s->m);
                s->busy = false;
            }
            s->cv.notify_all();
        }
        // destroyed and drained: frees no longer wait for it
        std::lock_guard<std::mutex> g(drv().lock);
        auto &v = s->ctx->streams;
        for (auto it = v.begin(); it != v.end(); ++it)
            if (*it == s) {
                v.erase(it);
                break;
            }
    }
};

// What freeing memory and unloading do on the real driver: wait for the
// context's queued work.
static void sync_context(Context *c) {
    std::vector<std::shared_ptr<Stream>> all;
    {
        std::lock_guard<std::mutex> g(drv().lock);
        all = c->streams;
    }
    for (auto &s : all) s->drain();
}

struct Event {
    Context *ctx;
    bool timing;
    std::mutex m;
    int state = 0;  // 0 never recorded, 1 recorded and pending, 2 passed
    u64 generation = 0;
    u64 ns = 0;
};

// Handles given out, so a stale or made-up one is refused.
struct Handles {
    std::mutex lock;
    std::set<void *> live;
};
static Handles &handles() {
    static Handles *h = new Handles;
    return *h;
}
static void *handle(void *p) {
    std::lock_guard<std::mutex> g(handles().lock);
    handles().live.insert(p);
    return p;
}
static bool live(void *p) {
    std::lock_guard<std::mutex> g(handles().lock);
    return handles().live.count(p) != 0;
}
static void retire(void *p) {
    std::lock_guard<std::mutex> g(handles().lock);
    handles().live.erase(p);
}

// A stream handle points at this, which keeps the stream alive.
struct StreamHandle {
    std::shared_ptr<Stream> s;
};

static CUresult stream_of(void *h, Context *c, std::shared_ptr<Stream> *out) {
    if (!h || !live(h)) return INVALID_HANDLE;  // the default stream is not modelled
    auto s = static_cast<StreamHandle *>(h)->s;
    if (s->ctx != c) return INVALID_CONTEXT;
    *out = s;
    return OK;
}

// ---- kernels -------------------------------------------------------------

struct Module {
    Context *ctx;
    std::vector<const CpuKernel *> entries;
};

struct Function {
    const CpuKernel *k;
    Module *module;
};

// The parameter kinds PTX declares for `.entry name(...)`, or "" when the
// image has no such entry.
static std::string ptx_params(const std::string &ptx, const char *name, bool *found) {
    std::string key = std::string(".entry ") + name + "(";
    size_t at = ptx.find(key);
    *found = at != std::string::npos;
    if (!*found) return "";
    size_t end = ptx.find(')', at);
    std::string list = ptx.substr(at + key.size(), end == std::string::npos ? 0 : end - at - key.size());
    std::string kinds;
    for (size_t i = 0; (i = list.find(".param", i)) != std::string::npos; i += 6) {
        if (list.compare(i, 11, ".param .u64") == 0)
            kinds += 'q';
        else if (list.compare(i, 11, ".param .u32") == 0)
            kinds += 'l';
        else
            kinds += '?';
    }
    return kinds;
}

// ---- the API -------------------------------------------------------------

extern "C" {

// The errors the stand-in gives: code, name, text (as the driver's).
struct ErrorText {
    int code;
    const char *name;
    const char *text;
};
static const ErrorText ERRORS[] = {
    {OK, "CUDA_SUCCESS", "no error"},
    {INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {ECC_UNCORRECTABLE, "CUDA_ERROR_ECC_UNCORRECTABLE", "uncorrectable ECC error encountered"},
    {INVALID_PTX, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready"},
    {ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
    {NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
};

// cuGetErrorName / cuGetErrorString: field `name` or `text` of e's entry.
static CUresult error_field(CUresult e, const char **s, bool name) {
    if (!s) return INVALID_VALUE;
    for (const ErrorText &t : ERRORS)
        if (t.code == e) {
            *s = name ? t.name : t.text;
            return OK;
        }
    *s = nullptr;
    return INVALID_VALUE;
}

CUresult cuGetErrorString(CUresult e, const char **s) { return error_field(e, s, false); }

CUresult cuGetErrorName(CUresult e, const char **s) { return error_field(e, s, true); }

CUresult cuInit(unsigned flags) {
    if (flags != 0) return INVALID_VALUE;
    std::lock_guard<std::mutex> g(drv().lock);
    if (!drv().initialised) {
        u64 n = setting("FABDIAG_CPU_CUDA_DEVICES", 1);
        for (u64 i = 0; i < n; ++i) {
            auto *c = new Context;
            c->device = (int)i;
            drv().primary.push_back(c);
        }
        drv().initialised = true;
    }
    return OK;
}

CUresult cuDeviceGetCount(int *n) {
    if (!drv().initialised) return NOT_INITIALIZED;
    *n = (int)drv().primary.size();
    return OK;
}

CUresult cuDeviceGet(CUdevice *d, int ordinal) {
    if (!drv().initialised) return NOT_INITIALIZED;
    if (ordinal < 0 || ordinal >= (int)drv().primary.size()) return INVALID_DEVICE;
    *d = ordinal;
    return OK;
}

static bool valid_device(CUdevice d) { return drv().initialised && d >= 0 && d < (int)drv().primary.size(); }

CUresult cuDeviceGetName(char *name, int len, CUdevice d) {
    if (!valid_device(d)) return INVALID_DEVICE;
    if (len <= 0) return INVALID_VALUE;
    snprintf(name, (size_t)len, "fabdiag CPU stand-in %d (not a GPU)", d);
    return OK;
}

CUresult cuDeviceGetPCIBusId(char *id, int len, CUdevice d) {
    if (!valid_device(d)) return INVALID_DEVICE;
    if (len <= 0) return INVALID_VALUE;
    // a bus no machine here has, so no NUMA node is found for it
    snprintf(id, (size_t)len, "0000:F%X:00.0", d);
    return OK;
}

CUresult cuDeviceGetUuid(unsigned char *uuid, CUdevice d) {
    if (!valid_device(d)) return INVALID_DEVICE;
    for (int i = 0; i < 16; ++i) uuid[i] = (unsigned char)(0xc0 + i);
    uuid[15] = (unsigned char)d;
    return OK;
}

CUresult cuDeviceGetAttribute(int *v, int attr, CUdevice d) {
    if (!valid_device(d)) return INVALID_DEVICE;
    switch (attr) {
    case ATTR_MULTIPROCESSOR_COUNT:
        *v = (int)setting("FABDIAG_CPU_CUDA_SMS", 4);
        return OK;
    case ATTR_L2_CACHE_SIZE:
        *v = (int)setting("FABDIAG_CPU_CUDA_L2", 1 << 20);
        return OK;
    case ATTR_ASYNC_ENGINE_COUNT:
        *v = (int)setting("FABDIAG_CPU_CUDA_COPY_ENGINES", 2);
        return OK;
    case ATTR_UNIFIED_ADDRESSING:
        *v = 1;
        return OK;
    case ATTR_DMA_BUF_SUPPORTED:
        *v = 0;
        return OK;
    }
    say("device attribute " + std::to_string(attr) + " is not modelled");
    return NOT_SUPPORTED;
}

CUresult cuDevicePrimaryCtxRetain(Context **c, CUdevice d) {
    if (!valid_device(d)) return INVALID_DEVICE;
    std::lock_guard<std::mutex> g(drv().lock);
    *c = drv().primary[(size_t)d];
    (*c)->refs++;
    return OK;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) {
    if (!valid_device(d)) return INVALID_DEVICE;
    Context *c = drv().primary[(size_t)d];
    if (c->refs == 0) return INVALID_CONTEXT;
    // the last release destroys the context, after its queued work
    if (c->refs == 1) sync_context(c);
    std::lock_guard<std::mutex> g(drv().lock);
    c->refs--;
    return OK;
}

CUresult cuCtxSetCurrent(Context *c) {
    if (!drv().initialised) return NOT_INITIALIZED;
    if (c && c->refs == 0) return INVALID_CONTEXT;
    current = c;
    return OK;
}

CUresult cuCtxGetCurrent(Context **c) {
    if (!drv().initialised) return NOT_INITIALIZED;
    *c = current;
    return OK;
}

CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total) {
    Context *c;
    if (CUresult r = ctx_now(&c)) return r;
    u64 all = memory_bytes();
    std::lock_guard<std::mutex> g(drv().lock);
    *total = all;
    *free_bytes = all - drv().device_bytes;
    return OK;
}

// Device memory is a shared mapping of a memfd, so another process can
// open it from an IPC handle, as CUDA IPC lets a peer map device memory.
static CUresult allocate(u64 len, bool device, bool mapped, void **out) {
    if (len == 0) return INVALID_VALUE;
    u64 rounded = pages(len);
    if (device) {
        std::lock_guard<std::mutex> g(drv().lock);
        if (fault() == "oom" || drv().device_bytes + rounded > memory_bytes())
            return OUT_OF_MEMORY;
        drv().device_bytes += rounded;
    }
    void *p = nullptr;
    int fd = -1;
    if (device) {
        fd = memfd_create("cpu-cuda-device-memory", MFD_CLOEXEC);
        if (fd >= 0 && ftruncate(fd, (off_t)rounded) == 0)
            p = mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED) p = nullptr;
    } else {
        p = aligned_alloc(4096, rounded);
    }
    if (!p) {
        if (fd >= 0) close(fd);
        std::lock_guard<std::mutex> g(drv().lock);
        if (device) drv().device_bytes -= rounded;
        return OUT_OF_MEMORY;
    }
    // device memory holds garbage until written, as on a GPU
    memset(p, device ? 0xd5 : 0, rounded);
    std::lock_guard<std::mutex> g(drv().lock);
    Alloc a{len, device, mapped};
    a.device_ordinal = current ? current->device : 0;
    a.fd = fd;
    drv().allocs[(u64)p] = a;
    *out = p;
    return OK;
}

static CUresult release(u64 p, bool device) {
    Context *c;
    if (CUresult r = ctx_now(&c)) return r;
    sync_context(c);
    std::lock_guard<std::mutex> g(drv().lock);
    auto it = drv().allocs.find(p);
    if (it == drv().allocs.end() || it->second.device != device || !it->second.owned) return INVALID_VALUE;
    u64 rounded = pages(it->second.len);
    if (device) {
        drv().device_bytes -= rounded;
        munmap((void *)p, rounded);
        close(it->second.fd);
    } else {
        free((void *)p);
    }
    drv().allocs.erase(it);
    return OK;
}

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t len) {
    Context *c;
    if (CUresult r = ctx_now(&c)) return r;
    void *out;
    if (CUresult r = allocate(len, true, false, &out)) return r;
    *p = (CUdeviceptr)out;
    return OK;
}

CUresult cuMemFree_v2(CUdeviceptr p) { return release(p, true); }

CUresult cuMemHostAlloc(void **p, size_t len, unsigned flags) {
    Context *c;
    if (CUresult r = ctx_now(&c)) return r;
    if (flags & ~(unsigned)(HOSTALLOC_PORTABLE | HOSTALLOC_DEVICEMAP | HOSTALLOC_WRITECOMBINED)) return INVALID_VALUE;
    return allocate(len, false, flags & HOSTALLOC_DEVICEMAP, p);
}

CUresult cuMemFreeHost(void *p) { return release((u64)p, false); }

CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *d, void *p, unsigned flags) {
    Context *c;
    if (CUresult r = ctx_now(&c)) return r;
    if (flags != 0) return INVALID_VALUE;
    std::lock_guard<std::mutex> g(drv().lock);
    auto it = drv().allocs.find((u64)p);
    if (it == drv().allocs.end() || it->second.device || !it->second.mapped) return INVALID_VALUE;
    *d = (CUdeviceptr)p;
    return OK;
}

// A synchronous copy to or from device memory at `dev`.
static CUresult copy_sync(void *to, const void *from, u64 len, u64 dev) {
    Context *c;
    if (CUresult r = ctx_now(&c)) return r;
    if (!inside(dev, len, true)) return INVALID_VALUE;
    memcpy(to, from, len);
    return OK;
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *h, size_t len) { return copy_sync((void *)d, h, len, d); }

CUresult cuMemcpyDtoH_v2(void *h, CUdeviceptr d, size_t len) { return copy_sync(h, (const void *)d, len, d); }

// An async copy; `corrupt` flips its middle byte (a broken data path).
static CUresult copy_async(void *to, const void *from, u64 len, u64 dev, void *sh, bool corrupt) {
    Context *c;
    if (CUresult r = ctx_now(&c)) return r;
    std::shared_ptr<Stream> s;
    if (CUresult r = stream_of(sh, c, &s)) return r;
    if (!inside(dev, len, true)) return INVALID_VALUE;
    s->push([=] {
        memcpy(to, from, len);
        if (corrupt && len) ((unsigned char *)to)[len / 2] ^= 0x01;
    });
    return OK;
}

CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *h, size_t len, void *s) {
    return copy_async((void *)d, h, len, d, s, fault() == "corrupt:htod");
}

CUresult cuMemcpyDtoHAsync_v2(void *h, CUdeviceptr d, size_t len, void *s) {
    return copy_async(h, (const void *)d, len, d, s, fault() == "corrupt:dtoh");
}

CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t len, void *sh) {
    Context *c;
    if (CUresult r = ctx_now(&c)) return r;
    std::shared_ptr<Stream> s;
    if (CUresult r = stream_of(sh, c, &s)) return r;
    if (!inside(d, len, true)) return INVALID_VALUE;
    s->push([=] { memset((void *)d, v, len); });
    return OK;
}

CUresult cuStreamCreate(void **out, unsigned flags) {
    Context *c;
    if (CUresult r = ctx_now(&c)) return r;
    if (flags > 1) return INVALID_VALUE;
    auto s = std::make_shared<Stream>();
    s->ctx = c;
    {
        std::lock_guard<std::mutex> g(drv().lock);
        c->streams.push_back(s);
    }
    std::thread(Stream::run, s).detach();
    *out = handle(new StreamHandle{s});
    return OK;
}

CUresult cuStreamDestroy_v2(void *h) {
    if (!h || !live(h)) return INVALID_HANDLE;
    retire(h);
    auto *sh = static_cast<StreamHandle *>(h);
    auto s = sh->s;
    delete sh;
    // queued work still runs, and frees still wait for it, as on the
    // real driver; the stream's thread leaves the context when it is done
    {
        std::lock_guard<std::mutex> g(s->m);
        s->destroyed = true;
    }
    s->cv.notify_all();
    return OK;
}

// An event handle points at this; queued records keep the event alive.
struct EventHandle {
    std::shared_ptr<Event> e;
};

static CUresult event_of(void *h, std::shared_ptr<Event> *out) {
    if (!h || !live(h)) return INVALID_HANDLE;
    *out = static_cast<EventHandle *>(h)->e;
    return OK;
}

CUresult cuEventCreate(void **out, unsigned flags) {
    Context *c;
    if (CUresult r = ctx_now(&c)) return r;
    // CU_EVENT_BLOCKING_SYNC 1, CU_EVENT_DISABLE_TIMING 2, CU_EVENT_INTERPROCESS 4
    if (flags & ~3u) return INVALID_VALUE;
    auto e = std::make_shared<Event>();
    e->ctx = c;
    e->timing = !(flags & 2);
    *out = handle(new EventHandle{e});
    return OK;
}

CUresult cuEventDestroy_v2(void *h) {
    if (!h || !live(h)) return INVALID_HANDLE;
    retire(h);
    delete static_cast<EventHandle *>(h);
    return OK;
}

CUresult cuEventRecord(void *h, void *sh) {
    Context *c;
    if (CUresult r = ctx_now(&c)) return r;
    std::shared_ptr<Event> e;
    if (CUresult r = event_of(h, &e)) return r;
    if (e->ctx != c) return INVALID_CONTEXT;
    std::shared_ptr<Stream> s;
    if (CUresult r = stream_of(sh, c, &s)) return r;
    u64 gen;
    {
        std::lock_guard<std::mutex> g(e->m);
        e->state = 1;
        gen = ++e->generation;
    }
    s->push([e, gen] {
        std::lock_guard<std::mutex> g(e->m);
        if (e->generation == gen) {
            e->ns = globaltimer_ns();
            e->state = 2;
        }
    });
    return OK;
}

CUresult cuEventQuery(void *h) {
    std::shared_ptr<Event> e;
    if (CUresult r = event_of(h, &e)) return r;
    if (CUresult r = e->ctx->sticky.load()) return r;
    std::lock_guard<std::mutex> g(e->m);
    return e->state == 1 ? NOT_READY : OK;
}

CUresult cuEventElapsedTime(float *ms, void *a, void *b) {
    std::shared_ptr<Event> x, y;
    if (CUresult r = event_of(a, &x)) return r;
    if (CUresult r = event_of(b, &y)) return r;
    if (CUresult r = x->ctx->sticky.load()) return r;
    if (!x->timing || !y->timing) return INVALID_HANDLE;
    std::lock_guard<std::mutex> g1(x->m);
    std::unique_lock<std::mutex> g2(y->m, std::defer_lock);
    if (x != y) g2.lock();
    if (x->state == 0 || y->state == 0) return INVALID_HANDLE;
    if (x->state != 2 || y->state != 2) return NOT_READY;
    *ms = (float)(((double)y->ns - (double)x->ns) / 1e6);
    return OK;
}

CUresult cuModuleLoadData(Module **out, const void *image) {
    Context *c;
    if (CUresult r = ctx_now(&c)) return r;
    if (!image) return INVALID_VALUE;
    std::string ptx((const char *)image);
    if (ptx.find(".version") == std::string::npos || ptx.find(".target") == std::string::npos) return INVALID_IMAGE;
    auto *m = new Module{c, {}};
    for (const CpuKernel &k : CPU_KERNELS) {
        bool found;
        std::string kinds = ptx_params(ptx, k.name, &found);
        if (!found) continue;
        std::string want = k.params;
        for (char &ch : want) ch = ch == 'l' ? 'l' : 'q';  // a pointer is a .u64 in PTX
        if (kinds != want) {
            say(std::string("the PTX declares ") + k.name + "(" + kinds + "), the source compiled here (" + want +
                ")");
            delete m;
            return INVALID_PTX;
        }
        m->entries.push_back(&k);
    }
    *out = (Module *)handle(m);
    return OK;
}

CUresult cuModuleUnload(Module *m) {
    if (!m || !live(m)) return INVALID_HANDLE;
    sync_context(m->ctx);
    retire(m);
    delete m;
    return OK;
}

CUresult cuModuleGetFunction(Function **out, Module *m, const char *name) {
    if (!m || !live(m)) return INVALID_HANDLE;
    for (const CpuKernel *k : m->entries)
        if (strcmp(k->name, name) == 0) {
            *out = (Function *)handle(new Function{k, m});
            return OK;
        }
    return NOT_FOUND;
}

CUresult cuLaunchKernel(Function *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, void *sh, void **params, void **extra) {
    Context *c;
    if (CUresult r = ctx_now(&c)) return r;
    if (!f || !live(f) || !live(f->module)) return INVALID_HANDLE;
    if (f->module->ctx != c) return INVALID_CONTEXT;
    std::shared_ptr<Stream> s;
    if (CUresult r = stream_of(sh, c, &s)) return r;
    if (gx == 0 || gy != 1 || gz != 1 || bx == 0 || bx > 1024 || by != 1 || bz != 1 || shared != 0 || extra)
        return INVALID_VALUE;
    if (!params) return INVALID_VALUE;
    const CpuKernel *k = f->k;
    // the driver copies the parameters before returning
    std::vector<u64> values;
    for (size_t i = 0; k->params[i]; ++i) {
        if (!params[i]) return INVALID_VALUE;
        values.push_back(k->params[i] == 'l' ? (u64) * (u32 *)params[i] : *(u64 *)params[i]);
    }
    u64 n = drv().launches.fetch_add(1) + 1;
    std::string fl = fault();
    bool illegal = fault_is("illegal-address", k->name);
    bool hang = fault_is("hang", k->name);
    bool give_up = fl == "gate-timeout" && strcmp(k->name, "gate") == 0;
    bool ecc = fl.rfind("ecc:", 0) == 0 && n == strtoull(fl.c_str() + 4, nullptr, 0);
    s->push([=] {
        // every pointer must reach device memory or mapped host memory
        for (size_t i = 0; k->params[i]; ++i)
            if (k->params[i] == 'p' && values[i] != 0 && !inside(values[i], 1, false)) {
                say(std::string(k->name) + ": parameter " + std::to_string(i) + " points outside GPU memory");
                c->sticky.store(ILLEGAL_ADDRESS);
                return;
            }
        if (ecc) {
            c->sticky.store(ECC_UNCORRECTABLE);
            return;
        }
        if (illegal) {
            c->sticky.store(ILLEGAL_ADDRESS);
            return;
        }
        while (hang) std::this_thread::sleep_for(std::chrono::seconds(1));
        if (give_up) {
            *(volatile u32 *)values[2] = 1;
            return;
        }
        cpu_run_grid(*k, gx, bx, values.data());
    });
    return OK;
}


// ---- what libfabric's CUDA support calls ---------------------------------
// libfabric (built --with-cuda --enable-cuda-dlopen) opens libcudart.so and
// libcuda.so.1 and resolves these; libcudart.so is a link to this file, so
// the runtime calls share the driver's memory and contexts.

// One attribute of the memory at p into data; false when it is not
// modelled.
enum {
    PTR_CONTEXT = 1,
    PTR_MEMORY_TYPE = 2,
    PTR_DEVICE_POINTER = 3,
    PTR_HOST_POINTER = 4,
    PTR_SYNC_MEMOPS = 6,
    PTR_BUFFER_ID = 7,
    PTR_IS_MANAGED = 8,
    PTR_DEVICE_ORDINAL = 9,
    PTR_IS_LEGACY_CUDA_IPC_CAPABLE = 10,
    PTR_RANGE_START_ADDR = 11,
    PTR_RANGE_SIZE = 12,
    PTR_MAPPED = 13,
};
enum { MEMORYTYPE_HOST = 1, MEMORYTYPE_DEVICE = 2 };

static bool attribute(int attr, bool found, u64 base, const Alloc &a, u64 p, void *data) {
    switch (attr) {
    case PTR_CONTEXT:
        *(void **)data = found ? drv().primary[(size_t)a.device_ordinal] : nullptr;
        return true;
    case PTR_MEMORY_TYPE:
        *(unsigned *)data = !found ? 0 : a.device ? MEMORYTYPE_DEVICE : MEMORYTYPE_HOST;
        return true;
    case PTR_DEVICE_POINTER:
    case PTR_HOST_POINTER:
        *(void **)data = found ? (void *)p : nullptr;
        return true;
    case PTR_SYNC_MEMOPS:
    case PTR_IS_MANAGED:
        *(unsigned *)data = 0;
        return true;
    case PTR_BUFFER_ID:
        *(u64 *)data = found ? base : 0;
        return true;
    case PTR_DEVICE_ORDINAL:
        *(int *)data = found ? a.device_ordinal : -2;
        return true;
    case PTR_IS_LEGACY_CUDA_IPC_CAPABLE:
    case PTR_MAPPED:
        *(unsigned *)data = found && a.device;
        return true;
    case PTR_RANGE_START_ADDR:
        *(u64 *)data = found ? base : 0;
        return true;
    case PTR_RANGE_SIZE:
        *(size_t *)data = found ? a.len : 0;
        return true;
    }
    say("pointer attribute " + std::to_string(attr) + " is not modelled");
    return false;
}

CUresult cuPointerGetAttribute(void *data, int attr, CUdeviceptr p) {
    if (!drv().initialised) return NOT_INITIALIZED;
    u64 base;
    Alloc a;
    // memory the driver does not know is an error here (not in the plural)
    if (!find_alloc(p, &base, &a)) return INVALID_VALUE;
    return attribute(attr, true, base, a, p, data) ? OK : NOT_SUPPORTED;
}

CUresult cuPointerGetAttributes(unsigned n, int *attrs, void **data, CUdeviceptr p) {
    if (!drv().initialised) return NOT_INITIALIZED;
    u64 base = 0;
    Alloc a{0, false, false};
    bool found = find_alloc(p, &base, &a);
    for (unsigned i = 0; i < n; ++i)
        if (!attribute(attrs[i], found, base, a, p, data[i])) return NOT_SUPPORTED;
    return OK;
}

CUresult cuPointerSetAttribute(const void *, int attr, CUdeviceptr p) {
    if (!drv().initialised) return NOT_INITIALIZED;
    if (attr != PTR_SYNC_MEMOPS) return NOT_SUPPORTED;
    return inside(p, 1, true) ? OK : INVALID_VALUE;
}

CUresult cuDeviceCanAccessPeer(int *can, CUdevice d, CUdevice peer) {
    if (!valid_device(d) || !valid_device(peer)) return INVALID_DEVICE;
    *can = d != peer;
    return OK;
}

CUresult cuMemGetAddressRange_v2(CUdeviceptr *base, size_t *size, CUdeviceptr p) {
    Context *c;
    if (CUresult r = ctx_now(&c)) return r;
    u64 b;
    Alloc a;
    if (!find_alloc(p, &b, &a) || !a.device) return NOT_FOUND;
    if (base) *base = b;
    if (size) *size = a.len;
    return OK;
}

CUresult cuStreamSynchronize(void *sh) {
    Context *c;
    if (CUresult r = ctx_now(&c)) return r;
    std::shared_ptr<Stream> s;
    if (CUresult r = stream_of(sh, c, &s)) return r;
    s->drain();
    return c->sticky.load();
}

// Everything queued in the current context (fabdiag waits so at a bandwidth
// test's post-run barrier, for copies a provider queued).
CUresult cuCtxSynchronize() {
    Context *c;
    if (CUresult r = ctx_now(&c)) return r;
    sync_context(c);
    return c->sticky.load();
}

CUresult cuEventSynchronize(void *h) {
    std::shared_ptr<Event> e;
    if (CUresult r = event_of(h, &e)) return r;
    for (;;) {
        if (CUresult r = e->ctx->sticky.load()) return r;
        {
            std::lock_guard<std::mutex> g(e->m);
            if (e->state != 1) return OK;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
}

CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr src, size_t len, void *sh) {
    if (!inside(src, len, true)) return INVALID_VALUE;
    return copy_async((void *)d, (const void *)src, len, d, sh, false);
}

// libfabric built against headers that name these without _v2
CUresult cuStreamDestroy(void *h) { return cuStreamDestroy_v2(h); }
CUresult cuEventDestroy(void *h) { return cuEventDestroy_v2(h); }
CUresult cuMemGetAddressRange(CUdeviceptr *base, size_t *size, CUdeviceptr p) {
    return cuMemGetAddressRange_v2(base, size, p);
}
CUresult cuMemcpyDtoDAsync(CUdeviceptr d, CUdeviceptr src, size_t len, void *sh) {
    return cuMemcpyDtoDAsync_v2(d, src, len, sh);
}

CUresult cuMemGetHandleForAddressRange(void *, CUdeviceptr, size_t, int, unsigned long long) {
    // dma-buf is reported unsupported (attribute 124), so never asked
    return NOT_SUPPORTED;
}

// The runtime API. Its errors (cudaError_t) share the driver's numbers
// for the ones used here, except "no device".
enum { cudaErrorNoDevice = 100, cudaMemcpyDefault = 4 };
static thread_local int runtime_device = 0;

// The runtime works in the primary context of its current device, made
// current on first use, as libcudart does.
static CUresult runtime_context() {
    if (CUresult r = cuInit(0)) return r;
    if (!valid_device(runtime_device)) return INVALID_DEVICE;
    Context *c = drv().primary[(size_t)runtime_device];
    if (current != c) {
        Context *got;
        if (CUresult r = cuDevicePrimaryCtxRetain(&got, runtime_device)) return r;
        current = got;
    }
    return OK;
}

int cudaGetDeviceCount(int *n) {
    if (CUresult r = cuInit(0)) return r;
    *n = (int)drv().primary.size();
    return *n == 0 ? (int)cudaErrorNoDevice : (int)OK;
}

int cudaGetDevice(int *d) {
    *d = runtime_device;
    return OK;
}

int cudaSetDevice(int d) {
    if (CUresult r = cuInit(0)) return r;
    if (!valid_device(d)) return INVALID_DEVICE;
    runtime_device = d;
    return runtime_context();
}

int cudaMalloc(void **p, size_t len) {
    if (CUresult r = runtime_context()) return r;
    CUdeviceptr d;
    if (CUresult r = cuMemAlloc_v2(&d, len)) return r;
    *p = (void *)d;
    return OK;
}

int cudaFree(void *p) {
    if (!p) return OK;
    if (CUresult r = runtime_context()) return r;
    return cuMemFree_v2((CUdeviceptr)p);
}

int cudaHostAlloc(void **p, size_t len, unsigned flags) {
    if (CUresult r = runtime_context()) return r;
    return cuMemHostAlloc(p, len, flags);
}

int cudaFreeHost(void *p) {
    if (CUresult r = runtime_context()) return r;
    return cuMemFreeHost(p);
}

// Registered host memory is known to the driver (pinned) but not owned.
int cudaHostRegister(void *p, size_t len, unsigned) {
    if (CUresult r = runtime_context()) return r;
    if (!p || !len) return INVALID_VALUE;
    std::lock_guard<std::mutex> g(drv().lock);
    Alloc a{len, false, true};
    a.owned = false;
    if (!drv().allocs.emplace((u64)p, a).second) return 712;  // cudaErrorHostMemoryAlreadyRegistered
    return OK;
}

int cudaHostUnregister(void *p) {
    std::lock_guard<std::mutex> g(drv().lock);
    auto it = drv().allocs.find((u64)p);
    if (it == drv().allocs.end() || it->second.owned || it->second.device) return 713;  // NotRegistered
    drv().allocs.erase(it);
    return OK;
}

// Synchronous, and (cudaMemcpyDefault) either way: the pointers say which.
int cudaMemcpy(void *dst, const void *src, size_t len, int kind) {
    if (CUresult r = runtime_context()) return r;
    if (kind < 0 || kind > cudaMemcpyDefault) return INVALID_VALUE;
    sync_context(current);
    if (CUresult r = current->sticky.load()) return r;
    memmove(dst, src, len);
    return OK;
}

int cudaDeviceSynchronize() {
    if (CUresult r = runtime_context()) return r;
    sync_context(current);
    return current->sticky.load();
}

const char *cudaGetErrorName(int e) {
    const char *s = nullptr;
    if (e == cudaErrorNoDevice) return "cudaErrorNoDevice";
    cuGetErrorName(e, &s);
    return s ? s : "cudaErrorUnknown";
}

const char *cudaGetErrorString(int e) {
    const char *s = nullptr;
    if (e == cudaErrorNoDevice) return "no CUDA-capable device is detected";
    cuGetErrorString(e, &s);
    return s ? s : "unknown error";
}

// An IPC handle (64 bytes, as cudaIpcMemHandle_t): the owner's pid and
// its memfd, and where in the allocation the pointer is.
struct IpcHandle {
    u64 magic;
    u64 pid;
    u64 fd;
    u64 len;
    u64 offset;
    u64 pad[3];
};
static const u64 IPC_MAGIC = 0xc0da1bcc5eed0001ull;
static_assert(sizeof(IpcHandle) == 64, "cudaIpcMemHandle_t is 64 bytes");

int cudaIpcGetMemHandle(IpcHandle *h, void *p) {
    if (CUresult r = runtime_context()) return r;
    u64 base;
    Alloc a;
    if (!find_alloc((u64)p, &base, &a) || !a.device || a.ipc) return INVALID_VALUE;
    *h = IpcHandle{IPC_MAGIC, (u64)getpid(), (u64)a.fd, a.len, (u64)p - base, {0, 0, 0}};
    return OK;
}

// Maps the owner's memory through /proc/PID/fd (same user, as CUDA IPC
// needs the same node); the process that made the handle cannot open it,
// as on the real driver.
int cudaIpcOpenMemHandle(void **out, IpcHandle h, unsigned) {
    if (CUresult r = runtime_context()) return r;
    if (h.magic != IPC_MAGIC) return INVALID_VALUE;
    if (h.pid == (u64)getpid()) return INVALID_CONTEXT;
    std::string path = "/proc/" + std::to_string(h.pid) + "/fd/" + std::to_string(h.fd);
    int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) return INVALID_VALUE;
    u64 rounded = pages(h.len);
    void *p = mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) return OUT_OF_MEMORY;
    Alloc a{h.len, true, false};
    a.device_ordinal = runtime_device;
    a.owned = false;
    a.ipc = true;
    std::lock_guard<std::mutex> g(drv().lock);
    drv().allocs[(u64)p] = a;
    // the pointer at the same offset as the one the handle was made for
    *out = (char *)p + h.offset;
    trace("ipc-open " + std::to_string(h.pid) + " " + std::to_string(h.len));
    return OK;
}

int cudaIpcCloseMemHandle(void *p) {
    u64 base;
    Alloc a;
    if (!find_alloc((u64)p, &base, &a) || !a.ipc) return INVALID_VALUE;
    std::lock_guard<std::mutex> g(drv().lock);
    drv().allocs.erase(base);
    munmap((void *)base, pages(a.len));
    return OK;
}

}  // extern "C"
