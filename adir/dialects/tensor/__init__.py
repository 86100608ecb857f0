"""The `adir` tensor dialect: value semantics on builtin `tensor<...xf32>`.

One file per op family; the interpreter (`adir/interpreter/<family>.py`), the VJP rules and the
C kernels use the same family names. To add an op, define it in its family file (with the
traits that tell the passes what it is, `traits.py`) and list it in that file's `*_OPS` list;
`docs/extending.md` walks through it.
"""

from xdsl.ir import Dialect

from adir.dialects.tensor.activations import ACTIVATIONS_OPS
from adir.dialects.tensor.conv_and_pool import CONV_AND_POOL_OPS
from adir.dialects.tensor.data_movement import DATA_MOVEMENT_OPS
from adir.dialects.tensor.elementwise import ELEMENTWISE_OPS
from adir.dialects.tensor.embedding import EMBEDDING_OPS
from adir.dialects.tensor.initializers import INITIALIZERS
from adir.dialects.tensor.losses import LOSSES_OPS
from adir.dialects.tensor.matmul import MATMUL_OPS
from adir.dialects.tensor.normalization import NORMALIZATION_OPS
from adir.dialects.tensor.optimizers import OPTIMIZERS_OPS
from adir.dialects.tensor.params import PARAM_OPS
from adir.dialects.tensor.quantized import QUANTIZED_OPS
from adir.dialects.tensor.reductions import REDUCTIONS_OPS

ADIR_OPS = [
    *PARAM_OPS,
    *ELEMENTWISE_OPS,
    *MATMUL_OPS,
    *DATA_MOVEMENT_OPS,
    *REDUCTIONS_OPS,
    *ACTIVATIONS_OPS,
    *LOSSES_OPS,
    *CONV_AND_POOL_OPS,
    *NORMALIZATION_OPS,
    *EMBEDDING_OPS,
    *OPTIMIZERS_OPS,
    *QUANTIZED_OPS,
]

Adir = Dialect("adir", ADIR_OPS, [*INITIALIZERS])

LOSS_MARKER = "adir.loss"
"""The unit attribute that marks a function as a loss: `func.func @loss(...) attributes
{adir.loss}`; `autodiff` differentiates the functions that carry it."""
