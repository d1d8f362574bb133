// runtime.cpp: runs a CUDA grid on the CPU.
//
// Blocks are handed out to worker OS threads (one worker plays one SM running one block
// at a time). Inside a block every CUDA thread is a fiber with its own stack. A fiber
// runs until it must wait for others (__syncthreads, a warp shuffle or vote) or
// returns; then the worker resumes the next fiber. Fibers start with makecontext and
// switch with _setjmp/_longjmp, which, unlike swapcontext, makes no system call.
//
// Errors never hang and never kill Python: a barrier some threads cannot reach, a
// shuffle naming a lane that left, a wild pointer (SIGSEGV, SIGBUS), an integer
// division by zero (SIGFPE), a failed assert, Ctrl-C, or, in the checked build, any
// access outside the launch's buffers or a misaligned vector access, stops the grid
// and comes back to Python as one message naming the kernel, the block and the thread.
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "include/cuda_on_cpu.h"

namespace {

// ---- what Python passes (mirrored by ctypes structures in engine.py) --------------
struct Buffer {
    uint64_t base, size;
    const char* name;
};
struct Access {  // one recorded load or store, for the memory-access pictures
    uint32_t block, thread;
    uint64_t site;   // return address inside the kernel library: which instruction
    int64_t offset;  // bytes from the start of the buffer (global) or shared window
    int32_t buffer;  // argument index for global memory, -1 for shared memory
    uint16_t size;
    uint8_t write, shared;
};
struct Spec {
    uint32_t grid[3], block[3];
    int32_t workers;
    int32_t checked;  // the library was built with access checks
    int32_t n_buffers;
    const Buffer* buffers;
    void* (*tls_touch)(void);  // returns an address inside the module's TLS block
    uint64_t module_base;
    Access* trace;  // NULL, or room for trace_capacity records
    uint64_t trace_capacity;
    uint64_t trace_count;   // out
    uint32_t trace_blocks;  // record only blocks with linear index below this
    char* error;            // out: the message when the launch fails
    uint64_t error_size;
    void* handle;  // out: the running launch, for thousand_wait_grid and finish_grid
};

enum State { READY, AT_BARRIER, AT_WARP, DONE };
enum WarpOp { OP_NONE, OP_EXCHANGE, OP_VOTE, OP_SYNCWARP };

struct Worker;

struct Fiber {
    thousand::Thread t;
    jmp_buf jb;
    ucontext_t uc;
    State state;
    int line;  // where it waits
    bool started;
    unsigned long long posted;  // what it brought to the current warp operation
    unsigned gen;               // that operation's generation
    char* stack_lo;
    char* stack_hi;
    Worker* w;
};

struct Warp {
    unsigned mask = 0, arrived = 0, gen = 0;
    WarpOp op = OP_NONE;
    const char* what = "";
    int line = 0;
    unsigned long long values[2][32];  // by generation parity: see warp_arrive
};

constexpr size_t kStack = 64 * 1024;

// Fiber stacks, kept between launches: `count` stacks with a guard page under each.
// Every guard splits the mapping, so a set costs 2 * count + 1 of the process's memory
// mappings, which Linux caps (vm.max_map_count, 65,530 by default): sets are sized to
// the launch's block, and the number of workers is capped to fit (workers_that_fit).
struct StackSet {
    char* base;
    size_t page, total;
    int count;
    char* lo(int i) const { return base + i * (kStack + page) + page; }
};

long regions_of(int count) {
    return 2L * count + 1;
}

long max_map_count() {
    static const long value = [] {
        long v = 0;
        if (FILE* f = std::fopen("/proc/sys/vm/max_map_count", "r")) {
            if (std::fscanf(f, "%ld", &v) != 1)
                v = 0;
            std::fclose(f);
        }
        return v > 0 ? v : 65530L;  // Linux's default, where /proc cannot tell
    }();
    return value;
}

// Fiber stacks may hold half the mappings; device arrays (3 each), libraries and
// Python's own allocations need the rest.
long stack_budget() {
    return max_map_count() / 2;
}

// How many workers' stacks (and each worker thread's own stack and guard) fit.
int workers_that_fit(int count) {
    long most = stack_budget() / (regions_of(count) + 2);
    return most < 1 ? 1 : (int)std::min(most, 1L << 20);
}

// Maps a set; nullptr with errno set where it cannot (ENOMEM: the mapping limit).
StackSet* map_stacks(int count) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t total = count * (kStack + page);
    void* p = mmap(nullptr, total, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return nullptr;
    auto* set = new StackSet{static_cast<char*>(p), page, total, count};
    for (int i = 0; i < count; ++i) {
        if (mprotect(set->lo(i) - page, page, PROT_NONE) != 0) {
            int e = errno;
            munmap(p, total);
            delete set;
            errno = e;
            return nullptr;
        }
    }
    return set;
}

std::mutex g_stack_mutex;
std::vector<StackSet*> g_free_stacks;  // sets no launch is using
long g_stack_regions = 0;              // mappings held by every set, free or in use

void unmap_free_stack(size_t i) {  // caller holds g_stack_mutex
    StackSet* set = g_free_stacks[i];
    g_stack_regions -= regions_of(set->count);
    munmap(set->base, set->total);
    delete set;
    g_free_stacks.erase(g_free_stacks.begin() + i);
}

// Up to `n` sets of `count` stacks, one per worker: free sets of that size first, new
// ones for the rest, after unmapping free sets of other sizes while the total would
// exceed the budget. Fewer sets where no more can be mapped (fewer workers run);
// false, with errno set, where not even one can.
bool take_stacks(int count, int n, std::vector<StackSet*>* out) {
    std::lock_guard<std::mutex> lock(g_stack_mutex);
    for (size_t i = 0; i < g_free_stacks.size() && (int)out->size() < n;) {
        if (g_free_stacks[i]->count == count) {
            out->push_back(g_free_stacks[i]);
            g_free_stacks.erase(g_free_stacks.begin() + i);
        } else {
            ++i;
        }
    }
    auto over = [&] {
        return g_stack_regions + (n - (long)out->size()) * regions_of(count) >
               stack_budget();
    };
    while (!g_free_stacks.empty() && over())
        unmap_free_stack(0);
    while ((int)out->size() < n) {
        StackSet* set = map_stacks(count);
        if (!set && !g_free_stacks.empty()) {  // make room, then try again
            while (!g_free_stacks.empty())
                unmap_free_stack(0);
            continue;
        }
        if (!set)
            return !out->empty();
        g_stack_regions += regions_of(count);
        out->push_back(set);
    }
    return true;
}

void give_back_stacks(StackSet* const* sets, size_t n) {
    std::lock_guard<std::mutex> lock(g_stack_mutex);
    g_free_stacks.insert(g_free_stacks.end(), sets, sets + n);
}

struct Launch {
    const Spec* spec;
    const char* name;
    void (*body)(void**);
    void** args;
    uint64_t blocks_total;
    std::atomic<uint64_t> next_block{0};
    std::atomic<bool> failed{false};
    std::atomic<bool> cancelled{false};  // Ctrl-C in Python: thousand_cancel_grid
    std::atomic<uint64_t> trace_count{0};
    std::mutex error_mutex;
    std::string error;
    // The workers (joined with a timeout, so Python can wait in slices), their
    // stacks (one set each), and which have been joined.
    std::vector<pthread_t> threads;
    std::vector<StackSet*> stacks;
    std::vector<char> joined;
    void fail(const std::string& message) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (error.empty())
            error = message;
        failed = true;
    }
};

