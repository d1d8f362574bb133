"""The thread hierarchy's limits, read from the device, and what follows (B3)."""

from thousand.cuda import device_info

info = device_info()
bx, by, bz = info["max_block_dim"]
gx, gy, gz = info["max_grid_dim"]
per_block = info["max_threads_per_block"]
print(f"device: {info['name']} (compute capability {info['compute_capability']})")
print(f"warp size:                      {info['warp_size']}")
print(f"max threads per block:          {per_block}")
print(f"max block dims (x, y, z):       ({bx}, {by}, {bz})")
print(f"max grid dims (x, y, z):        ({gx:,}, {gy:,}, {gz:,})")
print(f"streaming multiprocessors:      {info['sm_count']}")
print(f"max threads per SM:             {info['max_threads_per_sm']}")
print(f"shared memory per block:        {info['shared_memory_per_block'] // 1024} KiB")
print(f"32-bit registers per block:     {info['registers_per_block']:,}")

# What follows from them.
warp, per_sm = info["warp_size"], info["max_threads_per_sm"]
print(f"\nwarps in a full block:          {per_block // warp}")
print(f"full blocks resident per SM:    {per_sm // per_block}")
print(f"registers per thread, if 1024:  {info['registers_per_block'] // per_block}")
print(f"threads resident at once:       {info['sm_count'] * per_sm:,}")
print(f"largest 1-D launch:             {gx * per_block:,} threads")
need = 2**30 // 256  # blocks of 256 threads for 2^30 elements
print(f"2^30 elements, 256 per block:   {need:,} blocks")
print(f"  fit along x: {need <= gx}, along y: {need <= gy}, along z: {need <= gz}")
