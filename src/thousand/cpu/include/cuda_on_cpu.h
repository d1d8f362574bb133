// cuda_on_cpu.h: enough of CUDA C++ for the package's kernels to compile with g++.
//
// Every `.cu` file of src/thousand/kernels is compiled unchanged with this header
// force-included (-include). Each CUDA thread becomes a fiber; a block's fibers take
// turns on one OS thread (an "SM"), and they switch only where CUDA makes threads wait
// for each other: __syncthreads, warp shuffles and votes, __syncwarp. The runtime
// (runtime.cpp) schedules the fibers and spreads blocks over the CPU cores.
#pragma once

#include <cassert>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <type_traits>
#include <utility>

// ---- assert: a failed one stops the launch with KernelFault, as on a GPU ------------
// A kernel's assert must not abort Python. The macro reports through the runtime, and
// glibc's own assert (a kernel that includes <assert.h> again gets it back) calls
// __assert_fail, which this library defines for itself (hidden) to do the same.
extern "C" [[noreturn]] void thousand_assert_fail(const char* expr, const char* file,
                                                  unsigned line, const char* function);
#undef assert
#ifdef NDEBUG
#define assert(e) ((void)0)
#else
#define assert(e) \
    (static_cast<bool>(e) ? void(0)   \
                          : thousand_assert_fail(#e, __FILE__, __LINE__, __func__))
#endif
extern "C" __attribute__((visibility("hidden"))) inline void __assert_fail(
    const char* expr, const char* file, unsigned line, const char* function) noexcept {
    thousand_assert_fail(expr, file, line, function);
}

// ---- what the CUDA keywords become -------------------------------------------------
// --8<-- [start:keywords]
// __shared__ memory belongs to one block; one OS thread runs one block at a time, so
// thread_local storage is exactly per block. The alignment puts bank 0 at the start of
// every array, which the bank-conflict pictures rely on.
#define __global__
#define __device__
#define __host__
#define __constant__
#define __shared__ __attribute__((aligned(128))) thread_local
#define __forceinline__ inline __attribute__((always_inline))
// No __noinline__: libstdc++ spells its own attribute __noinline__, which a macro
// of that name would break.
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
// --8<-- [end:keywords]

// ---- vector types, with CUDA's sizes and alignments --------------------------------
struct dim3 {
    unsigned int x, y, z;
    constexpr dim3(unsigned int x_ = 1, unsigned int y_ = 1, unsigned int z_ = 1)
        : x(x_), y(y_), z(z_) {}
};
struct uint3 {
    unsigned int x, y, z;
};

#define THOUSAND_VEC2(T, name, align)   \
    struct alignas(align) name {        \
        T x, y;                         \
    };                                  \
    inline name make_##name(T x, T y) { \
        return name{x, y};              \
    }
#define THOUSAND_VEC4(T, name, align)             \
    struct alignas(align) name {                  \
        T x, y, z, w;                             \
    };                                            \
    inline name make_##name(T x, T y, T z, T w) { \
        return name{x, y, z, w};                  \
    }
THOUSAND_VEC2(float, float2, 8)
THOUSAND_VEC4(float, float4, 16)
THOUSAND_VEC2(int, int2, 8)
THOUSAND_VEC4(int, int4, 16)
THOUSAND_VEC2(double, double2, 16)
THOUSAND_VEC2(unsigned int, uint2, 8)
THOUSAND_VEC4(unsigned int, uint4, 16)
#undef THOUSAND_VEC2
#undef THOUSAND_VEC4

// ---- the runtime's side: one record per CUDA thread --------------------------------
namespace thousand {
struct Thread {
    uint3 idx;   // threadIdx
    int linear;  // x + y * blockDim.x + z * blockDim.x * blockDim.y
};
struct Grid {
    uint3 block_idx;
    dim3 block_dim;
    dim3 grid_dim;
};
}  // namespace thousand

extern "C" {
// Defined in runtime.cpp. The current fiber and block, per OS thread.
extern thread_local thousand::Thread* thousand_current_thread;
extern thread_local thousand::Grid* thousand_current_grid;
void thousand_syncthreads(int line);
int thousand_syncthreads_count(int predicate, int line);
void thousand_syncwarp(unsigned mask, int line);
unsigned long long thousand_warp_exchange(unsigned mask, unsigned long long value,
                                          int src_lane, int line, const char* what);
unsigned thousand_warp_vote(unsigned mask, int predicate, int line, const char* what);
unsigned thousand_activemask(void);
}

