"""Several GPUs (B19): collectives written with the package's own kernels."""