struct Region {
    uintptr_t lo, hi;
};

struct Worker {
    Launch* launch;
    const Spec* spec;
    thousand::Grid grid;
    std::vector<Fiber> fibers;
    std::vector<Warp> warps;
    int n = 0, live = 0;
    int barrier_arrived = 0, barrier_line = 0, barrier_count = 0, barrier_result = 0;
    uint64_t block_linear = 0;
    jmp_buf sched_jb, abort_jb;
    ucontext_t sched_uc;
    StackSet* stacks = nullptr;
    Fiber* starting = nullptr;
    // checked build: where this worker's kernel code may legitimately read and write
    Region shared_tls{0, 0};
    std::vector<Region> module_segments;
    char sigstack[64 * 1024];
};

thread_local Worker* tls_worker = nullptr;
thread_local Fiber* tls_fiber = nullptr;

}  // namespace

extern "C" {
thread_local thousand::Thread* thousand_current_thread = nullptr;
thread_local thousand::Grid* thousand_current_grid = nullptr;
}

namespace {

std::string where(const Worker* w, const Fiber* f) {
    char buf[160];
    const uint3& b = w->grid.block_idx;
    if (f) {
        std::snprintf(buf, sizeof buf, "thread (%u,%u,%u) of block (%u,%u,%u)",
                      f->t.idx.x, f->t.idx.y, f->t.idx.z, b.x, b.y, b.z);
    } else {
        std::snprintf(buf, sizeof buf, "block (%u,%u,%u)", b.x, b.y, b.z);
    }
    return buf;
}

std::string format(const char* fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return buf;
}

// Stop the whole grid from inside a fiber: record why, then leave the block. The
// fiber is forgotten first, so an interrupt arriving meanwhile does not re-enter.
[[noreturn]] void abort_from_fiber(const std::string& what) {
    Worker* w = tls_worker;
    Fiber* f = tls_fiber;
    thousand_current_thread = nullptr;
    tls_fiber = nullptr;
    w->launch->fail(w->launch->name + std::string(": ") + what + " (" + where(w, f) +
                    ")");
    _longjmp(w->abort_jb, 1);
}

// --8<-- [start:fibers]
inline void park(Fiber* f) {  // back to the worker's scheduler until resumed
    if (!_setjmp(f->jb))
        _longjmp(f->w->sched_jb, 1);
}

void fiber_entry() {
    Worker* w = tls_worker;
    Fiber* f = w->starting;
    for (;;) {  // one pass per block this worker runs
        w->launch->body(w->launch->args);
        f->state = DONE;
        --w->live;
        park(f);
    }
}

void resume(Worker* w, Fiber* f) {
    thousand_current_thread = &f->t;
    tls_fiber = f;
    if (!_setjmp(w->sched_jb)) {
        if (!f->started) {
            f->started = true;
            w->starting = f;
            swapcontext(&w->sched_uc, &f->uc);  // first entry only
        } else {
            _longjmp(f->jb, 1);
        }
    }
    thousand_current_thread = nullptr;
    tls_fiber = nullptr;
}
// --8<-- [end:fibers]

const char* state_text(const Fiber& f, char* buf, size_t size) {
    switch (f.state) {
        case DONE:
            return "has returned";
        case AT_BARRIER:
            std::snprintf(buf, size, "waits at __syncthreads on line %d", f.line);
            return buf;
        case AT_WARP:
            std::snprintf(buf, size, "waits at a warp operation on line %d", f.line);
            return buf;
        default:
            return "is runnable";
    }
}

// Nothing can run and some threads have not finished: say exactly who waits for whom.
std::string explain_deadlock(Worker* w) {
    char buf[96];
    for (int wi = 0; wi < (int)w->warps.size(); ++wi) {
        Warp& wp = w->warps[wi];
        if (wp.op == OP_NONE || wp.arrived == 0)
            continue;
        unsigned missing = wp.mask & ~wp.arrived;
        int lane = __builtin_ctz(missing);
        Fiber& f = w->fibers[wi * 32 + lane];
        return format(
            "%s on line %d with mask 0x%08x waits for lane %d (thread (%u,%u,%u)), "
            "which %s",
            wp.what, wp.line, wp.mask, lane, f.t.idx.x, f.t.idx.y, f.t.idx.z,
            state_text(f, buf, sizeof buf));
    }
    int done = 0;
    const Fiber* gone = nullptr;
    for (auto& f : w->fibers) {
        if (f.state == DONE) {
            ++done;
            if (!gone)
                gone = &f;
        }
    }
    return format(
        "__syncthreads on line %d is never reached by every thread: %d of %d "
        "threads wait there, thread (%u,%u,%u) has returned; every thread of a "
        "block must reach each __syncthreads",
        w->barrier_line, w->barrier_arrived, w->n, gone ? gone->t.idx.x : 0,
        gone ? gone->t.idx.y : 0, gone ? gone->t.idx.z : 0);
}

// --8<-- [start:run-block]
void run_block(Worker* w) {
    for (;;) {
        bool ran = false;
        for (int i = 0; i < w->n; ++i) {
            if (w->fibers[i].state == READY) {
                resume(w, &w->fibers[i]);
                ran = true;
            }
        }
        if (w->live == 0)
            return;
        if (!ran) {
            w->launch->fail(w->launch->name + std::string(": ") + explain_deadlock(w) +
                            " (" + where(w, nullptr) + ")");
            _longjmp(w->abort_jb, 1);
        }
    }
}
// --8<-- [end:run-block]

void find_module_regions(Worker* w) {
    // The kernel library's own segments (constants, string literals) and, for this OS
    // thread, its TLS block: the __shared__ arrays live there.
    char* tls = static_cast<char*>(w->spec->tls_touch());
    struct Ctx {
        Worker* w;
        char* tls;
    } ctx{w, tls};
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data) -> int {
            auto* c = static_cast<Ctx*>(data);
            if (info->dlpi_addr != c->w->spec->module_base)
                return 0;
            for (int i = 0; i < info->dlpi_phnum; ++i) {
                const ElfW(Phdr)& ph = info->dlpi_phdr[i];
                uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
                if (ph.p_type == PT_LOAD)
                    c->w->module_segments.push_back({lo, lo + ph.p_memsz});
                if (ph.p_type == PT_TLS && info->dlpi_tls_data) {
                    uintptr_t t = (uintptr_t)info->dlpi_tls_data;
                    c->w->shared_tls = {t, t + ph.p_memsz};
                }
            }
            return 1;
        },
        &ctx);
    if (w->shared_tls.hi == 0 && tls) {  // older glibc: no dlpi_tls_data
        w->shared_tls = {(uintptr_t)tls & ~(uintptr_t)4095, (uintptr_t)tls + 4096};
    }
}

