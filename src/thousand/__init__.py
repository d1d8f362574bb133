"""一千个知识点 · A Thousand Points: the kernels behind the knowledge base.

`thousand.cuda` is the runtime (device, compilation, launch, timing), `thousand.kernels`
holds one family per pair of sibling files (`vector_add.cu` + `vector_add.py`),
`thousand.bench` turns a GPU run into the results ledger the site renders.
Importing the package never touches the GPU: PyCUDA is loaded on first launch.
"""

__version__ = "0.1.0"
