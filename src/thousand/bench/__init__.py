"""From a GPU run to the evidence the site shows.

`quick`   check then time one family from the command line (each family's __main__)
`measure` the timings the benchmarks record (CUDA events, L2 flushed, baselines)
`ledger`  the per-GPU results file: written by the GPU run, read by tests and pages
`__main__` the GPU run itself: python -m thousand.bench
"""