void run_worker(Launch* L, int index) {
    Worker* w = new Worker();
    w->launch = L;
    w->spec = L->spec;
    const Spec* s = L->spec;
    tls_worker = w;
    // Faults in a fiber are handled on this stack, so a stack overflow can be reported.
    stack_t ss{};
    ss.ss_sp = w->sigstack;
    ss.ss_size = sizeof w->sigstack;
    sigaltstack(&ss, nullptr);

    w->grid.block_dim = dim3(s->block[0], s->block[1], s->block[2]);
    w->grid.grid_dim = dim3(s->grid[0], s->grid[1], s->grid[2]);
    w->n = (int)(s->block[0] * s->block[1] * s->block[2]);
    w->fibers.resize(w->n);
    w->warps.resize((w->n + 31) / 32);
    w->stacks = L->stacks[index];  // taken by thousand_run_grid before it started us
    if (s->checked)
        find_module_regions(w);
    ucontext_t proto;
    getcontext(&proto);
    for (int i = 0; i < w->n; ++i) {
        Fiber& f = w->fibers[i];
        f.w = w;
        f.t.linear = i;
        f.t.idx = {(unsigned)(i % s->block[0]),
                   (unsigned)(i / s->block[0] % s->block[1]),
                   (unsigned)(i / (s->block[0] * s->block[1]))};
        f.stack_lo = w->stacks->lo(i);
        f.stack_hi = f.stack_lo + kStack;
        f.uc = proto;
        f.uc.uc_stack.ss_sp = f.stack_lo;
        f.uc.uc_stack.ss_size = kStack;
        f.uc.uc_link = nullptr;
        makecontext(&f.uc, fiber_entry, 0);
        f.started = false;
    }
    thousand_current_grid = &w->grid;
    if (!_setjmp(w->abort_jb)) {
        for (;;) {
            if (L->failed || L->cancelled)
                break;
            uint64_t b = L->next_block++;
            if (b >= L->blocks_total)
                break;
            w->block_linear = b;
            w->grid.block_idx = {(unsigned)(b % s->grid[0]),
                                 (unsigned)(b / s->grid[0] % s->grid[1]),
                                 (unsigned)(b / ((uint64_t)s->grid[0] * s->grid[1]))};
            for (auto& f : w->fibers)
                f.state = READY;
            for (auto& wp : w->warps) {
                wp.arrived = 0;
                wp.op = OP_NONE;
            }
            w->live = w->n;
            w->barrier_arrived = 0;
            w->barrier_count = 0;
            run_block(w);
        }
    }
    thousand_current_grid = nullptr;
    thousand_current_thread = nullptr;
    tls_fiber = nullptr;
    tls_worker = nullptr;
    ss.ss_flags = SS_DISABLE;
    sigaltstack(&ss, nullptr);
    delete w;
}

