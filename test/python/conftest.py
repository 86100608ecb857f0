"""pytest configuration for the whole suite.

PyTorch is the reference here, run on small tensors: one thread is both faster (no thread pool
start-up per op) and immune to oversubscription when lit and pytest share the machine's cores.

Property tests draw fresh random cases on a developer's machine, which is how they find bugs;
under CI (`CI` set) they draw a fixed sequence, so a submission's result does not depend on
luck. `HYPOTHESIS_PROFILE=dev` or `=ci` chooses explicitly.
"""

import os

import torch
from hypothesis import settings

torch.set_num_threads(1)

settings.register_profile("ci", derandomize=True, database=None)
settings.register_profile("dev")
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))