// --8<-- [start:builtins]
#define threadIdx (::thousand_current_thread->idx)
#define blockIdx (::thousand_current_grid->block_idx)
#define blockDim (::thousand_current_grid->block_dim)
#define gridDim (::thousand_current_grid->grid_dim)
constexpr int warpSize = 32;
// --8<-- [end:builtins]

// ---- synchronisation: the only places where a fiber lets the others run ------------
#define __syncthreads() thousand_syncthreads(__LINE__)
#define __syncthreads_count(p) thousand_syncthreads_count((p) ? 1 : 0, __LINE__)
#define __syncthreads_and(p)                              \
    (thousand_syncthreads_count((p) ? 1 : 0, __LINE__) == \
     (int)(blockDim.x * blockDim.y * blockDim.z))
#define __syncthreads_or(p) (thousand_syncthreads_count((p) ? 1 : 0, __LINE__) > 0)
#define __syncwarp(...) thousand_syncwarp(thousand::mask_or_full(__VA_ARGS__), __LINE__)
#define __activemask() thousand_activemask()
#define __threadfence() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define __threadfence_block() __atomic_thread_fence(__ATOMIC_SEQ_CST)

namespace thousand {
inline unsigned mask_or_full() {
    return 0xffffffffu;
}
inline unsigned mask_or_full(unsigned m) {
    return m;
}

inline int lane() {
    return thousand_current_thread->linear % 32;
}

// A shuffle is an exchange through the warp: every lane named in `mask` posts its
// value and waits until all of them have; then each reads the lane it asked for.
template <typename T>
inline T shuffle(unsigned mask, T value, int src, int line, const char* what) {
    static_assert(sizeof(T) <= 8, "warp shuffles move at most 8 bytes");
    unsigned long long bits = 0;
    std::memcpy(&bits, &value, sizeof(T));
    bits = thousand_warp_exchange(mask, bits, src, line, what);
    T out;
    std::memcpy(&out, &bits, sizeof(T));
    return out;
}
// Source lanes within the `width`-lane segment, as the CUDA programming guide defines.
inline int segment_base(int width) {
    return lane() & ~(width - 1);
}
}  // namespace thousand

// --8<-- [start:shuffles]
// Which lane each shuffle reads, as the CUDA programming guide defines it: within
// segments of `width` lanes, and its own value where the source falls outside.
namespace thousand {
template <typename T>
inline T shfl(int line, unsigned mask, T v, int src, int width = 32) {
    int s = segment_base(width) + (src & (width - 1));
    return shuffle(mask, v, s, line, "__shfl_sync");
}
template <typename T>
inline T shfl_up(int line, unsigned mask, T v, unsigned delta, int width = 32) {
    int l = lane(), base = segment_base(width);
    int s = l - (int)delta >= base ? l - (int)delta : l;
    return shuffle(mask, v, s, line, "__shfl_up_sync");
}
template <typename T>
inline T shfl_down(int line, unsigned mask, T v, unsigned delta, int width = 32) {
    int l = lane(), base = segment_base(width);
    int s = l + (int)delta < base + width ? l + (int)delta : l;
    return shuffle(mask, v, s, line, "__shfl_down_sync");
}
template <typename T>
inline T shfl_xor(int line, unsigned mask, T v, int lane_mask, int width = 32) {
    int l = lane(), base = segment_base(width);
    int s = l ^ lane_mask;
    if (s < base || s >= base + width)
        s = l;
    return shuffle(mask, v, s, line, "__shfl_xor_sync");
}
}  // namespace thousand
// Macros, so an error names the kernel's line rather than this header's.
#define __shfl_sync(...) thousand::shfl(__LINE__, __VA_ARGS__)
#define __shfl_up_sync(...) thousand::shfl_up(__LINE__, __VA_ARGS__)
#define __shfl_down_sync(...) thousand::shfl_down(__LINE__, __VA_ARGS__)
#define __shfl_xor_sync(...) thousand::shfl_xor(__LINE__, __VA_ARGS__)
// --8<-- [end:shuffles]
#define __ballot_sync(mask, p) \
    thousand_warp_vote((mask), (p) ? 1 : 0, __LINE__, "__ballot_sync")
#define __all_sync(mask, p)                                             \
    (thousand_warp_vote((mask), (p) ? 1 : 0, __LINE__, "__all_sync") == \
     (unsigned)(mask))