struct Start {  // what a new worker thread is told
    Launch* launch;
    int index;
};

void* worker_main(void* arg) {
    Start* start = static_cast<Start*>(arg);
    run_worker(start->launch, start->index);
    delete start;
    return nullptr;
}

// An access outside every region a kernel may touch: name the nearest buffer, as
// compute-sanitizer does.
std::string outside(const Spec* s, uintptr_t a, size_t n, bool write) {
    const Buffer* near = nullptr;
    int64_t best = INT64_MAX, off = 0;
    for (int i = 0; i < s->n_buffers; ++i) {
        const Buffer& b = s->buffers[i];
        int64_t d = (int64_t)a - (int64_t)b.base;
        int64_t dist = d < 0 ? -d : (d >= (int64_t)b.size ? d - (int64_t)b.size : 0);
        if (dist < best) {
            best = dist;
            near = &b;
            off = d;
        }
    }
    // n == 0: a fault, whose size and direction the signal does not tell
    std::string kind = n == 0  ? std::string("access")
                       : write ? format("write of %zu bytes", n)
                               : format("read of %zu bytes", n);
    if (near && best < (1 << 20)) {
        return format("out-of-bounds %s at byte %lld of `%s`, which has %llu bytes",
                      kind.c_str(), (long long)off, near->name,
                      (unsigned long long)near->size);
    }
    return format("%s at %p, outside every buffer passed to the kernel", kind.c_str(),
                  (void*)a);
}

// ---- faults: a wild pointer or a division by zero becomes an error, not a crash ----
struct sigaction g_old_segv, g_old_bus, g_old_fpe;

