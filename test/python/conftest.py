"""pytest configuration for the whole suite.

PyTorch is the reference here, run on small tensors: one thread is both faster (no thread pool
start-up per op) and immune to oversubscription when lit and pytest share the machine's cores.

The C tests compile the runtime once a test run for each compiler and flags, into a directory
the run's processes share (`ADIR_TEST_SHARED_DIR`, made here by the process that starts the run,
pytest-xdist's workers inheriting it, and removed when the run ends; c_testing.runtime_objects).

Property tests draw fresh random cases on a developer's machine, which is how they find bugs;
under CI (`CI` set) they draw a fixed sequence, so a submission's result does not depend on
luck. `HYPOTHESIS_PROFILE=dev` or `=ci` chooses explicitly.
"""

import os
import shutil
import tempfile

import pytest
import torch
from hypothesis import settings

torch.set_num_threads(1)

settings.register_profile("ci", derandomize=True, database=None)
settings.register_profile("dev")
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))

SHARED = "ADIR_TEST_SHARED_DIR"
SHARED_KEY = pytest.StashKey[str]()


def pytest_configure(config: pytest.Config) -> None:
    """The run's shared directory, made before pytest-xdist starts its workers (they inherit
    the environment); a worker, or a run inside another's, finds it set."""
    if SHARED not in os.environ:
        os.environ[SHARED] = config.stash[SHARED_KEY] = tempfile.mkdtemp(prefix="adir-tests-")


def pytest_unconfigure(config: pytest.Config) -> None:
    directory = config.stash.get(SHARED_KEY, None)
    if directory is not None:
        shutil.rmtree(directory, ignore_errors=True)
        del os.environ[SHARED]
