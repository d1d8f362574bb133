"""How long the CPU backend takes: `python -m thousand.cpu.bench` (B17).

Times here are CPU emulation times, on the machine that ran this snippet.
"""

from thousand.cpu.bench import main

main()