void on_fault(int sig, siginfo_t* info, void* uctx) {
    Worker* w = tls_worker;
    Fiber* f = tls_fiber;
    if (w && f) {
        uintptr_t a = (uintptr_t)info->si_addr;
        std::string what;
        if (sig == SIGFPE) {
            // x86 traps both; a GPU traps neither and returns an undefined value
            what = "integer division by zero (or INT_MIN / -1) (SIGFPE); a GPU does "
                   "not stop here, it returns an undefined value";
        } else if (a >= (uintptr_t)f->stack_lo - w->stacks->page &&
                   a < (uintptr_t)f->stack_lo) {
            what = "stack overflow: the thread used more than 64 KiB of local memory";
        } else {
            what = std::string("invalid memory access (") +
                   (sig == SIGBUS ? "bus error" : "segmentation fault") +
                   "): " + outside(w->spec, a, 0, false);
        }
        abort_from_fiber(what);
    }
    struct sigaction* old = sig == SIGBUS    ? &g_old_bus
                            : sig == SIGFPE ? &g_old_fpe
                                            : &g_old_segv;
    sigaction(sig, old, nullptr);  // not ours: let the previous handler see it
    if (old->sa_flags & SA_SIGINFO) {
        if (old->sa_sigaction)
            old->sa_sigaction(sig, info, uctx);
    } else if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN) {
        old->sa_handler(sig);
    }
}

// Ctrl-C: Python's handler runs on its main thread, which then cancels the launch and
// sends this signal to each worker still running, so a fiber in an endless loop leaves.
int interrupt_signal() {
    return SIGRTMIN + 3;  // a real-time signal: neither Python nor glibc uses it
}

void on_interrupt(int, siginfo_t*, void*) {
    Worker* w = tls_worker;
    if (w && tls_fiber && w->launch->cancelled)
        abort_from_fiber("interrupted (Ctrl-C)");
    // between fibers: the worker sees `cancelled` itself, or the next signal lands
}

void install_fault_handlers() {
    static std::once_flag once;
    std::call_once(once, [] {
        struct sigaction sa{};
        sa.sa_sigaction = on_fault;
        // NODEFER: we leave by _longjmp, which would otherwise keep the signal blocked
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGSEGV, &sa, &g_old_segv);
        sigaction(SIGBUS, &sa, &g_old_bus);
        sigaction(SIGFPE, &sa, &g_old_fpe);
        sa.sa_sigaction = on_interrupt;
        sa.sa_flags |= SA_RESTART;
        sigaction(interrupt_signal(), &sa, nullptr);
    });
}

// ---- the checked build's hooks: g++ -fsanitize=kernel-address calls these ----------
inline bool inside(uintptr_t a, size_t n, uintptr_t lo, uintptr_t hi) {
    return a >= lo && a + n <= hi;
}

void record(Worker* w, Fiber* f, size_t n, bool write, bool shared, int buffer,
            int64_t offset, void* site) {
    const Spec* s = w->spec;
    if (!s->trace || w->block_linear >= s->trace_blocks)
        return;
    uint64_t i = w->launch->trace_count++;
    if (i >= s->trace_capacity)
        return;
    Access& r = s->trace[i];
    r.block = (uint32_t)w->block_linear;
    r.thread = (uint32_t)f->t.linear;
    r.site = (uint64_t)(uintptr_t)site - s->module_base;
    r.offset = offset;
    r.buffer = buffer;
    r.size = (uint16_t)n;
    r.write = write;
    r.shared = shared;
}

// A GPU faults on a vector access (float2, float4, double, ...) that does not start
// at a multiple of its size: "misaligned address".
// `buffer`: the argument's name, or nullptr for shared memory.
std::string misaligned(size_t n, bool write, int64_t offset, const char* buffer) {
    std::string where = buffer ? format("`%s`", buffer) : "shared memory";
    return format("misaligned address: %s of %zu bytes at byte %lld of %s; a GPU "
                  "requires an access of %zu bytes to start at a multiple of %zu",
                  write ? "write" : "read", n, (long long)offset, where.c_str(), n,
                  n);
}