#define __any_sync(mask, p) \
    (thousand_warp_vote((mask), (p) ? 1 : 0, __LINE__, "__any_sync") != 0u)

// ---- atomics: blocks run on several OS threads at once, so these are real atomics ---
namespace thousand {
template <typename T>
inline T atomic_update(T* p, T (*op)(T, T), T v) {
    T old = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(p, &old, op(old, v), true, __ATOMIC_SEQ_CST,
                                        __ATOMIC_RELAXED)) {
    }
    return old;
}
// Floating-point atomics: compare-and-swap on the bit pattern.
template <typename F, typename Bits>
inline F atomic_float_add(F* p, F v) {
    static_assert(sizeof(F) == sizeof(Bits), "bit pattern must match");
    Bits* bp = reinterpret_cast<Bits*>(p);
    Bits old_bits = __atomic_load_n(bp, __ATOMIC_RELAXED);
    for (;;) {
        F old_value, new_value;
        std::memcpy(&old_value, &old_bits, sizeof(F));
        new_value = old_value + v;
        Bits new_bits;
        std::memcpy(&new_bits, &new_value, sizeof(F));
        if (__atomic_compare_exchange_n(bp, &old_bits, new_bits, true, __ATOMIC_SEQ_CST,
                                        __ATOMIC_RELAXED)) {
            return old_value;
        }
    }
}
template <typename T>
T op_max(T a, T b) {
    return a > b ? a : b;
}
template <typename T>
T op_min(T a, T b) {
    return a < b ? a : b;
}
}  // namespace thousand

#define THOUSAND_INT_ATOMICS(T)                                                     \
    inline T atomicAdd(T* p, T v) {                                                 \
        return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);                          \
    }                                                                               \
    inline T atomicSub(T* p, T v) {                                                 \
        return __atomic_fetch_sub(p, v, __ATOMIC_SEQ_CST);                          \
    }                                                                               \
    inline T atomicExch(T* p, T v) {                                                \
        return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);                         \
    }                                                                               \
    inline T atomicAnd(T* p, T v) {                                                 \
        return __atomic_fetch_and(p, v, __ATOMIC_SEQ_CST);                          \
    }                                                                               \
    inline T atomicOr(T* p, T v) {                                                  \
        return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST);                           \
    }                                                                               \
    inline T atomicXor(T* p, T v) {                                                 \
        return __atomic_fetch_xor(p, v, __ATOMIC_SEQ_CST);                          \
    }                                                                               \
    inline T atomicMax(T* p, T v) {                                                 \
        return thousand::atomic_update<T>(p, thousand::op_max<T>, v);               \
    }                                                                               \
    inline T atomicMin(T* p, T v) {                                                 \
        return thousand::atomic_update<T>(p, thousand::op_min<T>, v);               \
    }                                                                               \
    inline T atomicCAS(T* p, T expected, T desired) {                               \
        __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_SEQ_CST, \
                                    __ATOMIC_SEQ_CST);                              \
        return expected;                                                            \
    }
THOUSAND_INT_ATOMICS(int)
THOUSAND_INT_ATOMICS(unsigned int)
THOUSAND_INT_ATOMICS(unsigned long long)
THOUSAND_INT_ATOMICS(long long)
#undef THOUSAND_INT_ATOMICS
inline float atomicAdd(float* p, float v) {
    return thousand::atomic_float_add<float, unsigned int>(p, v);
}
inline double atomicAdd(double* p, double v) {
    return thousand::atomic_float_add<double, unsigned long long>(p, v);
}
inline float atomicExch(float* p, float v) {
    unsigned int bits, old;
    std::memcpy(&bits, &v, 4);
    old =
        __atomic_exchange_n(reinterpret_cast<unsigned int*>(p), bits, __ATOMIC_SEQ_CST);
    float out;
    std::memcpy(&out, &old, 4);
    return out;
}

// ---- loads, math functions and intrinsics the kernels use --------------------------
template <typename T>
inline T __ldg(const T* p) {
    return *p;
}

