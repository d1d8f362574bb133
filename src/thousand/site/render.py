"""Turn the ledger into page content at build time.

A page asks for recorded results with a directive on a line of its own:

    <!-- results:device -->                        which GPU, driver, date, commit
    <!-- results:table vector_add copy -->         every version of those families
    <!-- results:output b1_vector_add -->          what snippets/b1_vector_add.py said
    <!-- results:plot b1-cpu-vs-gpu -->            a plot drawn from a recorded series
    <!-- results:targets [family ...] -->          the benchmark targets and outcomes
    <!-- results:ladder reduce -->                 every rung of a family: a table with
                                                   the gain over the previous rung, and
                                                   a chart against the baselines
    <!-- results:experiment b5-transfers -->       an experiment's chart, table and
                                                   notes (see thousand.experiments);
                                                   `... NAME chart`: without the table

Every number comes from the ledger; a directive that names something the ledger
lacks fails the build. While a page is being written, before the GPU run that will
record its results, THOUSAND_ALLOW_UNRECORDED=1 renders such a directive as a red
"not recorded yet" box instead (never set in CI, so nothing unrecorded ships).
"""

from __future__ import annotations

import html
import json
import os
import posixpath
import re

from thousand.bench import ledger as L
from thousand.experiments import by_name
from thousand.site import charts, experiments

DIRECTIVE = re.compile(r"^<!-- results:(\w+)((?: [\w.-]+)*) -->$", re.M)

