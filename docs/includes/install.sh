# The install commands every page shows, one per situation, each included by name
# (--8<-- "docs/includes/install.sh:gpu") so that no page can drift from the others.
# Both run from the root of a clone of the repository, in a virtual environment.

# With an NVIDIA GPU (driver and CUDA toolkit installed): PyCUDA, and everything the
# snippets and experiments use (scikit-learn, PyTorch with CUDA, Triton, ninja).
# --8<-- [start:gpu]
pip install -e ".[gpu,snippets]"
# --8<-- [end:gpu]

# Without one: the kernels run on the CPU backend (g++); PyTorch's CPU build goes in
# first, or the snippets extra would pull the CUDA build.
# --8<-- [start:cpu]
pip install torch --index-url https://download.pytorch.org/whl/cpu
pip install -e ".[snippets]"
# --8<-- [end:cpu]