// --8<-- [start:check-access]
// `align`: 8 or 16 for the hooks of those sizes (vector types, doubles), else 1.
void check_access(const void* p, size_t n, bool write, void* site, size_t align) {
    Fiber* f = tls_fiber;
    if (!f)
        return;  // not inside a kernel
    Worker* w = f->w;
    const Spec* s = w->spec;
    uintptr_t a = (uintptr_t)p;
    for (int i = 0; i < s->n_buffers; ++i) {
        const Buffer& b = s->buffers[i];
        if (inside(a, n, b.base, b.base + b.size)) {
            if (a % align)
                abort_from_fiber(misaligned(n, write, a - b.base, b.name));
            record(w, f, n, write, false, i, (int64_t)(a - b.base), site);
            return;
        }
    }
    if (inside(a, n, (uintptr_t)f->stack_lo, (uintptr_t)f->stack_hi))
        return;
    if (inside(a, n, w->shared_tls.lo, w->shared_tls.hi)) {
        if (a % align)
            abort_from_fiber(misaligned(n, write, a - w->shared_tls.lo, nullptr));
        record(w, f, n, write, true, -1, (int64_t)(a - w->shared_tls.lo), site);
        return;
    }
    // the runtime's own per-thread records, read by threadIdx, blockIdx, ...
    if (inside(a, n, (uintptr_t)&w->grid, (uintptr_t)(&w->grid + 1)))
        return;
    if (inside(a, n, (uintptr_t)&f->t, (uintptr_t)(&f->t + 1)))
        return;
    if (a == (uintptr_t)&thousand_current_thread ||
        a == (uintptr_t)&thousand_current_grid)
        return;
    for (const Region& r : w->module_segments) {
        if (inside(a, n, r.lo, r.hi))
            return;
    }
    abort_from_fiber(outside(s, a, n, write));
}
// --8<-- [end:check-access]

}  // namespace

