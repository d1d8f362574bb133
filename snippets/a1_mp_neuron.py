"""A McCulloch–Pitts unit on the GPU: AND, OR, NOT, and no weights for XOR (A1)."""

from thousand.models.mp_neuron import GATES, search, truth_table

for gate, (w, theta) in GATES.items():
    table = ", ".join(f"{x}->{out}" for x, out in truth_table(gate))
    print(f"{gate:3}  w={w}, theta={theta}:  {table}")

# Every unit with integer weights in [-3, 3] and any useful threshold, on the four
# inputs of two bits, each unit evaluated by the threshold kernel.
for name, target in (("AND", lambda a, b: a & b), ("XOR", lambda a, b: a ^ b)):
    tried, found = search(target)
    print(f"{name}: {tried} units tried, {len(found)} compute it")
