"""pytest configuration for the whole suite.

PyTorch is the reference here, run on small tensors: one thread is both faster (no thread pool
start-up per op) and immune to oversubscription when lit and pytest share the machine's cores.
"""

import torch

torch.set_num_threads(1)