using std::ceil;
using std::exp;
using std::fabs;
using std::floor;
using std::log;
using std::sqrt;
using std::tanh;
inline float __expf(float x) {
    return expf(x);
}
inline float __logf(float x) {
    return logf(x);
}
inline float __fdividef(float a, float b) {
    return a / b;
}
inline float rsqrtf(float x) {
    return 1.0f / sqrtf(x);
}
inline double rsqrt(double x) {
    return 1.0 / std::sqrt(x);
}
inline float __saturatef(float x) {
    return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x);
}
inline float __fmul_rn(float a, float b) {
    return a * b;
}
inline float __fadd_rn(float a, float b) {
    return a + b;
}
inline int __float2int_rn(float x) {
    return (int)nearbyintf(x);
}
inline int __popc(unsigned x) {
    return __builtin_popcount(x);
}
inline int __ffs(int x) {
    return __builtin_ffs(x);
}
inline int __clz(int x) {
    return x == 0 ? 32 : __builtin_clz((unsigned)x);
}
// Reinterpreting a value's bits (for compare-and-swap loops on floats).
inline unsigned __float_as_uint(float x) {
    unsigned u;
    std::memcpy(&u, &x, sizeof u);
    return u;
}
inline float __uint_as_float(unsigned u) {
    float x;
    std::memcpy(&x, &u, sizeof x);
    return x;
}
inline long long __double_as_longlong(double x) {
    long long u;
    std::memcpy(&u, &x, sizeof u);
    return u;
}
inline double __longlong_as_double(long long u) {
    double x;
    std::memcpy(&x, &u, sizeof x);
    return x;
}
// CUDA's min and max are overloaded free functions, not std:: templates.
inline int min(int a, int b) {
    return a < b ? a : b;
}
inline int max(int a, int b) {
    return a > b ? a : b;
}
inline unsigned min(unsigned a, unsigned b) {
    return a < b ? a : b;
}
inline unsigned max(unsigned a, unsigned b) {
    return a > b ? a : b;
}
inline long long min(long long a, long long b) {
    return a < b ? a : b;
}
inline long long max(long long a, long long b) {
    return a > b ? a : b;
}
inline float min(float a, float b) {
    return fminf(a, b);
}
inline float max(float a, float b) {
    return fmaxf(a, b);
}
inline double min(double a, double b) {
    return fmin(a, b);
}
inline double max(double a, double b) {
    return fmax(a, b);
}

// ---- what the build exports for each kernel: a launcher and its signature ----------
namespace thousand {
// One character per parameter type, so Python can check arguments before a launch.
template <typename T>
constexpr char type_code() {
    if constexpr (std::is_pointer_v<T>)
        return 'P';
    else if constexpr (std::is_same_v<T, int>)
        return 'i';
    else if constexpr (std::is_same_v<T, unsigned int>)
        return 'I';
    else if constexpr (std::is_same_v<T, long long> || std::is_same_v<T, long>)
        return 'q';
    else if constexpr (std::is_same_v<T, unsigned long long> ||
                       std::is_same_v<T, unsigned long>)
        return 'Q';
    else if constexpr (std::is_same_v<T, float>)
        return 'f';
    else if constexpr (std::is_same_v<T, double>)
        return 'd';
    else
        return '?';
}
template <typename... A>
const char* signature_of(void (*)(A...)) {
    static const char codes[] = {type_code<std::decay_t<A>>()..., '\0'};
    return codes;
}
// Python passes an array of pointers to the argument values, as cuLaunchKernel does.
// Reading them is the launch's work, not the kernel's: the checked build skips it.
#define THOUSAND_UNCHECKED __attribute__((no_sanitize_address))
template <typename... A, std::size_t... I>
THOUSAND_UNCHECKED void call_with(void (*f)(A...), void** args,
                                  std::index_sequence<I...>) {
    f(*static_cast<std::decay_t<A>*>(args[I])...);
}
template <typename... A>
THOUSAND_UNCHECKED void call_packed(void (*f)(A...), void** args) {
    call_with(f, args, std::index_sequence_for<A...>{});
}
template <auto F>
THOUSAND_UNCHECKED void trampoline(void** args) {
    call_packed(F, args);
}
}  // namespace thousand

extern "C" int thousand_run_grid(const void* spec, const char* name,
                                 void (*body)(void**), void** args);

#define THOUSAND_EXPORT(k)                                                   \
    extern "C" int thousand_launch_##k(const void* spec, void** args) {      \
        return thousand_run_grid(spec, #k, &thousand::trampoline<&k>, args); \
    }                                                                        \
    extern "C" const char* thousand_signature_##k() {                        \
        return thousand::signature_of(&k);                                   \
    }