// ---- the CUDA built-ins the header declares ----------------------------------------
extern "C" {

void thousand_syncthreads(int line) {
    (void)thousand_syncthreads_count(0, line);
}

// --8<-- [start:barrier]
int thousand_syncthreads_count(int predicate, int line) {
    Worker* w = tls_worker;
    Fiber* f = tls_fiber;
    if (w->barrier_arrived == 0) {
        w->barrier_line = line;
        w->barrier_count = 0;
    } else if (line != w->barrier_line) {
        abort_from_fiber(
            format("threads of one block wait at different __syncthreads "
                   "(line %d and line %d); every thread must reach the same one",
                   w->barrier_line, line));
    }
    w->barrier_count += predicate;
    if (++w->barrier_arrived == w->n) {  // the last one in releases the others
        w->barrier_result = w->barrier_count;
        w->barrier_arrived = 0;
        for (auto& other : w->fibers) {
            if (other.state == AT_BARRIER)
                other.state = READY;
        }
        return w->barrier_result;
    }
    f->state = AT_BARRIER;
    f->line = line;
    park(f);
    return w->barrier_result;  // nobody can change it before every waiter has run
}
// --8<-- [end:barrier]

// --8<-- [start:warp]
// A warp operation: every lane in `mask` posts a value, waits for the others, then all
// read. Values sit in one of two slots by generation: a lane that races ahead to the
// next operation writes the other slot, so it cannot overwrite what a slower lane has
// yet to read.
static Warp& warp_arrive(unsigned mask, unsigned long long value, WarpOp op, int line,
                         const char* what) {
    Worker* w = tls_worker;
    Fiber* f = tls_fiber;
    int lane = f->t.linear % 32, wi = f->t.linear / 32;
    Warp& wp = w->warps[wi];
    int lanes_here = w->n - wi * 32 < 32 ? w->n - wi * 32 : 32;
    unsigned existing = lanes_here == 32 ? 0xffffffffu : ((1u << lanes_here) - 1);
    if (!(mask & (1u << lane))) {
        abort_from_fiber(
            format("%s on line %d: mask 0x%08x leaves out lane %d, which calls "
                   "it; a thread must be in its own mask",
                   what, line, mask, lane));
    }
    if (mask & ~existing) {
        abort_from_fiber(
            format("%s on line %d: mask 0x%08x names lanes this warp does not "
                   "have (the block's last warp has %d threads)",
                   what, line, mask, lanes_here));
    }
    if (wp.arrived == 0) {
        wp.mask = mask;
        wp.op = op;
        wp.what = what;
        wp.line = line;
    } else if (wp.mask != mask || wp.op != op) {
        abort_from_fiber(
            format("lanes of one warp disagree: %s on line %d with mask 0x%08x "
                   "meets %s on line %d with mask 0x%08x",
                   what, line, mask, wp.what, wp.line, wp.mask));
    }
    f->gen = wp.gen;
    wp.values[wp.gen & 1][lane] = value;
    wp.arrived |= 1u << lane;
    if (wp.arrived == wp.mask) {
        wp.arrived = 0;
        ++wp.gen;
        for (int l = 0; l < lanes_here; ++l) {
            Fiber& other = w->fibers[wi * 32 + l];
            if (other.state == AT_WARP)
                other.state = READY;
        }
    } else {
        f->state = AT_WARP;
        f->line = line;
        park(f);
    }
    return wp;
}

unsigned long long thousand_warp_exchange(unsigned mask, unsigned long long value,
                                          int src_lane, int line, const char* what) {
    Warp& wp = warp_arrive(mask, value, OP_EXCHANGE, line, what);
    Fiber* f = tls_fiber;
    if (!(mask & (1u << src_lane))) {
        abort_from_fiber(
            format("%s on line %d reads lane %d, which is not in mask 0x%08x", what,
                   line, src_lane, mask));
    }
    return wp.values[f->gen & 1][src_lane];
}
// --8<-- [end:warp]

unsigned thousand_warp_vote(unsigned mask, int predicate, int line, const char* what) {
    Warp& wp = warp_arrive(mask, (unsigned long long)predicate, OP_VOTE, line, what);
    Fiber* f = tls_fiber;
    unsigned ballot = 0;
    for (int l = 0; l < 32; ++l) {
        if ((mask >> l & 1) && wp.values[f->gen & 1][l])
            ballot |= 1u << l;
    }
    return ballot;
}

void thousand_syncwarp(unsigned mask, int line) {
    (void)warp_arrive(mask, 0, OP_SYNCWARP, line, "__syncwarp");
}

unsigned thousand_activemask(void) {
    Worker* w = tls_worker;
    Fiber* f = tls_fiber;
    int wi = f->t.linear / 32;
    unsigned m = 0;
    for (int l = 0; l < 32 && wi * 32 + l < w->n; ++l) {
        if (w->fibers[wi * 32 + l].state != DONE)
            m |= 1u << l;
    }
    return m;
}

// A kernel's assert(): inside a fiber it stops the launch; elsewhere it aborts, as
// glibc's does.
void thousand_assert_fail(const char* expr, const char* file, unsigned line,
                          const char* function) {
    if (tls_worker && tls_fiber)
        abort_from_fiber(format("assertion `%s` failed at %s:%u", expr, file, line));
    std::fprintf(stderr, "%s:%u: %s: Assertion `%s' failed.\n", file, line, function,
                 expr);
    std::abort();
}

// Starts the grid and returns at once (0; the launch in spec->handle), so that Python
// waits in short slices (thousand_wait_grid) and can run its Ctrl-C handler. Returns 2,
// with the error filled in, where the workers' stacks or threads cannot be had.
int thousand_run_grid(const void* spec_ptr, const char* name, void (*body)(void**),
                      void** args) {
    Spec* s = const_cast<Spec*>(static_cast<const Spec*>(spec_ptr));
    auto* L = new Launch();
    L->spec = s;
    L->name = name;
    L->body = body;
    L->args = args;
    L->blocks_total = (uint64_t)s->grid[0] * s->grid[1] * s->grid[2];
    install_fault_handlers();
    int threads = (int)(s->block[0] * s->block[1] * s->block[2]);
    int count = 32;  // stacks per set: a power of two, so sets serve many launches
    while (count < threads)
        count *= 2;
    int workers = std::min(s->workers < 1 ? 1 : s->workers, workers_that_fit(count));
    if ((uint64_t)workers > L->blocks_total)
        workers = (int)L->blocks_total;
    if (!take_stacks(count, workers, &L->stacks)) {
        std::snprintf(
            s->error, s->error_size,
            "%s: cannot map the fiber stacks of %d workers (%d stacks each): %s. "
            "Each stack has a guard page, so a worker takes %ld memory mappings, and "
            "Linux allows this process %ld (vm.max_map_count); free device arrays, "
            "set THOUSAND_CPU_WORKERS lower, or raise the limit "
            "(sysctl -w vm.max_map_count=262144)",
            name, workers, count, std::strerror(errno), regions_of(count),
            max_map_count());
        delete L;
        return 2;
    }
    workers = (int)L->stacks.size();  // fewer where no more stacks could be mapped
    // Kernels never run on the caller's thread: its stack and signal stack stay
    // Python's.
    int started = 0, why = 0;
    for (; started < workers; ++started) {
        pthread_t t;
        Start* start = new Start{L, started};
        if ((why = pthread_create(&t, nullptr, worker_main, start)) != 0) {
            delete start;  // fewer threads still run every block
            break;
        }
        L->threads.push_back(t);
    }
    L->joined.assign(started, 0);
    give_back_stacks(L->stacks.data() + started, workers - started);
    if (started == 0) {
        std::snprintf(s->error, s->error_size, "%s: cannot start a worker thread: %s",
                      name, std::strerror(why));
        delete L;
        return 2;
    }
    s->handle = L;
    return 0;
}

// Waits up to `ms` milliseconds: 1 once every worker has finished, else 0. After a
// cancel it interrupts again each worker that is still running.
int thousand_wait_grid(void* handle, int ms) {
    Launch* L = static_cast<Launch*>(handle);
    for (size_t i = 0; i < L->threads.size(); ++i) {
        if (L->cancelled && !L->joined[i])  // not yet joined: the handle is valid
            pthread_kill(L->threads[i], interrupt_signal());
    }
    timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += ms / 1000;
    deadline.tv_nsec += (ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec += 1;
        deadline.tv_nsec -= 1000000000L;
    }
    for (size_t i = 0; i < L->threads.size(); ++i) {
        if (L->joined[i])
            continue;
        if (pthread_timedjoin_np(L->threads[i], nullptr, &deadline) != 0)
            return 0;  // still running
        L->joined[i] = 1;
    }
    return 1;
}

// Ctrl-C: stop handing out blocks and leave the fibers that are running.
void thousand_cancel_grid(void* handle) {
    static_cast<Launch*>(handle)->cancelled = true;
}

// After thousand_wait_grid said 1 (every worker joined): returns their stacks, fills
// the spec's trace count and error; 0 when the grid ran to the end, 1 when it failed.
int thousand_finish_grid(void* handle) {
    Launch* L = static_cast<Launch*>(handle);
    Spec* s = const_cast<Spec*>(L->spec);
    give_back_stacks(L->stacks.data(), L->threads.size());
    s->trace_count = L->trace_count.load();
    s->handle = nullptr;
    int status = 0;
    if (L->failed || L->cancelled) {
        std::string error = L->error.empty() ? std::string(L->name) + ": interrupted"
                                             : L->error;
        std::snprintf(s->error, s->error_size, "%s", error.c_str());
        status = 1;
    }
    delete L;
    return status;
}

// g++ -fsanitize=kernel-address --param asan-instrumentation-with-call-threshold=0
// turns every load and store of the checked build into one of these calls. g++ calls
// the 8- and 16-byte hooks only for types aligned to 8 or more (double, float2,
// float4, ...); packed structs of floats go through the N hooks, unchecked for
// alignment, as a GPU reads them a float at a time.
#define THOUSAND_HOOKS(n, align)                                       \
    void __asan_load##n##_noabort(void* p) {                           \
        check_access(p, n, false, __builtin_return_address(0), align); \
    }                                                                  \
    void __asan_store##n##_noabort(void* p) {                          \
        check_access(p, n, true, __builtin_return_address(0), align);  \
    }