TEXT = {
    "zh": {
        "device": "本页的输出、表格和图都来自同一次记录的 GPU 运行",
        "device_runs": "本页的输出、表格和图来自同一型号 GPU 上记录的 {n} 次运行，"
        "每项注明出自哪一次",
        "run_n": "运行 {i}",
        "measured_in": "测于{runs}。",
        "sizes": "规模：{sizes}。",
        "all_passed": "每个版本都通过了正确性检查（{cases} 组）。",
        "and": "、",
        "list_sep": "；",
        "gap": "",
        "join": "、",
        "gpu": "GPU",
        "driver": "驱动",
        "software": "软件",
        "run": "运行",
        "output": "记录的输出（{device}，{date}）：",
        "sweep_run": "测于 {gpu}，{date}，提交 `{commit}`；每个形状上各版本与 PyTorch "
        "在同一进程里先后计时（CUDA 事件，清空 L2）。入口函数即用户调用的函数："
        "有的按形状挑版本和线程块，有的总跑同一个。",
        "gpus_run": "记录于 {n} 块 {gpu} 的一台机器，{date}，提交 `{commit}`"
        "（`python -m thousand.distributed.record --world {n}`）。",
        "cols": {
            "version": "版本",
            "teaches": "要点",
            "size": "规模",
            "block": "线程块",
            "time": "时间 (ms)",
            "rate": "速率",
            "pct_copy": "占复制核函数",
            "pct_peak": "占理论峰值",
            "numpy": "比 NumPy 快",
            "torch": "占 PyTorch",
            "check": "正确性检查",
            "previous": "比上一级快",
            "pycuda": "比 gpuarray.sum 快",
        },
        "cases": "{n} 组通过",
        "cases_failed": "未通过（共 {n} 组）",
        "target": "{what}：{kernel} 达到 {ratio:.1f}%"
        "（目标 ≥ {target:.0f}%）：{verdict}",
        # Targets are recorded by their English description; their Chinese names:
        "target_names": {
            "best vector add vs the copy kernel, float32, n = 2^28": (
                "最好的向量加法与复制核函数的带宽之比（float32，n = 2<sup>28</sup>）"
            ),
            (
                "best CUDA-core convolution vs cuDNN with TF32 off, "
                "3x3 64->64 56x56 N=32"
            ): (
                "CUDA 核心上最好的卷积与 cuDNN（关闭 TF32）之比"
                "（3×3，64→64，56×56，N = 32）"
            ),
            "best CUDA-core filter gradient vs cuDNN with TF32 off, same layer": (
                "CUDA 核心上最好的滤波器梯度与 cuDNN（关闭 TF32）之比（同一层）"
            ),
            "padded shared-memory transpose vs the copy kernel, 8192 x 8192": (
                "填充后的共享内存转置与复制核函数的带宽之比（8192 × 8192）"
            ),
            "best reduction vs the copy kernel, float32, n = 2^28": (
                "最好的归约与复制核函数的带宽之比（float32，n = 2<sup>28</sup>）"
            ),
            "best reduction vs PyCUDA's gpuarray.sum, float32, n = 2^28": (
                "最好的归约比 PyCUDA 的 gpuarray.sum 快多少（float32，"
                "n = 2<sup>28</sup>）"
            ),
            "best reduction vs torch.sum, float32, n = 2^28": (
                "最好的归约与 torch.sum 的速度之比（float32，n = 2<sup>28</sup>）"
            ),
            "best CUDA-core SGEMM vs cuBLAS with TF32 off, 4096^3": (
                "最好的 CUDA 核心 SGEMM 与 cuBLAS（关闭 TF32）之比（4096<sup>3</sup>）"
            ),
            "best tensor-core GEMM vs cuBLAS with TF32 on, 4096^3": (
                "最好的张量核心 GEMM 与 cuBLAS（TF32）之比（4096<sup>3</sup>）"
            ),
            "the copy kernel vs torch's copy_, float32, n = 2^28": (
                "复制核函数与 torch 的 copy_ 的速度之比（float32，n = 2<sup>28</sup>）"
            ),
            "best vector add vs torch.add, float32, n = 2^28": (
                "最好的向量加法与 torch.add 的速度之比（float32，n = 2<sup>28</sup>）"
            ),
            "tuned CUDA-core SGEMM vs cuBLAS with TF32 off, 4096^3": (
                "调优后的 CUDA 核心 SGEMM 与 cuBLAS（关闭 TF32）之比"
                "（4096<sup>3</sup>）"
            ),
            "wgmma bf16 GEMM vs cuBLAS bf16, 8192^3": (
                "wgmma bf16 GEMM 与 cuBLAS bf16 之比（8192<sup>3</sup>）"
            ),
            "wgmma TF32 GEMM vs cuBLAS with TF32 on, 8192^3": (
                "wgmma TF32 GEMM 与 cuBLAS（TF32）之比（8192<sup>3</sup>）"
            ),
            "best softmax vs the copy kernel, float32, 32,768 x 4,096": (
                "最好的 softmax 与复制核函数的带宽之比（float32，32,768 × 4,096）"
            ),
            "best softmax vs torch.softmax, float32, 32,768 x 4,096": (
                "最好的 softmax 与 torch.softmax 的速度之比（float32，32,768 × 4,096）"
            ),
            "best layer norm forward vs torch layer_norm, float32, 32,768 x 4,096": (
                "最好的层归一化前向与 torch 的 layer_norm 的速度之比（float32，"
                "32,768 × 4,096）"
            ),
            "best fused attention vs scaled_dot_product_attention, bf16, B=4, H=32, "
            "T=4,096, d=128, not causal": (
                "最好的融合注意力与 scaled_dot_product_attention 的速度之比（bf16，"
                "B=4，H=32，T=4,096，d=128，非因果）"
            ),
        },
        "ladder_alt": "{family} 每一级的速率，与库函数基线对比",
        "torch_note": "“占 PyTorch”一栏：PyTorch 做同一运算所用时间与本核函数之比，"
        "超过 100% 即比它快。",
        "own_baseline": "`{kernel}` 比的是 PyTorch 的 {library}。",
        "met": "达成",
        "missed": "未达成",
        "plot_alt": "NumPy (CPU) 与 GPU 的向量加法耗时随规模的变化",
        # The ledger records what each version teaches in English; in Chinese:
        "teaches_names": {
            "one thread per element": "每个线程处理一个元素",
            "grid-stride float4 copy": "网格跨步循环，float4 向量化复制",
            "one thread per element, bounds check, one fused multiply-add": (
                "每个线程一个元素，带边界检查，一次融合乘加"
            ),
            "grid-stride loop over float4, scalar tail": (
                "float4 网格跨步循环，标量循环收尾"
            ),
            "2-D grid of 2-D blocks, x along the rows": (
                "二维网格、二维线程块，x 方向沿着行"
            ),
            "1-D grid of 1-D blocks over the flattened array": (
                "一维网格、一维线程块，数组摊平成一行来覆盖"
            ),
            "2-D grid of 2-D blocks over (depth * height) rows": (
                "二维网格、二维线程块，把 depth × height 当作行数"
            ),
            "3-D grid of 3-D blocks (dim3)": "三维网格、三维线程块（dim3）",
            "one thread per neuron: uncoalesced rows of W": (
                "一个线程算一个神经元：读 W 的行时访存不合并"
            ),
            "one warp per neuron: coalesced, warp-shuffle sum": (
                "一个线程束算一个神经元：合并访问，线程束洗牌求和"
            ),
            "a __device__ function called from a kernel": (
                "在核函数里调用 __device__ 函数"
            ),
            "naive: coalesced reads, strided writes": "朴素版：读是合并的，写是跨步的",
            "32 x 32 shared tile: both coalesced, 32-way bank conflicts": (
                "32 × 32 共享内存分块：读写都合并，但有 32 路存储体冲突"
            ),
            "tile padded to 32 x 33: no bank conflicts": (
                "分块填充成 32 × 33：没有存储体冲突"
            ),
            "one thread per output, a constant stride between loads": (
                "每个线程一个输出，相邻读取之间隔着固定的步长"
            ),
            "taps in global memory, through a pointer": "系数放在全局内存，经指针读取",
            "taps in constant memory: one broadcast per warp": (
                "系数放在常量内存：每个线程束一次广播"
            ),
            "constant taps, inputs staged in a shared-memory window": (
                "常量内存系数，输入先搬进共享内存窗口"
            ),
            "constant taps read in a per-lane order: serialised": (
                "常量内存系数，但每个 lane 按各自的顺序读：访问被串行化"
            ),
            "padded tile, rows per thread fixed: all loads in flight at once": (
                "填充分块，每个线程的行数编译期固定：几次读取同时在途"
            ),
            "one block: a loop over the array in steps of blockDim": (
                "只有一个线程块：以 blockDim 为步长循环走完整个数组"
            ),
            "many blocks, one thread per element, bounds check": (
                "多个线程块，每个线程一个元素，带边界检查"
            ),
            "grid-stride loop: a grid sized to the GPU": (
                "网格跨步循环：网格大小按 GPU 的规模来定"
            ),
            "grid-stride loop over float4 (16-byte accesses)": (
                "float4 网格跨步循环（每次访问 16 字节）"
            ),
            "naive, x along the rows of C: uncoalesced": (
                "朴素版，x 沿 C 的行方向排：访存不合并"
            ),
            "naive, x along the columns of C: coalesced": (
                "朴素版，x 沿 C 的列方向排：合并访问"
            ),
            "32 x 32 shared-memory tiles": "32 × 32 共享内存分块",
            "1-D register blocking: 8 outputs per thread": (
                "一维寄存器分块：每个线程算 8 个输出"
            ),
            "2-D register blocking: 8 x 8 outputs per thread": (
                "二维寄存器分块：每个线程算 8 × 8 个输出"
            ),
            "float4 loads, A transposed in shared memory": (
                "float4 读取，A 在共享内存里转置存放"
            ),
            "warp tiling and register double buffering": "线程束分块，寄存器双缓冲",
            "tensor cores: mma.sync TF32, 3-stage cp.async pipeline": (
                "张量核心：mma.sync TF32，三级 cp.async 流水线"
            ),
            "interleaved addressing: divergent warps": "交错寻址：线程束分化",
            "interleaved addressing, no divergence: bank conflicts": (
                "交错寻址，没有分化：但有存储体冲突"
            ),
            "sequential addressing": "顺序寻址",
            "first add during load": "读取时先加一次",
            "last warp unrolled, with __syncwarp": (
                "展开最后一个线程束（带 __syncwarp）"
            ),
            "fully unrolled tree, many elements per thread": (
                "整棵树完全展开，每个线程处理多个元素"
            ),
            "16-byte loads, warp shuffles, one atomic per block": (
                "16 字节读取、线程束洗牌，每个线程块一次原子操作"
            ),
            "a loop kept a loop (#pragma unroll 1): one load in flight": (
                "保留循环（#pragma unroll 1）：每个线程只有一个加载在途"
            ),
            "#pragma unroll over a compile-time trip count: 16 loads in flight": (
                "#pragma unroll 加编译期已知的次数：16 个加载同时在途"
            ),
            "unrolled by hand by 4: four accumulators and a remainder loop": (
                "手工展开 4 次：四个累加器，外加余数循环"
            ),
            "template<int K>: a fully unrolled instance per K": (
                "template<int K>：每个 K 一份完全展开的实例"
            ),
            "branch decided per thread: the warp runs every path, one after another": (
                "分支按线程决定：线程束把每条路径依次走一遍"
            ),
            "branch decided per warp: the same work, no divergence": (
                "分支按线程束决定：工作量相同，没有分化"
            ),
            "one float per thread, a shared-memory footprint that sets blocks/SM": (
                "每线程一个 float，共享内存占用量决定每个 SM 放几个线程块"
            ),
            "64 floats per thread in registers: fewer warps, more loads in flight": (
                "每线程 64 个 float 放在寄存器里：线程束更少，在途的读取更多"
            ),
            "v2 under __launch_bounds__(1024): 64 registers, the rest spilled": (
                "v2 加上 __launch_bounds__(1024)：只剩 64 个寄存器，其余溢出"
            ),
            "one thread per row, row-major: neighbours a row apart, uncoalesced": (
                "每行一个线程，行主序：相邻线程隔着一整行，访存不合并"
            ),
            "one thread per row, column-major: neighbours adjacent, coalesced": (
                "每行一个线程，列主序：相邻线程读相邻地址，合并访问"
            ),
            "one warp per row, row-major: coalesced, warp-shuffle sum": (
                "每行一个线程束，行主序：合并访问，线程束洗牌求和"
            ),
            # track A's layer kernels
            "one thread per input: a weighted sum, then all or nothing": (
                "每个线程处理一个输入：先加权求和，再全有或全无"
            ),
            "one block, samples in order: a tree sum per sample, then the update": (
                "一个线程块按顺序过样本：每个样本先树形求和，再更新权重"
            ),
            "bias added per column, then ReLU, one thread per element": (
                "按列加偏置再过 ReLU，每个线程一个元素"
            ),
            "bias added per column, then sigmoid, one thread per element": (
                "按列加偏置再过 sigmoid，每个线程一个元素"
            ),
            "bias added per column, then tanh, one thread per element": (
                "按列加偏置再过 tanh，每个线程一个元素"
            ),
            "bias added per column, one thread per element": (
                "按列加偏置，每个线程一个元素"
            ),
            "gradient through ReLU from its output, one thread per element": (
                "由输出算 ReLU 的梯度，每个线程一个元素"
            ),
            "gradient through sigmoid from its output, one thread per element": (
                "由输出算 sigmoid 的梯度，每个线程一个元素"
            ),
            "gradient through tanh from its output, one thread per element": (
                "由输出算 tanh 的梯度，每个线程一个元素"
            ),
            "one thread per column, walking down it: coalesced rows": (
                "每个线程负责一列，自上而下累加：按行读取是合并访问"
            ),
            "one thread per parameter": "每个线程更新一个参数",
            "one thread per row: max, sum of exponentials, then loss and gradient": (
                "每个线程处理一行：先求最大值，再求指数和，最后写出损失和梯度"
            ),
            "direct: one thread per output, a loop over the window": (
                "直接卷积：每个线程算一个输出，循环走完整个窗口"
            ),
            "im2col: patches as rows of a matrix, then the GEMM": (
                "im2col：把每个图块展开成矩阵的一行，再做一次 GEMM"
            ),
            "direct: one thread per input pixel, gathering from its outputs": (
                "直接法：每个线程负责一个输入像素，从它参与的输出收集梯度"
            ),
            "GEMM to patch gradients, then col2im gathers them": (
                "先用 GEMM 算出图块的梯度，再由 col2im 收集回输入"
            ),
            "direct: one thread per weight, a loop over every output pixel": (
                "直接法：每个线程负责一个权重，循环遍历所有输出像素"
            ),
            "transposed patches, then the GEMM sums over the pixels": (
                "先写出转置的展开矩阵，再由 GEMM 对所有像素求和"
            ),
            "one thread per output: the mean of a 2 x 2 window": (
                "每个线程算一个输出：2 × 2 窗口的平均值"
            ),
            "one thread per input: a quarter of its window's gradient": (
                "每个线程算一个输入：分到所在窗口梯度的四分之一"
            ),
            "one thread per weight: a sum of products over the patterns": (
                "每个线程算一个权重：对所有模式的乘积求和"
            ),
            "one block per state: neurons in turn, a tree sum for each field": (
                "每个线程块负责一个状态：神经元逐个更新，每个局部场用树形求和"
            ),
            "one thread per unit: on when its uniform falls below its probability": (
                "每个线程负责一个单元：均匀随机数小于其概率时取 1"
            ),
            # B12: softmax, layer norm, attention
            "three passes, one block per row: max, sum of exp, normalise": (
                "每行一个线程块，三遍：最大值、指数和、归一化"
            ),
            "online softmax: max and sum in one pass, rescaled as the max grows": (
                "在线 softmax：一遍同时求最大值和指数和，最大值变大时重新缩放"
            ),
            "one warp per row: shuffles only, no shared memory, no barrier": (
                "每行一个线程束：只用洗牌，不用共享内存，没有屏障"
            ),
            "the row in registers: one read, one write, a copy's traffic": (
                "整行放进寄存器：读一遍、写一遍，访存量和复制一样"
            ),
            "one block per row, two passes: the mean, then squared deviations": (
                "每行一个线程块，两遍：先求均值，再求偏差的平方和"
            ),
            "one pass with the sum of squares: E[x^2] - E[x]^2 cancels": (
                "一遍求和与平方和：E[x²] − E[x]² 会相互抵消"
            ),
            "one pass, Welford + Chan; float4 loads, the row kept in registers": (
                "一遍，Welford 加 Chan 的合并；float4 读取，整行留在寄存器里"
            ),
            "two exact passes over the row held in registers: no per-element divide": (
                "在寄存器里的整行上精确地走两遍：每个元素不再做除法"
            ),
            "dx per row; dgamma, dbeta as per-block partials, then column sums": (
                "dx 按行算；dgamma、dbeta 先按线程块求部分和，再按列求和"
            ),
            "unfused: the T x T scores of every head in DRAM, six passes over them": (
                "未融合：每个头 T × T 的分数矩阵放在显存里，来回六遍"
            ),
            "fused FlashAttention: q on chip, k and v streamed, online softmax": (
                "融合的 FlashAttention：q 留在片上，k、v 流式读入，在线 softmax"
            ),
            "fused backward: P recomputed per tile; key and query blocks, no atomics": (
                "融合的反向：逐块重算 P；键块与查询块分工，不用原子操作"
            ),
            "FlashAttention-2 on tensor cores: mma.sync, ldmatrix, "
            "P kept in registers": (
                "张量核心上的 FlashAttention-2：mma.sync、ldmatrix，P 留在寄存器里"
            ),
            "32 queries a warp: each fragment read from shared memory feeds two mma": (
                "每个线程束 32 个查询：从共享内存读出的每个 fragment 喂两次 mma"
            ),
        },
    },
    "en": {
        "device": "Every output, table and plot on this page comes from one GPU run",
        "device_runs": "The outputs, tables and plots on this page come from {n} "
        "recorded runs on this GPU model; each names its run",
        "run_n": "Run {i}",
        "measured_in": "Measured in {runs}.",
        "sizes": "Sizes: {sizes}.",
        "all_passed": "Every version passed its checks ({cases} cases).",
        "and": " and ",
        "list_sep": "; ",
        "gap": " ",
        "join": ", ",
        "gpu": "GPU",
        "driver": "Driver",
        "software": "Software",
        "run": "Run",
        "output": "Recorded output ({device}, {date}):",
        "sweep_run": "Measured on {gpu}, {date}, commit `{commit}`; at each shape the "
        "versions and PyTorch were timed back to back in one process (CUDA events, L2 "
        "flushed). The front door is the function users call: some pick the version "
        "and block by the shape, others always run the same one.",
        "gpus_run": "Recorded on one machine of {n} × {gpu}, {date}, commit "
        "`{commit}` (`python -m thousand.distributed.record --world {n}`).",
        "cols": {
            "version": "version",
            "teaches": "what it teaches",
            "size": "size",
            "block": "block",
            "time": "time (ms)",
            "rate": "rate",
            "pct_copy": "% of copy",
            "pct_peak": "% of theoretical",
            "numpy": "× NumPy",
            "torch": "% of PyTorch",
            "check": "checked",
            "previous": "× previous rung",
            "pycuda": "× gpuarray.sum",
        },
        "cases": "{n} cases pass",
        "cases_failed": "FAILED ({n} cases)",
        "target": "{what}: {kernel} reaches {ratio:.1f}% (target ≥ {target:.0f}%): "
        "{verdict}",
        "ladder_alt": "The rate of every rung of {family} against the baselines",
        "torch_note": '"% of PyTorch": PyTorch\'s time for the same operation over '
        "this kernel's; above 100% the kernel is faster.",
        "own_baseline": "`{kernel}` is compared with PyTorch's {library}.",
        "met": "met",
        "missed": "not met",
        "plot_alt": "Vector add time over size: NumPy on the CPU against the GPU",
    },
}


