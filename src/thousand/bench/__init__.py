"""From a GPU run to the evidence the site shows.

`checks`    run a version against its reference; prepare one for timing
`quick`     check then time one family from the command line (each family's __main__)
`baselines` the same operations in NumPy (CPU) and PyTorch (GPU), for comparison
`ledger`    the per-GPU results file: written by the GPU run, read by tests and pages
`__main__` the GPU run itself: python -m thousand.bench
"""