THOUSAND_HOOKS(1, 1)
THOUSAND_HOOKS(2, 1)
THOUSAND_HOOKS(4, 1)
THOUSAND_HOOKS(8, 8)
THOUSAND_HOOKS(16, 16)
#undef THOUSAND_HOOKS
void __asan_loadN_noabort(void* p, size_t n) {
    check_access(p, n, false, __builtin_return_address(0), 1);
}
void __asan_storeN_noabort(void* p, size_t n) {
    check_access(p, n, true, __builtin_return_address(0), 1);
}
void __asan_handle_no_return(void) {}

// Device memory: each allocation gets pages of its own, between two inaccessible
// guard pages, and ends (rounded to 256 bytes) where the upper guard begins. In the
// fast build a kernel that runs off the end into the guard faults; the slack before
// the start and the rounding are not guarded, and a wild pointer that lands in other
// mapped memory is not caught: only the checked build sees those. Each allocation
// costs up to 3 memory mappings (vm.max_map_count).
static size_t device_span(uint64_t nbytes, size_t* data, size_t* pages) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    *data = ((nbytes ? nbytes : 1) + 255) / 256 * 256;
    *pages = (*data + page - 1) / page * page;
    return *pages + 2 * page;
}

void* thousand_device_alloc(uint64_t nbytes) {
    size_t data, pages, page = (size_t)sysconf(_SC_PAGESIZE);
    size_t total = device_span(nbytes, &data, &pages);
    void* p = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    if (p == MAP_FAILED)
        return nullptr;  // errno says why; Python names the mapping limit
    char* base = static_cast<char*>(p);
    if (mprotect(base, page, PROT_NONE) != 0 ||
        mprotect(base + page + pages, page, PROT_NONE) != 0) {
        int e = errno;  // each guard splits the mapping: the limit can strike here
        munmap(base, total);
        errno = e;
        return nullptr;
    }
    return base + page + (pages - data);
}

void thousand_device_free(void* ptr, uint64_t nbytes) {
    size_t data, pages, page = (size_t)sysconf(_SC_PAGESIZE);
    size_t total = device_span(nbytes, &data, &pages);
    munmap(static_cast<char*>(ptr) - (pages - data) - page, total);
}

// Where a kernel library is loaded: trace records store sites relative to it.
uint64_t thousand_module_base(void* symbol) {
    Dl_info info;
    return dladdr(symbol, &info) ? (uint64_t)(uintptr_t)info.dli_fbase : 0;
}

}  // extern "C"