def _large_power_of_two(n: int) -> int | None:
    """k when n = 2^k of at least 2^16 (sizes a reader compares at a glance)."""
    return n.bit_length() - 1 if n >= 2**16 and n & (n - 1) == 0 else None


def _power_of_two(n: int) -> str:
    """268435456 -> 2<sup>28</sup> in a table."""
    k = _large_power_of_two(n)
    return str(n) if k is None else f"2<sup>{k}</sup>"


def _power_of_two_chart(n: int) -> str:
    """The same for a chart, whose text is plain: 2²⁸ (charts.power)."""
    k = _large_power_of_two(n)
    return str(n) if k is None else charts.power(2, k)


def _block_text(b) -> str:
    """A block shape as the ledger keeps it ("256", "(256,)", "(32, 8)") the way a
    reader writes it: 256, 256, 32 × 8."""
    import ast

    try:
        shape = ast.literal_eval(str(b))
    except (ValueError, SyntaxError):
        return str(b)
    if isinstance(shape, tuple):
        return " × ".join(map(str, shape))
    return str(shape)


DASH = "–"  # a figure the ledger does not have: shown as missing, never made up


def _pct(x: float) -> str:
    """Whole percent, except below 1% where 0% would hide the figure."""
    return f"{x:.0f}%" if x >= 1 else f"{x:.1g}%"


