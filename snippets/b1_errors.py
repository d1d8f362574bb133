"""What goes wrong, and how it is reported instead of producing garbage (B1)."""

import numpy as np

from thousand.cuda import launch, to_device
from thousand.kernels.vector_add import vector_add

x = np.ones(1000, dtype=np.float32)

# 1. Wrong dtype: caught before anything reaches the device.
try:
    vector_add(x.astype(np.float64), x)
except ValueError as e:
    print("1.", e)

# 2. Too many threads per block: caught by the launcher...
try:
    vector_add(x, x, block=2048)
except ValueError as e:
    print("2.", e)

# 3. ...and by the driver itself if we skip our check and launch directly.
d = to_device(x)
try:
    launch("vector_add", "vector_add_v2", (1,), (2048,), d, d, d, np.int32(1000))
except RuntimeError as e:
    print("3.", e)

# 4. A failed launch leaves the context usable: the next kernel still works.
print("4. after the errors, 1 + 1 =", vector_add(x, x)[0])
