"""Read the thread hierarchy's limits from the device itself (B1)."""

from thousand.cuda import device_info

info = device_info()
print(
    f"device:                 {info['name']} (compute capability "
    f"{info['compute_capability']})"
)
print(f"streaming multiprocessors: {info['sm_count']}")
print(f"threads per warp:       {info['warp_size']}")
print(f"max threads per block:  {info['max_threads_per_block']}")
print(f"max block dims (x,y,z): {info['max_block_dim']}")
print(f"max grid dims (x,y,z):  {info['max_grid_dim']}")
print(f"max threads per SM:     {info['max_threads_per_sm']}")
print(f"threads in flight:      {info['sm_count'] * info['max_threads_per_sm']:,}")
print(f"global memory:          {info['total_memory_bytes'] / 2**30:.1f} GiB")
print(f"L2 cache:               {info['l2_cache_bytes'] / 2**20:.0f} MiB")
print(f"shared memory / block:  {info['shared_memory_per_block'] // 1024} KiB")
