"""Shape algebra shared by the adir ops' shape rules.

A tensor's shape is known to a varying degree: `tensor<*xf32>` knows nothing (rank unknown),
`tensor<?x10xf32>` knows the rank and some dims, `tensor<1x10xf32>` everything. Here a shape is
`Dims | None`: `None` for unranked, else a tuple whose entries are an `int` or `None` for `?`.
Every shape rule works on this form, so one rule serves both the verifier (which checks what is
known) and the `infer-shapes` pass (which fills in what was left unknown).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    Float32Type,
    IntegerType,
    TensorType,
    UnrankedTensorType,
    f32,
    i1,
)
from xdsl.ir import Attribute
from xdsl.utils.exceptions import VerifyException

Dim = int | None
Dims = tuple[Dim, ...]
Shape = Dims | None

# IRDL constraints for operands and results.
FloatTensor = TensorType[Float32Type] | UnrankedTensorType[Float32Type]
IntTensor = TensorType[IntegerType] | UnrankedTensorType[IntegerType]
AnyTensor = TensorType[Attribute] | UnrankedTensorType[Attribute]
TensorLike = TensorType[Attribute] | UnrankedTensorType[Attribute]


def shape_of(type_: Attribute) -> Shape:
    """The shape of a tensor type, `None` if unranked."""
    if isinstance(type_, TensorType):
        return tuple(None if d == DYNAMIC_INDEX else d for d in type_.get_shape())
    return None


def element_type(type_: Attribute) -> Attribute:
    assert isinstance(type_, TensorType | UnrankedTensorType), type_
    return type_.element_type


def tensor_type(elem: Attribute, shape: Shape | Sequence[Dim]) -> TensorType | UnrankedTensorType:
    return _tensor_type(elem, None if shape is None else tuple(shape))


# Building an xDSL type verifies its parameters, which costs more than most shape rules: the
# few distinct types of a model are built once each.
@functools.lru_cache(maxsize=4096)
def _tensor_type(elem: Attribute, shape: Shape) -> TensorType | UnrankedTensorType:
    if shape is None:
        return UnrankedTensorType(elem)
    return TensorType(elem, [DYNAMIC_INDEX if d is None else d for d in shape])


def format_shape(shape: Shape) -> str:
    if shape is None:
        return "*"
    return "x".join("?" if d is None else str(d) for d in shape) or "scalar"


def num_elements(shape: Dims) -> int | None:
    total = 1
    for d in shape:
        if d is None:
            return None
        total *= d
    return total


# MLIR's limit: a dimension, and the number of elements it indexes, fit a signed 64-bit index.
MAX_ELEMENTS = 2**63 - 1


def check_size(type_: Attribute, what: str) -> None:
    """Raise `VerifyException` if a tensor type is too large to index with 64 bits."""
    shape = shape_of(type_)
    if shape is None:
        return
    for d in shape:
        if d is not None and not 0 <= d <= MAX_ELEMENTS:
            raise VerifyException(f"{what} {type_}: dimension {d} is not in [0, 2^63)")
    if (count := num_elements(shape)) is not None and count > MAX_ELEMENTS:
        raise VerifyException(f"{what} {type_}: {count} elements do not fit a 64-bit index")


def is_compatible(a: Attribute, b: Attribute) -> bool:
    """Same element type, and no known dimension of one contradicts the other. Types other
    than tensors (memrefs, scalars: what a function holds after bufferization) only if equal."""
    tensors = TensorType | UnrankedTensorType
    if not isinstance(a, tensors) or not isinstance(b, tensors):
        return a == b
    if element_type(a) != element_type(b):
        return False
    sa, sb = shape_of(a), shape_of(b)
    if sa is None or sb is None:
        return True
    return len(sa) == len(sb) and all(
        x is None or y is None or x == y for x, y in zip(sa, sb, strict=True)
    )


def refine(declared: Attribute, inferred: Attribute) -> Attribute:
    """The most precise type consistent with both (they must be compatible)."""
    sd, si = shape_of(declared), shape_of(inferred)
    if sd is None:
        return inferred
    if si is None:
        return declared
    merged = tuple(d if d is not None else i for d, i in zip(sd, si, strict=True))
    return tensor_type(element_type(declared), merged)


def broadcast(op_name: str, shapes: Sequence[Shape], names: Sequence[str]) -> Shape:
    """numpy broadcasting of several shapes, aligned from the right.

    Unknown dims broadcast optimistically: `?` against `n` gives `n` (a `?` that turns out to
    be neither 1 nor n is caught when the shape becomes known), `?` against `1` gives `?`.
    """
    if any(s is None for s in shapes):
        return None
    known = [s for s in shapes if s is not None]  # all of them; the list narrows the type
    rank = max(len(s) for s in known)
    out: list[Dim] = []
    for axis in range(-rank, 0):
        result: Dim = 1
        owner = 0
        unknown = False
        for index, shape in enumerate(known):
            if -axis > len(shape):
                continue
            d = shape[axis]
            if d is None:
                unknown = True
            elif d != 1:
                if result not in (1, d):
                    raise VerifyException(
                        f"{op_name}: operands {names[owner]} ({format_shape(known[owner])}) and "
                        f"{names[index]} ({format_shape(shape)}) do not broadcast: dimensions "
                        f"{result} and {d} differ"
                    )
                result, owner = d, index
        out.append(None if unknown and result == 1 else result)
    return tuple(out)


def normalize_axis(op_name: str, axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise VerifyException(f"{op_name}: axis {axis} is out of range for rank {rank}")
    return axis % rank


def require_rank(op_name: str, operand: str, shape: Shape, ranks: Sequence[int]) -> None:
    if shape is not None and len(shape) not in ranks:
        expected = " or ".join(str(r) for r in ranks)
        raise VerifyException(
            f"{op_name}: operand {operand} must have rank {expected}, got rank {len(shape)} "
            f"({format_shape(shape)})"
        )


def require_equal_dims(
    op_name: str, what: str, a: Dim, b: Dim, operands: tuple[str, str] | None = None
) -> Dim:
    """The dim that `a` and `b` both describe (either may be unknown), or an error naming
    them: "adir.matmul: inner dimensions 784 and 32 do not match", or with `operands`,
    "adir.nll: batch sizes 32 and 16 of input and target do not match"."""
    if a is not None and b is not None and a != b:
        of = f" of {operands[0]} and {operands[1]}" if operands else ""
        raise VerifyException(f"{op_name}: {what} {a} and {b}{of} do not match")
    return a if a is not None else b


__all__ = [
    "AnyTensor",
    "Dim",
    "Dims",
    "FloatTensor",
    "IntTensor",
    "Shape",
    "TensorLike",
    "broadcast",
    "element_type",
    "f32",
    "format_shape",
    "i1",
    "is_compatible",
    "normalize_axis",
    "num_elements",
    "refine",
    "require_equal_dims",
    "require_rank",
    "shape_of",
    "tensor_type",
]
