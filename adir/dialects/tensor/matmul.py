"""Matrix products.

    %y = adir.matmul %x, %w {transpose_b} : tensor<8x64xf32>, tensor<32x64xf32> -> tensor<8x32xf32>

The transpose flags replace a materialised transpose (`fold-transpose-into-matmul` sets them).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import UnitAttr, f32
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, result_def, traits_def
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from adir.dialects.tensor.base import TensorOp
from adir.dialects.tensor.shapes import (
    Dim,
    Dims,
    FloatTensor,
    format_shape,
    require_equal_dims,
    require_rank,
    tensor_type,
)
from adir.dialects.tensor.traits import LayerWeight


def _matrix(shape: Dims, transposed: bool) -> tuple[Dim, Dim]:
    """(rows, cols) of the matrices in the last two dims, swapped if `transposed`."""
    rows, cols = shape[-2], shape[-1]
    return (cols, rows) if transposed else (rows, cols)


@irdl_op_definition
class MatmulOp(TensorOp):
    """`torch.matmul(A, B)` where A is `lhs` and B is `rhs`, each with its last two dims swapped
    when `transpose_a` / `transpose_b` is set (the flags replace a materialised transpose).

    Shapes, after the flags: (M, K) x (K, N) -> (M, N); batched (B, M, K) x (B, K, N) ->
    (B, M, N); and (B, M, K) x (K, N) -> (B, M, N), one rhs shared by the whole batch. Batch
    dims must be equal: a batch of 1 does not broadcast (write a shared rhs 2-D), so a kernel
    is a loop of plain matrix products, and only a 2-D rhs has its gradient summed over the
    batch.
    """

    name = "adir.matmul"
    lhs = operand_def(FloatTensor)
    rhs = operand_def(FloatTensor)
    result = result_def(FloatTensor)
    transpose_a = opt_prop_def(UnitAttr)
    transpose_b = opt_prop_def(UnitAttr)
    traits = traits_def(
        Pure(),
        LayerWeight("rhs", when="transpose_b", rank=2, output_axis=-1),
    )

    def __init__(
        self,
        lhs: SSAValue,
        rhs: SSAValue,
        transpose_a: bool = False,
        transpose_b: bool = False,
        result_type: Attribute | None = None,
    ):
        """Without `result_type`, the result gets the type the shape rule infers."""
        flags = {"transpose_a": transpose_a, "transpose_b": transpose_b}
        super().__init__(
            [lhs, rhs],
            {name: UnitAttr() for name, on in flags.items() if on},
            None if result_type is None else [result_type],
        )

    def infer_result_types(self) -> Sequence[Attribute]:
        lhs, rhs = self.operand_shape(0), self.operand_shape(1)
        require_rank(self.name, "lhs", lhs, (2, 3))
        require_rank(self.name, "rhs", rhs, (2, 3))
        if lhs is None or rhs is None:
            return [tensor_type(f32, None)]
        if len(rhs) > len(lhs):
            raise VerifyException(
                f"{self.name}: operand rhs of rank 3 ({format_shape(rhs)}) needs an lhs of "
                f"rank 3, got rank 2 ({format_shape(lhs)})"
            )
        m, k = _matrix(lhs, self.transpose_a is not None)
        k_rhs, n = _matrix(rhs, self.transpose_b is not None)
        require_equal_dims(self.name, "inner dimensions", k, k_rhs)
        batch = lhs[:-2]
        if len(rhs) == 3:
            batch = (require_equal_dims(self.name, "batch dimensions", lhs[0], rhs[0]),)
        return [tensor_type(f32, (*batch, m, n))]


MATMUL_OPS = [MatmulOp]
