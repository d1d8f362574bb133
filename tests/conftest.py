"""Two layers: the CPU layer always runs; the GPU layer (marker `gpu`) needs a GPU.

Without one, every GPU test is skipped and the run says so in one line, with the
reason. Nothing else is ever skipped silently.
"""

import os
from collections import Counter

import pytest

from thousand.cuda import gpu_status

_GPU = {}
_CPU_KERNEL_OF = {}  # test id -> the kernel it runs on the CPU backend


def gpu():
    if not _GPU:
        _GPU["ok"], _GPU["why"] = gpu_status()
    return _GPU["ok"], _GPU["why"]


def pytest_report_header(config):
    ok, why = gpu()
    return f"GPU layer: {'runs on ' + why if ok else 'skipped: ' + why}"


# Tests named by their module, not by a parameter: the family they check.
MODULE_FAMILY = {"test_reduce_ops": "reduce", "test_unroll": "unroll"}
# ... or the experiments whose code they check (thousand.beyond's tools): they run
# when one of those is stale, not in every stale-only run.
MODULE_EXPERIMENTS = {
    "test_triton": ("b13-triton-matmul", "b13-triton-fp32", "b13-triton-softmax"),
    "test_cutile": ("b14-cutile", "b14-cutile-ops"),
    "test_extension": ("b15-call-cost", "b15-gelu"),
    "test_compiled": ("b16-compile",),
    "test_graphs": ("b18-launch-cost", "b18-mlp-graph"),
}


def _subject(item) -> tuple[str, str | None] | None:
    """What a GPU test measures or checks, as (ledger section, name): a kernel
    family, a snippet, an experiment (or a tuple of them), a notebook; ("models",
    None) for the model checks; None for tests of the machinery itself (always
    run)."""
    from thousand.bench.baselines import BASELINE_FAMILY
    from thousand.bench.ledger import ROOT

    params = item.callspec.params if hasattr(item, "callspec") else {}
    module = item.module.__name__.rsplit(".", 1)[-1]
    if "family" in params:
        return "kernels", params["family"].name
    if "name" in params:  # a library baseline: named by family or by its own key
        return "kernels", BASELINE_FAMILY.get(params["name"], params["name"])
    if "experiment" in params:
        return "experiments", params["experiment"].name
    if "path" in params:
        path = params["path"]
        if path.suffix == ".py":
            return "snippets", path.name
        return "notebooks", path.relative_to(ROOT).as_posix()
    if item.name.startswith("test_cpu_vs_gpu_series"):
        return "kernels", "vector_add"  # B1's plot times vector_add
    if module in MODULE_FAMILY:
        return "kernels", MODULE_FAMILY[module]
    if module in MODULE_EXPERIMENTS:
        return "experiments", MODULE_EXPERIMENTS[module]
    if module in ("test_models", "test_rnn"):  # model checks (A7 in its own file)
        return "models", None
    return None


def _redo(items, plan_file: str) -> list:
    """A stale-only GPU run (python -m thousand.bench --stale): keep the tests of
    what the plan names, the model checks if any family changed, and the tests of
    the machinery."""
    import json

    plan = {k: set(v) for k, v in json.loads(open(plan_file).read()).items()}
    kept = []
    for item in items:
        if "gpu" not in item.keywords:  # the CPU layer: -m gpu leaves it out anyway
            kept.append(item)
            continue
        subject = _subject(item)
        if subject is not None and isinstance(subject[1], tuple):
            names = subject[1]  # one module for several experiments
        else:
            names = () if subject is None else (subject[1],)
        if (
            subject is None
            or (subject[0] == "models" and plan["kernels"])
            or any(n in plan.get(subject[0], ()) for n in names)
        ):
            kept.append(item)
    return kept


def pytest_collection_modifyitems(config, items):
    plan = os.environ.get("THOUSAND_REDO")  # python -m thousand.bench --stale
    if plan:
        mine = _redo(items, plan)
        config.hook.pytest_deselected(items=[i for i in items if i not in mine])
        items[:] = mine
    shard = os.environ.get("THOUSAND_SHARD")  # python -m thousand.bench --shard K/N
    if shard:
        from thousand.bench.shards import parse, shard_of

        k, n = parse(shard)
        mine = [item for item in items if shard_of(item.nodeid, n) == k]
        config.hook.pytest_deselected(items=[i for i in items if i not in mine])
        items[:] = mine
    for item in items:
        marker = item.get_closest_marker("cpu_kernel")
        if marker:
            # a property travels with the report, also from an xdist worker
            item.user_properties.append(("cpu_kernel", marker.args[0]))
    ok, why = gpu()
    if ok:
        return
    skip = pytest.mark.skip(reason=f"no GPU: {why}")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def _cpu_kernel_of(report) -> str | None:
    """The kernel a CPU-layer test ran on the CPU backend (its cpu_kernel mark)."""
    props = dict(getattr(report, "user_properties", ()))
    return props.get("cpu_kernel")


def _cpu_kernel_summary(terminalreporter):
    """One line: how many kernels ran on the CPU backend; one per GPU-only skip."""
    stats = terminalreporter.stats
    for reports in stats.values():
        for r in reports:
            if kernel := _cpu_kernel_of(r):
                _CPU_KERNEL_OF[r.nodeid] = kernel
    ran = {
        _CPU_KERNEL_OF[r.nodeid]
        for r in stats.get("passed", []) + stats.get("failed", [])
        if r.nodeid in _CPU_KERNEL_OF and r.when == "call"
    }
    skipped = {}
    for r in stats.get("skipped", []):
        if r.nodeid in _CPU_KERNEL_OF and isinstance(r.longrepr, tuple):
            skipped[_CPU_KERNEL_OF[r.nodeid]] = str(r.longrepr[2]).removeprefix(
                "Skipped: "
            )
    if ran or skipped:
        terminalreporter.write_line(
            f"CPU backend: {len(ran)} kernel versions ran on the CPU; "
            f"{len(skipped)} skipped as GPU-only",
            green=not skipped,
            yellow=bool(skipped),
        )
    for kernel, reason in sorted(skipped.items()):
        terminalreporter.write_line(f"  {kernel}: {reason}", yellow=True)


def pytest_terminal_summary(terminalreporter):
    _cpu_kernel_summary(terminalreporter)
    ok, why = gpu()
    skipped = terminalreporter.stats.get("skipped", [])
    on_gpu = [r for r in skipped if "gpu" in getattr(r, "keywords", {})]
    if not ok and on_gpu:
        terminalreporter.write_line(
            f"GPU layer: {len(on_gpu)} tests skipped because {why}", yellow=True
        )
    # Anything else skipped (nvcc missing outside CI, say) is named too, by reason.
    reasons = Counter(
        str(r.longrepr[2]) if isinstance(r.longrepr, tuple) else "skipped"
        for r in skipped
        if "gpu" not in getattr(r, "keywords", {}) and r.nodeid not in _CPU_KERNEL_OF
    )
    for reason, count in sorted(reasons.items()):
        terminalreporter.write_line(
            f"CPU layer: {count} skipped: {reason}", yellow=True
        )
