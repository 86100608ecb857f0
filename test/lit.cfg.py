"""lit configuration: `lit test/filecheck` (or `lit test`) runs every .mlir test.

Tests call `adir-opt`, `adir-run` and `filecheck` from the Python environment lit runs in, so
the suite works from a virtualenv that is not activated.
"""

# ruff: noqa: F821  (lit injects `config`)

import os
import sys

import lit.formats

config.name = "adir"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.excludes = ["lit.cfg.py", "Inputs"]
config.maxIndividualTestTime = 60

bin_dir = os.path.dirname(sys.executable)
config.environment["PATH"] = os.pathsep.join([bin_dir, config.environment.get("PATH", "")])

config.substitutions.append(("%python", sys.executable))

# Round trips: custom form -> generic form -> custom form must print the same IR.
config.substitutions.append(
    (
        "ADIR_ROUNDTRIP",
        "adir-opt %s --split-input-file | adir-opt --split-input-file | filecheck %s",
    )
)
config.substitutions.append(
    (
        "ADIR_GENERIC_ROUNDTRIP",
        "adir-opt %s --split-input-file --print-op-generic | adir-opt --split-input-file "
        "| filecheck %s",
    )
)