def rate(k: dict) -> str:
    """GB/s, GFLOP/s or both, whichever the entry records."""
    parts = []
    if k.get("gbps") is not None:
        parts.append(f"{k['gbps']:,.0f} GB/s")
    if k.get("gflops") is not None:
        parts.append(f"{k['gflops']:,.0f} GFLOP/s")
    return ", ".join(parts) or DASH


def _escape(text: str) -> str:
    """Plain text inside a Markdown table cell: `__device__` stays literal."""
    text = html.escape(text, quote=False)
    return re.sub(r"([\\`*_|\[\]])", r"\\\1", text)


def _check(k: dict, t: dict) -> str:
    check = k.get("check")
    if not check or check.get("cases") is None:
        return DASH
    key = "cases" if check.get("passed") else "cases_failed"
    return t[key].format(n=check["cases"])


def _pct_of_peak(k: dict, device: dict) -> str:
    peak = device.get("peak_bandwidth_gbps")
    if k.get("gbps") is None or not peak:
        return DASH
    return f"{100 * k['gbps'] / peak:.1f}%"


def _get(k: dict, key: str, fmt) -> str:
    return DASH if k.get(key) is None else fmt(k[key])


# One function per column: (ledger entry, device, language texts) -> cell.
CELLS = {
    "version": lambda k, d, t: f"`{k['family']}_v{k['version']}`",
    "teaches": lambda k, d, t: _get(
        k, "teaches", lambda s: _escape(t.get("teaches_names", {}).get(s, s))
    ),
    "version_teaches": lambda k, d, t: (
        CELLS["version"](k, d, t)
        + ("" if k.get("teaches") is None else "<br>" + CELLS["teaches"](k, d, t))
    ),
    "size": lambda k, d, t: _get(
        k, "size", lambda s: " × ".join(map(_power_of_two, s))
    ),
    "block": lambda k, d, t: _get(k, "block", lambda b: _escape(_block_text(b))),
    "size_block": lambda k, d, t: (
        CELLS["size"](k, d, t) + "<br>" + CELLS["block"](k, d, t)
    ),
    "time": lambda k, d, t: _get(k, "median_ms", lambda x: f"{x:.3f}"),
    "rate": lambda k, d, t: rate(k),
    "pct_copy": lambda k, d, t: _get(k, "pct_of_copy", lambda x: f"{x:.1f}%"),
    "pct_peak": lambda k, d, t: _pct_of_peak(k, d),
    "numpy": lambda k, d, t: _get(k, "speedup_vs_numpy", lambda x: f"{x:,.1f}×"),
    "torch": lambda k, d, t: _get(k, "pct_of_torch", _pct),
    "check": lambda k, d, t: _check(k, t),
    "pycuda": lambda k, d, t: _get(k, "speedup_vs_pycuda", lambda x: f"{x:,.2f}×"),
    # Filled in by a ladder, which knows the rung before: see Results._ladder.
    "previous": lambda k, d, t: _get(k, "vs_previous", lambda x: f"{x:,.2f}×"),
}
# Figures, right-aligned so that digits line up down a column.
NUMERIC = {
    "time",
    "rate",
    "pct_copy",
    "pct_peak",
    "numpy",
    "torch",
    "pycuda",
    "previous",
}
# What a post's results:table shows; the benchmarks page shows every column.
POST_COLUMNS = [
    "version",
    "size",
    "time",
    "rate",
    "pct_copy",
    "numpy",
    "torch",
    "check",
]


def kernel_table(
    rows: list[dict], columns: list[str], t: dict, device: dict | None = None
) -> str:
    """A Markdown table, one row per ledger entry, the columns named from CELLS.
    Where every row's rate has one unit, the unit heads the rate column and the
    cells hold the figures alone: a narrower column, a table that fits."""
    device = device or {}
    heads = {c: t["cols"][c] for c in columns}
    cells_of = dict(CELLS)
    unit = _one_unit(rows)
    if unit is not None and "rate" in columns:
        key, heads["rate"] = unit
        cells_of["rate"] = lambda k, d, t: _get(k, key, lambda x: f"{x:,.0f}")
    out = [
        "| " + " | ".join(heads[c] for c in columns) + " |",
        "|" + "".join("---:|" if c in NUMERIC else "---|" for c in columns),
    ]
    for k in rows:
        cells = [cells_of[c](k, device, t) for c in columns]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def _one_unit(rows: list[dict]) -> tuple[str, str] | None:
    """("gbps", "GB/s") or ("gflops", "GFLOP/s") when every row records that rate
    and no other; else None (each cell then names its unit)."""
    for key, unit, other in (("gbps", "GB/s", "gflops"), ("gflops", "GFLOP/s", "gbps")):
        if rows and all(k.get(key) is not None and k.get(other) is None for k in rows):
            return key, unit
    return None


def run_label(ledger: dict, index: int, t: dict) -> str:
    """'Run 2 · 2026-11-24 10:00 UTC' when the ledger has several runs, else the
    date alone."""
    date = ledger["runs"][index]["date"]
    if len(ledger["runs"]) == 1:
        return date
    return f"{t['run_n'].format(i=index + 1)} · {date}"


