// The ring all-reduce in one kernel a call (B19), for ranks that each own a GPU.
//
// v1 (ring.py, ProcessRing): a copy kernel a step, then the host waits for the
//     device and meets the other ranks at a barrier; n - 1 such steps to reduce,
//     n - 1 to gather. Each step costs a launch, a synchronisation and a barrier
//     on the host, and the link idles while they happen.
// v2 (here, DeviceRing): every rank launches ring_all_reduce_v2 once. Its blocks
//     wait for each other through flags in GPU memory, never through the host,
//     and the data moves in slots of SLOT floats, a FIFO of SLOTS slots a block:
//     while the next rank adds slot k, this one already writes slot k + 1 (the
//     pipeline), and a received slot is added and sent on in one pass (a fused
//     "receive, reduce, send", as NCCL's ring does it).
//
// Block b of rank r talks only to block b of ranks r - 1 and r + 1. Each rank
// owns one region that its neighbours map through CUDA IPC:
//   ready[b]  slots that rank r - 1 has written into r's inbox (r - 1 bumps it)
//   freed[b]  slots that rank r + 1 has consumed from r + 1's inbox (r + 1 bumps it)
//   inbox     [blocks][SLOTS][SLOT] floats that rank r - 1 writes
// The counters only grow, call after call; `state` (local) remembers where this
// rank's blocks stand, so a call needs no reset.
#include <stdint.h>

#define RING_SLOT 16384  // floats a slot: 64 KiB
#define RING_SLOTS 8     // slots in a block's FIFO
#define RING_GROUP \
    4                     // slots an op moves before the next op; fewer than
                          // RING_SLOTS, or every rank waits on a waiting neighbour
#define RING_THREADS 512  // threads a block (launch with exactly this many)
#define RING_TIMEOUT_NS 10000000000ull  // 10 s: a peer that never answers

