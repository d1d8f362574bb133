"""B10: the same row sums, three thread mappings, over matrix shapes.

Every matrix has 2^26 float32 elements (256 MiB); only its shape changes, from
2^24 rows of 4 to 2^10 rows of 65,536. v1 and v3 read it row-major, v2
column-major (row_sum.cu says how each maps threads to elements). The values do not
change the time, so one buffer of random floats serves every shape: read as
(rows, cols) row-major by v1 and v3 and as (cols, rows), the column-major storage
of a (rows, cols) matrix, by v2. The copy kernel over the same 2^26 floats is the
line to compare with: the bandwidth a kernel that only streams memory gets.
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import empty, median, time_ms, to_device
from thousand.experiments import Experiment, Note
from thousand.kernels.copy import copy
from thousand.kernels.row_sum import FAMILY, row_sum_v1, row_sum_v2, row_sum_v3

TOTAL, QUICK_TOTAL = 2**26, 2**12
COLS = [2**k for k in range(2, 17)]
QUICK_COLS = [2**k for k in range(2, 11)]
NOTE_COLS = 256  # the family's benchmark shape has 256 columns

V1 = "v1: thread per row, row-major"
V2 = "v2: thread per row, column-major"
V3 = "v3: warp per row, row-major"
COPY = "copy kernel, the same floats"


def _gbps(nbytes: int, fn, repeat: int) -> float:
    return nbytes / median(time_ms(fn, repeat=repeat)) / 1e6


def _one_shape(host: np.ndarray, rows: int, cols: int, repeat: int) -> dict:
    d_rm = to_device(host.reshape(rows, cols))  # row-major (rows, cols)
    d_cm = to_device(host.reshape(cols, rows))  # column-major storage of (rows, cols)
    d_out = empty((rows,))
    nbytes = FAMILY.bytes_moved((rows, cols))
    return {
        V1: _gbps(nbytes, lambda: row_sum_v1(d_rm, out=d_out), repeat),
        V2: _gbps(nbytes, lambda: row_sum_v2(d_cm, out=d_out), repeat),
        V3: _gbps(nbytes, lambda: row_sum_v3(d_rm, out=d_out), repeat),
    }


def run(quick: bool) -> dict:
    total = QUICK_TOTAL if quick else TOTAL
    columns = QUICK_COLS if quick else COLS
    repeat = 3 if quick else 10
    host = np.random.default_rng(0).random(total, dtype=np.float32)
    series = {V1: [], V2: [], V3: []}
    for cols in columns:
        for name, gbps in _one_shape(host, total // cols, cols, repeat).items():
            series[name].append(gbps)
    d_x, d_y = to_device(host), empty((total,))
    copy_gbps = _gbps(2 * 4 * total, lambda: copy(d_x, out=d_y), repeat)
    series[COPY] = [copy_gbps] * len(columns)

    at = columns.index(NOTE_COLS)
    return {
        "kind": "lines",
        "x": {
            "label": "columns (rows x columns fixed)",
            "values": columns,
            "log": True,
        },
        "y": {"label": "GB/s", "log": True, "format": "{:,.0f}"},
        "series": series,
        "notes": {
            "elements": total,
            "v2_over_v1": series[V2][at] / series[V1][at],
            "v3_over_v1": series[V3][at] / series[V1][at],
            "v3_best_pct": 100 * max(series[V3]) / copy_gbps,
            "v2_best_pct": 100 * max(series[V2]) / copy_gbps,
        },
    }


EXPERIMENT = Experiment(
    name="b10-layout",
    title={
        "zh": "行求和：三种线程映射在不同矩阵形状下的带宽",
        "en": "Row sums: three thread mappings over matrix shapes, bandwidth",
    },
    run=run,
    families=("row_sum", "copy"),
    notes={
        "elements": Note(
            "每个矩阵的元素个数（行数 × 列数）",
            "Elements in every matrix (rows × columns)",
            "{:,.0f}",
        ),
        "v2_over_v1": Note(
            "256 列时 v2（列主序）比 v1（行主序）快",
            "v2 (column-major) over v1 (row-major) at 256 columns",
            "{:,.1f}×",
        ),
        "v3_over_v1": Note(
            "256 列时 v3（每行一个线程束）比 v1 快",
            "v3 (a warp per row) over v1 at 256 columns",
            "{:,.1f}×",
        ),
        "v3_best_pct": Note(
            "v3 最好的带宽占复制核函数的比例",
            "v3's best bandwidth as a share of the copy kernel's",
            "{:,.0f}%",
        ),
        "v2_best_pct": Note(
            "v2 最好的带宽占复制核函数的比例",
            "v2's best bandwidth as a share of the copy kernel's",
            "{:,.0f}%",
        ),
    },
    zh={
        "columns (rows x columns fixed)": "列数（行数 × 列数固定）",
        "GB/s": "GB/s",
        V1: "v1：每行一个线程，行主序",
        V2: "v2：每行一个线程，列主序",
        V3: "v3：每行一个线程束，行主序",
        COPY: "复制核函数，同一批数据",
    },
)
