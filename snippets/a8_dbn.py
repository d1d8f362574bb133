"""A deep belief network on the digits: two RBMs trained greedily by CD-1 on the
GPU, unrolled into a sigmoid net and fine-tuned on 1% of the labels, against the
same net started at random (sigmoid, and ReLU with He's init); then what the top
RBM dreams, drawn in characters (A8)."""

import numpy as np

from thousand.cuda import on_cpu
from thousand.models import dbn, mlp

X_train, X_test, y_train, y_test = dbn.binary_digits()  # pixels 0 or 1
pre, tune = dict(dbn.PRETRAIN), dict(dbn.FINETUNE)
if on_cpu():  # every GPU thread is emulated on the CPU backend: a short run
    pre["epochs"], tune["steps"] = 2, 50


def report(layer, epoch, error):
    if epoch == pre["epochs"]:
        print(f"RBM {layer}: held-out reconstruction error {error:.4f}")


# 1. Greedy pre-training on all 1,347 training images, no labels.
stack = dbn.pretrain(X_train, dbn.SIZES, seed=0, X_test=X_test, log=report, **pre)

# 2. Fine-tuning on 1% of the labels: the same images for every start.
rows = dbn.labelled(y_train, 0.01, seed=0)
print(f"{len(rows)} labelled images, digits {' '.join(map(str, y_train[rows]))}")
names = {
    "pre-trained": "DBN (sigmoid)",
    "random": "random (sigmoid)",
    "relu": "He (ReLU)",
}
for arm, hidden in dbn.ARMS.items():
    pretrained = stack if arm == "pre-trained" else None
    net = dbn.network(dbn.initial_params(arm, dbn.SIZES, 0, pretrained), hidden)
    dbn.finetune(net, X_train[rows], y_train[rows], seed=0, **tune)
    accuracy = mlp.accuracy(net, X_test, y_test)
    print(f"start {names[arm]:>16}: held-out accuracy {accuracy:.1%}")

# 3. Dreams: Gibbs chains in the top RBM, carried down to 8 x 8 pixels, each
# drawn as '#' (p > 0.75), '+' (p > 0.5), '.' (p > 0.25) or blank.
dreams = dbn.sample(stack, chains=6, steps=100 if on_cpu() else 1000, seed=0)
shades = np.array(list(" .+#"))
for row in range(8):
    cells = dreams.reshape(6, 8, 8)[:, row]  # row `row` of every picture
    print("   ".join("".join(shades[np.digitize(c, [0.25, 0.5, 0.75])]) for c in cells))
