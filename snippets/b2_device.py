"""Parallelism, concurrency, cache and bandwidth of this device, read from it (B2)."""

from thousand.cuda import device_info

info = device_info()
sms = info["sm_count"]
warps_per_sm = info["max_threads_per_sm"] // info["warp_size"]
l2 = info["l2_cache_bytes"]
print(f"device: {info['name']}")
print(f"SMs, each running its own warps (parallelism): {sms}")
print(f"warps resident per SM, interleaved (concurrency): {warps_per_sm}")
print(f"warps resident on the whole device: {sms * warps_per_sm:,}")
print(f"L2 cache, shared by every SM: {l2 / 2**20:.0f} MiB")
print(f"axpy's 12n bytes fit in L2 up to n = {l2 // 12:,}")
peak = info["peak_bandwidth_gbps"]
if peak:
    print(f"memory bandwidth, 2 x clock x bus width: {peak:,.0f} GB/s")
    print(f"so axpy at n = 2^28 needs at least {12 * 2**28 / peak / 1e6:.3f} ms")
else:
    print("memory bandwidth: the CPU backend does not know it")