// --8<-- [start:flags]
__device__ __forceinline__ uint64_t load_acquire(const uint64_t* p) {
    uint64_t v;
    asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ void store_release(uint64_t* p, uint64_t v) {
    asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

__device__ __forceinline__ uint64_t now_ns() {
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// Thread 0 waits until *counter >= want; then the whole block goes on.
__device__ void wait_for(const uint64_t* counter, uint64_t want) {
    if (threadIdx.x == 0) {
        uint64_t start = now_ns();
        while (load_acquire(counter) < want) {
            if (now_ns() - start > RING_TIMEOUT_NS) __trap();  // a rank is gone
        }
    }
    __syncthreads();
}

// Every thread's writes (to the peer's inbox or to our own buffer) land, then
// thread 0 tells the peer by bumping its counter.
__device__ void signal(uint64_t* counter, uint64_t value) {
    __threadfence_system();
    __syncthreads();
    if (threadIdx.x == 0) store_release(counter, value);
}
// --8<-- [end:flags]

struct Ring {
    float* buf;            // this rank's data, summed in place
    int64_t size;          // floats in buf
    int rank, n;           // this rank, ranks in the ring
    uint64_t* ready;       // ours: slots that arrived in our inbox
    uint64_t* freed;       // ours: slots the next rank has consumed from its inbox
    const float* inbox;    // ours, block b's slots
    uint64_t* next_ready;  // the next rank's ready[b]
    float* next_inbox;     // the next rank's inbox, block b's slots
    uint64_t* prev_freed;  // the previous rank's freed[b]
    uint64_t sent, got;    // slots this block has sent and received, ever
};

// Where block b's share of chunk c lies: chunks as chunk_bounds() in ring.py
// cuts them, each split over the blocks on 4-float boundaries.
__device__ void share_of(const Ring& g, int c, int64_t* lo, int64_t* hi) {
    int64_t c_lo = g.size * c / g.n / 4 * 4;
    int64_t c_hi = c + 1 == g.n ? g.size : g.size * (c + 1) / g.n / 4 * 4;
    int64_t len = c_hi - c_lo;
    *lo = c_lo + len * blockIdx.x / gridDim.x / 4 * 4;
    *hi = blockIdx.x + 1 == gridDim.x
              ? c_hi
              : c_lo + len * (blockIdx.x + 1) / gridDim.x / 4 * 4;
}

// --8<-- [start:step]
// One slot's worth of elements [lo, hi) of our buffer. With `arrived` (the slot
// the previous rank sent), v = ours + arrived when reducing, v = arrived when
// gathering; without, v = ours. v goes to `to_peer` (the next rank's slot) and,
// with `keep`, into our buffer. lo is a multiple of 4 floats, so all but a
// ragged end move as float4. Each thread first loads all of its share of the slot
// (RING_VECS float4 of ours and as many arrived), then adds and stores: 16 loads
// in flight a thread rather than 2, or one SM could not keep a link busy.
#define RING_VECS (RING_SLOT / 4 / RING_THREADS)
__device__ void move_slot(const Ring& g, int64_t lo, int64_t hi, const float* arrived,
                          bool add, float* to_peer, bool keep) {
    int64_t len = hi - lo, vecs = len / 4;
    float4* mine4 = reinterpret_cast<float4*>(g.buf + lo);
    const float4* in4 = reinterpret_cast<const float4*>(arrived);
    float4* out4 = reinterpret_cast<float4*>(to_peer);
    bool use_mine = !arrived || add;
    float4 v[RING_VECS], a[RING_VECS];
#pragma unroll
    for (int k = 0; k < RING_VECS; ++k) {
        int64_t i = threadIdx.x + (int64_t)k * RING_THREADS;
        v[k] = make_float4(0.f, 0.f, 0.f, 0.f), a[k] = v[k];
        if (i < vecs && use_mine) v[k] = mine4[i];
        if (i < vecs && arrived) a[k] = __ldcg(in4 + i);  // not L1: the slot is reused
    }
#pragma unroll
    for (int k = 0; k < RING_VECS; ++k) {
        int64_t i = threadIdx.x + (int64_t)k * RING_THREADS;
        if (i >= vecs) break;
        float4 w = make_float4(v[k].x + a[k].x, v[k].y + a[k].y, v[k].z + a[k].z,
                               v[k].w + a[k].w);
        if (to_peer) out4[i] = w;
        if (keep) mine4[i] = w;
    }
    for (int64_t i = vecs * 4 + threadIdx.x; i < len; i += blockDim.x) {
        float w = use_mine ? g.buf[lo + i] : 0.0f;
        if (arrived) w += __ldcg(arrived + i);
        if (to_peer) to_peer[i] = w;
        if (keep) g.buf[lo + i] = w;
    }
}
// --8<-- [end:step]

// --8<-- [start:op]
// One op of the ring on slots [first, last) of block b's share of chunk c:
// receive (wait for the previous rank's slot), add our own data unless we only
// gather, send on (wait for a free slot in the next rank's FIFO), keep.
__device__ void ring_op(Ring& g, int c, int first, int last, bool recv, bool add,
                        bool send, bool keep) {
    int64_t lo, hi;
    share_of(g, c, &lo, &hi);
    for (int s = first; s < last; ++s) {
        int64_t a = lo + (int64_t)s * RING_SLOT, b = min(a + RING_SLOT, hi);
        if (a >= b) return;
        const float* arrived = nullptr;
        if (recv) {
            wait_for(g.ready, g.got + 1);
            arrived = g.inbox + (g.got % RING_SLOTS) * RING_SLOT;
        }
        float* out = nullptr;
        if (send) {
            wait_for(g.freed, g.sent + 1 > RING_SLOTS ? g.sent + 1 - RING_SLOTS : 0);
            out = g.next_inbox + (g.sent % RING_SLOTS) * RING_SLOT;
        }
        move_slot(g, a, b, arrived, add, out, keep);
        if (send) signal(g.next_ready, ++g.sent);
        if (recv) signal(g.prev_freed, ++g.got);
    }
}
// --8<-- [end:op]

// --8<-- [start:kernel]
// Launch on every rank at once: grid = the same number of blocks everywhere,
// block = RING_THREADS. region: [ready | freed | inbox] of this rank (zeroed once);
// next_region and prev_region: the neighbours' regions, mapped; state: 2 counters
// a block, local.
extern "C" __global__ void ring_all_reduce_v2(float* buf, int64_t size, int rank, int n,
                                              char* region, char* next_region,
                                              char* prev_region, uint64_t* state) {
    int blocks = gridDim.x, b = blockIdx.x;
    size_t inbox_at = (2 * blocks * sizeof(uint64_t) + 255) / 256 * 256;
    size_t block_slots = (size_t)RING_SLOTS * RING_SLOT;
    Ring g;
    g.buf = buf, g.size = size, g.rank = rank, g.n = n;
    g.ready = reinterpret_cast<uint64_t*>(region) + b;
    g.freed = reinterpret_cast<uint64_t*>(region) + blocks + b;
    g.inbox = reinterpret_cast<const float*>(region + inbox_at) + b * block_slots;
    g.next_ready = reinterpret_cast<uint64_t*>(next_region) + b;
    g.next_inbox = reinterpret_cast<float*>(next_region + inbox_at) + b * block_slots;
    g.prev_freed = reinterpret_cast<uint64_t*>(prev_region) + blocks + b;
    g.sent = state[2 * b], g.got = state[2 * b + 1];
    int64_t share = (size / n + 4) / gridDim.x + 4;  // upper bound of a block's share
    int pieces = (int)((share + RING_SLOT - 1) / RING_SLOT);
    for (int first = 0; first < pieces; first += RING_GROUP) {
        int last = first + RING_GROUP;
        int r = rank;
        ring_op(g, r % n, first, last, false, false, true, false);  // send ours
        for (int s = 1; s < n - 1; ++s)  // receive, add ours, send on
            ring_op(g, ((r - s) % n + n) % n, first, last, true, true, true, false);
        // the last addition completes chunk r + 1: keep it and send it round
        ring_op(g, (r + 1) % n, first, last, true, true, true, true);
        for (int t = 1; t < n - 1; ++t)  // gather: keep and send on
            ring_op(g, ((r + 1 - t) % n + n) % n, first, last, true, false, true, true);
        ring_op(g, (r + 2) % n, first, last, true, false, false, true);  // keep
    }
    if (threadIdx.x == 0) state[2 * b] = g.sent, state[2 * b + 1] = g.got;
}
// --8<-- [end:kernel]
