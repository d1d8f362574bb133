"""Track A's models, built from the package's kernels, each with a twin (NumPy for
the classic models, PyTorch for the Transformer).

layers       Dense, Conv2D, AvgPool, Flatten and softmax cross-entropy on device
             arrays (the kernels); Network trains any row of them with SGD
twin         the same layers in NumPy, any float dtype (the reference)
mp_neuron    A1: the McCulloch–Pitts unit; AND, OR, NOT; no unit computes XOR
perceptron   A2: Rosenblatt's rule; converges on separable data, never on XOR
mlp          A3/A4: multilayer perceptrons trained by backpropagation
hopfield     A5: Hebbian storage, asynchronous recall, the energy
rbm          A5: a restricted Boltzmann machine trained by CD-1
lenet        A6: LeNet-5
transformer  A14: a GPT-style Transformer, trained with AdamW, on the kernels
transformer_twin  its PyTorch twin (needs torch)
data         the data sets: XOR, separable points, scikit-learn's digits, reversal
train        python -m thousand.models.train mlp|lenet|transformer: the training
             script
"""