def measured_in(ledger: dict, entries: list[dict], t: dict) -> str:
    """A line naming the runs `entries` come from; none with a single run."""
    if len(ledger["runs"]) == 1:
        return ""
    used = sorted({e["run"] for e in entries})
    runs = t["join"].join(run_label(ledger, i, t) for i in used)
    return "\n" + t["measured_in"].format(runs=runs) + "\n"


def target_lines(targets: list[dict], t: dict) -> str:
    """The benchmark targets as a list: met or not, by how much."""
    lines = []
    for x in targets:
        verdict = t["met"] if x["met"] else t["missed"]
        mark = "✅" if x["met"] else "❌"
        lines.append(
            f"- {mark} "
            + t["target"].format(
                what=t.get("target_names", {}).get(x["what"], x["what"]),
                kernel=f"`{x['kernel']}`",
                ratio=100 * x["ratio"],
                target=100 * x["target"],
                verdict=verdict,
            )
        )
    return "\n".join(lines) + "\n"


# What PyTorch runs for a baseline, as a chart legend says it.
LIBRARY_NAMES = {
    "matmul": "cuBLAS, TF32 off",
    "matmul_tf32": "cuBLAS, TF32 on",
    "sgemm": "cuBLAS, TF32 off",
    "matmul_wgmma": "cuBLAS, bf16",
    "matmul_wgmma_tf32": "cuBLAS, TF32 on",
    "reduce": "torch.sum",
    "conv": "cuDNN, TF32 off",
    "conv_tf32": "cuDNN, TF32 on",
    "conv_backward_data": "cuDNN, TF32 off",
    "conv_backward_filter": "cuDNN, TF32 off",
}
TF32_WORDS = {"zh": {"TF32 off": "关闭 TF32", "TF32 on": "开启 TF32"}}


def library_parts(key: str) -> tuple[str, str]:
    """("cuBLAS", "TF32 off") for LIBRARY_NAMES' "cuBLAS, TF32 off"; (name, "")
    for a name without a setting (torch.sum, or a family's own)."""
    library, _, what = LIBRARY_NAMES.get(key, key).partition(", ")
    return library, what


def library_name(key: str, lang: str) -> str:
    """LIBRARY_NAMES[key] in `lang`: "cuBLAS, TF32 off" reads "cuBLAS，关闭 TF32"."""
    library, what = library_parts(key)
    if not what:
        return library
    if lang != "zh":
        return f"{library}, {what}"
    return f"{library}，{TF32_WORDS['zh'].get(what, what)}"


# The words on the ladder and series charts, in each language.
CHART_TEXT = {
    "zh": {
        "copy": "复制核函数（实测峰值）",
        "at_size": "{unit}，规模 {size}",
        "numpy": "CPU 上的 NumPy",
        "with_copies": "GPU，含主机↔设备复制",
        "kernel": "只算核函数（数据已在 GPU 上）",
        "elements": "元素个数 (float32)：out = x + y",
        "time": "时间 (ms，中位数)",
        "sep": "：",
    },
    "en": {
        "copy": "copy kernel (measured peak)",
        "at_size": "{unit} at size {size}",
        "numpy": "NumPy on the CPU",
        "with_copies": "GPU incl. host↔device copies",
        "kernel": "GPU kernel only (data already on the GPU)",
        "elements": "elements (float32): out = x + y",
        "time": "time (ms, median)",
        "sep": ": ",
    },
}


def _size(nbytes: int) -> str:
    return f"{nbytes // 2**30} GiB" if nbytes >= 2**30 else f"{nbytes // 2**20} MiB"


MODEL_TEXT = {
    "zh": {
        "cpu_affinity": "CPU 亲和性",
        "who": "拟合对象",
        "nccl": "NCCL",
        "v2": "环 v2",
        "on": "{n} 块 GPU 上的 {who}",
        "size": "消息大小",
        "predicted": "2 块 GPU 的拟合对 4 块的预测",
        "measured": "4 块 GPU 实测 (NCCL)",
        "gpus": "GPU 数（模型，未实测）",
        "n_gpus": "{n} 块",
        "model_note": "第三张表是模型，不是测量：每节点 {g} 块 GPU，"
        "节点内沿用 4 块 GPU 上 NCCL 的拟合，"
        "节点之间按每块 GPU 一个 400 Gb/s InfiniBand NDR 端口算"
        "（{b:.0f} GB/s、每步 {a:.0f} µs，均为假设），分层：节点内 reduce-scatter，"
        "节点间环，节点内 all-gather。括号里是按 nccl-tests 定义算出的总线带宽。",
    },
    "en": {
        "cpu_affinity": "CPU affinity",
        "who": "fitted to",
        "nccl": "NCCL",
        "v2": "ring v2",
        "on": "{who} on {n} GPUs",
        "size": "message",
        "predicted": "2-GPU fit's prediction for 4",
        "measured": "measured on 4 GPUs (NCCL)",
        "gpus": "GPUs (model, not measured)",
        "n_gpus": "{n}",
        "model_note": "The third table is a model, not a measurement: nodes of {g} "
        "GPUs, inside a node the fit of NCCL on 4 GPUs, between nodes one 400 Gb/s "
        "InfiniBand NDR port a GPU ({b:.0f} GB/s and {a:.0f} µs a step, both assumed), "
        "hierarchical: reduce-scatter in the node, a ring across nodes, all-gather in "
        "the node. In brackets, the bus bandwidth as nccl-tests defines it.",
    },
}


def ladder_plot(family: str) -> str:
    return f"ladder-{family}"


class DirectiveError(ValueError):
    pass


