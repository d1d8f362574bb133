"""Track A's models, built from the package's kernels, each with a twin (NumPy for
the classic models, PyTorch for the Transformer and the GPT).

layers       Dense, Conv2D, AvgPool, Flatten and softmax cross-entropy on device
             arrays (the kernels); Network trains any row of them with SGD
twin         the same layers in NumPy, any float dtype (the reference)
mp_neuron    A1: the McCulloch–Pitts unit; AND, OR, NOT; no unit computes XOR
perceptron   A2: Rosenblatt's rule; converges on separable data, never on XOR
mlp          A3/A4: multilayer perceptrons trained by backpropagation
hopfield     A5: Hebbian storage, asynchronous recall, the energy
rbm          A5: a restricted Boltzmann machine trained by CD-1
dbn          A8: RBMs stacked greedily, unrolled, fine-tuned; dreams by Gibbs
dbn_twin     the fine-tuned DBN's PyTorch twin (needs torch)
lenet        A6: LeNet-5
gan          A13: a GAN on a ring of Gaussians and a DCGAN on the digits, whose
             transposed convolutions are B11's input gradient run forward
gan_twin     their PyTorch twin (needs torch)
transformer  A14: a GPT-style Transformer, trained with AdamW, on the kernels
transformer_twin  its PyTorch twin (needs torch)
corpus       A15/A16: the site's posts frozen as paragraphs (snapshot/posts.json);
             python -m thousand.models.corpus freeze
bpe          A15/A16: byte-level BPE as GPT-2's, trained on the corpus
             (snapshot/bpe.txt); python -m thousand.models.bpe train|stats
gpt          A15/A16: the Transformer with a tied head, pre-training, the
             fine-tuned classifier, sampling, generation with a KV cache
gpt_twin     its PyTorch twin (needs torch)
data         the data sets: XOR, separable points, scikit-learn's digits, reversal
train        python -m thousand.models.train mlp|lenet|transformer: the training
             script
"""