class Results:
    """One ledger, rendered in one language."""

    def __init__(self, slug: str, lang: str):
        self.slug = slug
        self.ledger = L.load(slug)
        self.t = TEXT[lang]
        self.lang = lang

    # -- directives -------------------------------------------------------------

    def render_page(self, markdown: str, page_uri: str) -> str:
        found = [(m.group(1), m.group(2).split()) for m in DIRECTIVE.finditer(markdown)]
        self._page_recorded = [
            self._recorded(kind, args) for kind, args in found if kind != "device"
        ]

        def replace(m: re.Match) -> str:
            kind, args = m.group(1), m.group(2).split()
            method = getattr(self, f"_{kind}", None)
            if method is None:
                raise DirectiveError(f"{page_uri}: unknown directive results:{kind}")
            try:
                return method(args, page_uri)
            except DirectiveError as e:
                if os.environ.get("THOUSAND_ALLOW_UNRECORDED") != "1":
                    raise DirectiveError(f"{e}\n{L.WAITING}") from e
                # Writing a page before its GPU run: show the gap, loudly.
                return f'!!! danger "NOT RECORDED YET"\n\n    {e}\n'

        return DIRECTIVE.sub(replace, markdown)

    def _recorded(self, kind: str, args: list[str]) -> bool | None:
        """Whether the ledger has what a directive names (None: not a directive
        that names one thing, or one this cannot tell)."""
        if not args:
            return None
        if kind == "output":
            return f"{args[0]}.py" in self.ledger["snippets"]
        if kind in ("table", "ladder", "targets"):
            families = {k["family"] for k in self.ledger["kernels"].values()}
            return bool(families & set(args))
        if kind == "experiment":
            return args[0] in self.ledger.get("experiments", {})
        if kind == "plot":
            return args[0] in self.ledger.get("series", {})
        return None

    def _device(self, args, page_uri):
        shown = [r for r in getattr(self, "_page_recorded", []) if r is not None]
        if shown and not any(shown):
            # Everything else on the page waits for its first GPU run: the runs
            # below measured none of it, so the box would claim what is not so.
            raise DirectiveError(
                f"{page_uri}: nothing this page shows is recorded yet, so no run "
                "is its run"
            )
        d, runs, t = self.ledger["device"], self.ledger["runs"], self.t
        sm = f"sm_{d['compute_capability'].replace('.', '')}"

        def software(run: dict) -> list[str]:
            return [
                f"**{t['driver']}**: {run.get('driver_release') or '?'} "
                f"(CUDA {run['cuda_driver_api']}), nvcc {run['nvcc']}",
                f"**{t['software']}**: Python {run['python']}, PyCUDA "
                f"{run['pycuda']}, NumPy {run['numpy']}"
                + (f", PyTorch {run['torch']}" if run.get("torch") else ""),
            ]

        def when(run: dict) -> str:
            return f"{run['date']}, commit `{run['commit'][:10]}`, `{run['command']}`"

        lines = [
            f"- **{t['gpu']}**: {d['name']} ({sm}, {d['sm_count']} SMs, "
            f"{d['total_memory_bytes'] / 2**30:.0f} GiB)",
        ]
        shared = all(software(r) == software(runs[0]) for r in runs)
        if shared:  # the usual case: one machine image, said once
            lines += [f"- {line}" for line in software(runs[0])]
        for i, run in enumerate(runs):
            name = t["run"] if len(runs) == 1 else t["run_n"].format(i=i + 1)
            lines.append(f"- **{name}**: {when(run)}")
            if not shared:
                lines += [f"    - {line}" for line in software(run)]
        body = "\n".join("    " + line for line in lines)
        title = t["device"] if len(runs) == 1 else t["device_runs"].format(n=len(runs))
        return f'!!! info "{title}"\n\n{body}\n'

    def run_label(self, index: int) -> str:
        return run_label(self.ledger, index, self.t)

    def measured_in(self, entries: list[dict]) -> str:
        return measured_in(self.ledger, entries, self.t)

    def _output(self, args, page_uri):
        (stem,) = args
        entry = self.ledger["snippets"].get(f"{stem}.py")
        if entry is None:
            raise DirectiveError(f"{page_uri}: snippets/{stem}.py has not run")
        text = (L.ROOT / entry["output"]).read_text().rstrip("\n")
        caption = self.t["output"].format(
            device=self.ledger["device"]["name"], date=self.run_label(entry["run"])
        )
        return f"{caption}\n\n```text\n{text}\n```\n"

    def _table(self, families, page_uri):
        rows = [k for k in self.ledger["kernels"].values() if k["family"] in families]
        missing = set(families) - {k["family"] for k in rows}
        if missing:
            raise DirectiveError(f"{page_uri}: nothing recorded for {sorted(missing)}")
        rows.sort(key=lambda k: (families.index(k["family"]), k["version"]))
        columns, below = self._post_columns(rows, families)
        return (
            kernel_table(rows, columns, self.t)
            + below
            + self._own_baselines(rows)
            + self.measured_in(rows)
        )

    def _post_columns(self, rows: list[dict], families: list[str]):
        """A post's columns, and a line under the table for what every row of a
        family shares: its size, and that every check passed. A table of eight
        columns overflowed the 720 px text column and hid the last ones; a size
        repeated on every row of a family says nothing a line cannot."""
        columns, said = list(POST_COLUMNS), []
        sizes = {
            f: {tuple(k.get("size") or ()) for k in rows if k["family"] == f}
            for f in families
        }
        if all(len(s) == 1 and () not in s for s in sizes.values()):
            columns.remove("size")
            said.append(
                self.t["sizes"].format(
                    sizes=self.t["list_sep"].join(
                        f"`{f}` " + " × ".join(map(_power_of_two, next(iter(s))))
                        for f, s in sizes.items()
                    )
                )
            )
        passed = self._all_passed(rows)
        if passed:
            columns.remove("check")
            said.append(passed)
        return columns, ("\n" + self.t["gap"].join(said) + "\n" if said else "")

    def _all_passed(self, rows: list[dict]) -> str | None:
        """The line that stands for the checks column when every row passed (a
        column of "36 cases pass" on every row), else None: then the column stays."""
        checks = [k.get("check") or {} for k in rows]
        if not all(c.get("passed") and c.get("cases") for c in checks):
            return None
        cases = self.t["and"].join(map(str, sorted({c["cases"] for c in checks})))
        return self.t["all_passed"].format(cases=cases)

    def _own_baselines(self, rows: list[dict]) -> str:
        """A line per version measured against its own library call (cuBLAS TF32)."""
        notes = [
            self.t["own_baseline"].format(
                kernel=f"{k['family']}_v{k['version']}",
                library=library_name(k["torch_baseline"], self.lang),
            )
            for k in rows
            if k.get("torch_baseline")
        ]
        return "\n" + " ".join(notes) + "\n" if notes else ""

    def _targets(self, families, page_uri):
        chosen = [
            x
            for x in self.ledger["targets"]
            if not families or x["kernel"].rsplit("_v", 1)[0] in families
        ]
        if not chosen:
            raise DirectiveError(f"{page_uri}: no recorded targets for {families}")
        return target_lines(chosen, self.t)

    def _ladder(self, args, page_uri):
        (family,) = args
        rows = self._rungs(family)
        if not rows:
            raise DirectiveError(f"{page_uri}: nothing recorded for {family!r}")
        rows = [
            {**k, "vs_previous": prev["median_ms"] / k["median_ms"]} if prev else k
            for prev, k in zip([None, *rows[:-1]], rows, strict=True)
        ]
        columns = ["version", "teaches", "time", "rate", "previous"]
        if any("pct_of_copy" in k for k in rows):
            columns.append("pct_copy")
        columns += ["numpy", "torch"]
        if any(k.get("speedup_vs_pycuda") for k in rows):
            columns.append("pycuda")
        passed = self._all_passed(rows)
        if not passed:
            columns.append("check")
        table = kernel_table(rows, columns, self.t)
        target = f"assets/plots/{ladder_plot(family)}.svg"
        rel = posixpath.relpath(target, posixpath.dirname(page_uri) or ".")
        alt = self.t["ladder_alt"].format(family=family)
        note = (passed + self.t["gap"] if passed else "") + self.t["torch_note"]
        note += self._own_baselines(rows).rstrip("\n")
        note += self.measured_in(rows).rstrip("\n")
        return f"{table}\n{note}\n\n![{alt}]({rel})\n"

    def _plot(self, args, page_uri):
        (name,) = args
        if name not in self.ledger["series"]:
            raise DirectiveError(f"{page_uri}: no recorded series {name!r}")
        target = f"assets/plots/{name}.svg"  # drawn by the hook's on_files
        rel = posixpath.relpath(target, posixpath.dirname(page_uri) or ".")
        return f"![{self.t['plot_alt']}]({rel})\n"

    def _experiment(self, args, page_uri):
        """`name`, or `name chart`: the chart and the notes without the table,
        where the page already prints the same figures (a training log)."""
        name, *flags = args
        if flags not in ([], ["chart"]):
            raise DirectiveError(
                f"{page_uri}: results:experiment takes a name and optionally "
                f"'chart', got {' '.join(args)!r}"
            )
        entry = self.ledger.get("experiments", {}).get(name)
        if entry is None:
            raise DirectiveError(f"{page_uri}: no recorded experiment {name!r}")
        e = by_name(name)
        return self._drawn(e, entry["result"], flags, page_uri) + self.measured_in(
            [entry]
        )

    def _sweep(self, args, page_uri):
        """`<!-- results:sweep FAMILY [chart] -->`: the family and PyTorch timed
        over the sweep's shapes (thousand.bench.sweep), one bar a shape, with the
        GPU and the run named."""
        from thousand.bench import sweep

        name, *flags = args
        if flags not in ([], ["chart"]):
            raise DirectiveError(
                f"{page_uri}: results:sweep takes a family and optionally 'chart', "
                f"got {' '.join(args)!r}"
            )
        entry = sweep.records().get(name)
        if entry is None:
            raise DirectiveError(f"{page_uri}: no recorded sweep of {name!r}")
        e, result = sweep.experiment(name), sweep.as_result(name, entry)
        run = entry["run"]
        where = self.t["sweep_run"].format(
            gpu=entry["device"]["name"], date=run["date"], commit=run["commit"][:7]
        )
        return self._drawn(e, result, flags, page_uri) + f"\n{where}\n"

    def _gpus(self, args, page_uri):
        """`<!-- results:gpus NAME [chart] -->`: a result recorded on a machine of
        several GPUs (thousand.distributed.record), with the machine named: its
        GPUs, how they are linked, the run's date and commit."""
        from thousand.distributed.record import records

        name, *flags = args
        if flags not in ([], ["chart"]):
            raise DirectiveError(
                f"{page_uri}: results:gpus takes a name and optionally 'chart', "
                f"got {' '.join(args)!r}"
            )
        found = records().get(name)
        if found is None:
            raise DirectiveError(f"{page_uri}: no several-GPU record of {name!r}")
        e, result, doc = found["experiment"], found["result"], found["record"]
        d, run = doc["device"], doc["run"]
        where = self.t["gpus_run"].format(
            n=d["count"], gpu=d["name"], date=run["date"], commit=run["commit"]
        )
        return self._drawn(e, result, flags, page_uri) + f"\n{where}\n"

    def _drawn(self, e, result: dict, flags: list, page_uri: str) -> str:
        """An experiment-shaped result as a page shows it: the chart (drawn by the
        hook under e's plot name), the table unless `chart` was asked, the notes."""
        target = f"assets/plots/{experiments.plot_name(e.name)}.svg"
        rel = posixpath.relpath(target, posixpath.dirname(page_uri) or ".")
        table = "" if flags else experiments.table(e, result, self.lang) + "\n"
        return (
            f"![{e.title[self.lang]}]({rel})\n\n"
            + table
            + experiments.notes(e, result, self.lang)
        )

    def _gpus_topology(self, args, page_uri):
        """`<!-- results:gpus_topology N -->`: how the GPUs of the N-GPU record are
        linked, as `nvidia-smi topo -m` printed it there, as a table."""
        from thousand.distributed.record import RECORDS_DIR

        if len(args) != 1 or not args[0].isdigit():
            raise DirectiveError(
                f"{page_uri}: results:gpus_topology takes N, got {args}"
            )
        for path in sorted(RECORDS_DIR.glob(f"*-x{args[0]}.json")):
            text = json.loads(path.read_text(encoding="utf-8"))["device"]["topology"]
            break
        else:
            raise DirectiveError(f"{page_uri}: no record of {args[0]} GPUs")
        lines = [re.sub(r"\x1b\[[0-9;]*m", "", ln) for ln in text.splitlines()]
        head = [h.strip() for h in lines[0].split("\t")]
        n = sum(h.startswith("GPU") and h[3:].isdigit() for h in head)
        t = MODEL_TEXT[self.lang]
        out = ["| | " + " | ".join([*head[:n], t["cpu_affinity"]]) + " |"]
        out.append("|---" * (n + 2) + "|")
        for ln in lines[1:]:
            cells = [c.strip() for c in ln.split("\t")]
            if not (cells[0].startswith("GPU") and len(cells) > n + 1):
                break
            out.append("| " + " | ".join(cells[: n + 2]) + " |")
        return "\n".join(out) + "\n"

    def _gpus_model(self, args, page_uri):
        """`<!-- results:gpus_model -->`: the alpha-beta model fitted to each record's
        NCCL and ring v2 times, the 2-GPU fit set against the 4-GPU measurement, and
        predictions for machines not measured (labelled as a model)."""
        from thousand.distributed import cost_model as C
        from thousand.distributed.record import RECORDS_DIR

        if args:
            raise DirectiveError(f"{page_uri}: results:gpus_model takes no arguments")
        docs = {}
        for path in sorted(RECORDS_DIR.glob("*.json")):
            doc = json.loads(path.read_text(encoding="utf-8"))
            docs[doc["device"]["count"]] = doc
        if not {2, 4} <= set(docs):
            raise DirectiveError(f"{page_uri}: needs the records of 2 and 4 GPUs")
        t = MODEL_TEXT[self.lang]
        rows = {n: d["raw"]["all_reduce"]["rows"] for n, d in docs.items()}
        fits = {(n, w): C.fit(rows[n], n, w) for n in (2, 4) for w in ("library", "v2")}
        out = [f"| {t['who']} | α (µs) | B (GB/s) |", "|---|---:|---:|"]
        for (n, w), link in fits.items():
            name = t["nccl"] if w == "library" else t["v2"]
            out.append(
                f"| {t['on'].format(n=n, who=name)} | {link.alpha_s * 1e6:.1f} "
                f"| {link.bandwidth / 1e9:.0f} |"
            )
        out += ["", f"| {t['size']} | {t['predicted']} | {t['measured']} |"]
        out += ["|---:|---:|---:|"]
        four = {r["bytes"]: r["library_s"] for r in rows[4]}
        for nbytes in (2**20, 64 * 2**20, 1024 * 2**20):
            guess = C.ring_time(fits[(2, "library")], 4, nbytes)
            measured = four[nbytes] * 1e3
            out.append(
                f"| {_size(nbytes)} | {guess * 1e3:.3f} ms | {measured:.3f} ms |"
            )
        out += ["", f"| {t['gpus']} | 64 MiB | 1 GiB |", "|---|---:|---:|"]
        inside = fits[(4, "library")]
        for gpus in (8, 64, 1024):
            cells = []
            for nbytes in (64 * 2**20, 2**30):
                secs = C.hierarchical_time(inside, gpus, nbytes)
                bw = C.busbw(gpus, nbytes, secs)
                cells.append(f"{secs * 1e3:.2f} ms ({bw:.0f} GB/s)")
            out.append(f"| {t['n_gpus'].format(n=gpus)} | {' | '.join(cells)} |")
        net = C.NETWORK
        note = t["model_note"].format(
            g=C.GPUS_PER_NODE, a=net.alpha_s * 1e6, b=net.bandwidth / 1e9
        )
        return "\n".join(out) + "\n\n" + note + "\n"

    def _rungs(self, family: str) -> list[dict]:
        """A family's ledger entries, in version order."""
        mine = (k for k in self.ledger["kernels"].values() if k["family"] == family)
        return sorted(mine, key=lambda k: k["version"])

    # -- plots --------------------------------------------------------------------

    def plots(self, experiments_only: bool = False) -> dict[str, bytes]:
        """Every plot a page may ask for, by name: the series, the ladders and the
        experiments (only these for another GPU's ledger, whose ladder of the copy
        kernel would take the name of the site's)."""
        found = {}
        if not experiments_only:
            found = {name: self.draw(name) for name in self.ledger["series"]}
            families = {k["family"] for k in self.ledger["kernels"].values()}
            for family in sorted(families):
                found[ladder_plot(family)] = self.draw_ladder(family)

        def add(e, result: dict, where: str) -> None:  # titled "<title>: <where>"
            sep = "：" if self.lang == "zh" else ": "
            title = f"{e.title[self.lang]}{sep}{where}"
            found[experiments.plot_name(e.name)] = experiments.draw(
                e, result, title, self.lang
            )

        device = self.ledger["device"]["name"]
        for name, entry in self.ledger.get("experiments", {}).items():
            date = L.run_of(self.ledger, entry)["date"]
            add(by_name(name), entry["result"], f"{device}, {date}")
        if experiments_only:
            return found
        from thousand.bench import sweep

        for name, entry in sweep.records().items():
            where = f"{entry['device']['name']}, {entry['run']['date']}"
            add(sweep.experiment(name), sweep.as_result(name, entry), where)
        from thousand.distributed.record import records

        for rec in records().values():
            d = rec["record"]["device"]
            where = f"{d['count']} × {d['name']}, {rec['record']['run']['date']}"
            add(rec["experiment"], rec["result"], where)
        return found

    def draw_ladder(self, family: str) -> bytes:
        """One bar per rung, with the copy kernel and the libraries as vertical
        lines; a log scale where the figures span more than a decade (rungs often
        differ by orders of magnitude), a linear one from 0 where they do not, so
        that two rungs 20% apart do not look ten times apart."""
        with charts.style() as plt:
            return self._draw_ladder(plt, family)

    def _draw_ladder(self, plt, family: str) -> bytes:
        c = CHART_TEXT[self.lang]
        rows = self._rungs(family)
        bandwidth = "gbps" in rows[0]
        unit, key = ("GB/s", "gbps") if bandwidth else ("GFLOP/s", "gflops")
        work = rows[0]["bytes"] if bandwidth else rows[0]["flops"]
        lines = []
        run = L.run_of(self.ledger, rows[0])  # a family is always timed in one run
        if bandwidth:
            peak = run["copy_peak_gbps"]
            lines.append((peak, c["copy"], "--", "black"))
        library = {}
        for k in rows:  # a version may have its own baseline (cuBLAS TF32)
            if k.get("torch_ms"):
                name = library_name(k.get("torch_baseline", family), self.lang)
                library[f"PyTorch{c['sep']}{name}"] = work / k["torch_ms"] / 1e6
            if k.get("pycuda_ms"):
                library["PyCUDA gpuarray.sum"] = work / k["pycuda_ms"] / 1e6
        styles = iter([(":", "#c0392b"), ("-.", "#27ae60"), (":", "#8e44ad")])
        for name, value in library.items():
            style, color = next(styles)
            lines.append((value, name, style, color))
        values = [k[key] for k in rows]
        if not bandwidth and max(values + [v for v, *_ in lines]) >= 1e4:
            # hundreds of thousands of GFLOP/s make tick labels too wide for a phone
            unit, values = "TFLOP/s", [v / 1e3 for v in values]
            lines = [(v / 1e3, *rest) for v, *rest in lines]
        title = f"{family}{c['sep']}{self.ledger['device']['name']}, {run['date']}"
        if charts.text_width(title) > charts.TITLE_WIDTH:
            # a long kernel name (conv_backward_data) took the line past the right
            # edge at a phone's width: the name on a line of its own
            title = f"{family}\n{self.ledger['device']['name']}, {run['date']}"
        height = 0.4 * len(rows) + 1.6 + 0.2 * title.count("\n")
        fig, ax = plt.subplots(figsize=(charts.WIDTH, height), dpi=100)
        labels = [f"v{k['version']}" for k in rows]
        ax.barh(labels, values, color="#4a7ebb")
        ax.invert_yaxis()
        for value, name, style, color in lines:
            ax.axvline(value, linestyle=style, color=color, label=name)
        shown = values + [value for value, *_ in lines]
        if max(shown) > 10 * min(shown):
            ax.set_xscale("log")
        else:
            ax.set_xlim(0, 1.05 * max(shown))
        size = " × ".join(map(_power_of_two_chart, rows[0]["size"]))
        # a convolution's size has eleven numbers: in lines the chart's width
        ax.set_xlabel(charts.wrap(c["at_size"].format(unit=unit, size=size), 48))
        fig.suptitle(title)
        ax.grid(True, axis="x", which="major", alpha=0.3)
        if lines:  # under the axes, where no bar can hide behind it
            charts.legend_below(fig, *ax.get_legend_handles_labels())
        else:
            charts.lay_out(fig)
        return charts.svg(fig)

    def draw(self, name: str) -> bytes:
        with charts.style() as plt:
            return self._draw(plt, name)

    def _draw(self, plt, name: str) -> bytes:
        c = CHART_TEXT[self.lang]
        series = self.ledger["series"][name]
        n = [p["n"] for p in series]
        fig, ax = plt.subplots(figsize=(charts.WIDTH, 3.8), dpi=100)
        for key, label, style in [
            ("numpy_ms", c["numpy"], "o-"),
            ("with_copies_ms", c["with_copies"], "s-"),
            ("kernel_ms", c["kernel"], "^-"),
        ]:
            ax.loglog(n, [p[key] for p in series], style, label=label, base=2)
        ax.set_xlabel(c["elements"])
        ax.set_ylabel(c["time"])
        run = self.ledger["runs"][self.ledger["series_runs"][name]]
        fig.suptitle(f"{self.ledger['device']['name']}, {run['date']}")
        ax.grid(True, which="major", alpha=0.3)
        ax.legend()
        charts.lay_out(fig)
        return charts.svg(fig)
