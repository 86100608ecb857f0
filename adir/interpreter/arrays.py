"""Conversions between builtin tensor types, dense attributes and numpy arrays."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    Float32Type,
    Float64Type,
    IntegerType,
    MemRefType,
    TensorType,
    UnrankedTensorType,
)
from xdsl.ir import Attribute


def to_numpy_dtype(type_: Attribute, float_dtype: np.dtype) -> np.dtype:
    """The numpy dtype a value of this tensor type is held in by the interpreter."""
    shaped = TensorType | UnrankedTensorType | MemRefType
    elem = type_.element_type if isinstance(type_, shaped) else type_
    if isinstance(elem, Float32Type | Float64Type):
        return float_dtype
    if isinstance(elem, IntegerType):
        width = elem.width.data
        if width == 1:
            return np.dtype(np.bool_)
        return np.dtype({8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}[width])
    raise TypeError(f"the interpreter has no numpy type for {type_}")


def dense_to_numpy(attr: DenseIntOrFPElementsAttr, float_dtype: np.dtype) -> np.ndarray:
    """The values of a dense attribute (splat or not) as an array of the attribute's shape."""
    shape = tuple(attr.get_shape())
    elem = attr.get_element_type()
    if isinstance(elem, Float32Type | Float64Type) or (
        isinstance(elem, IntegerType) and elem.width.data in (8, 16, 32, 64)
    ):
        # Zero-copy view of the attribute's little-endian storage.
        storage = np.dtype(
            f"<{'f' if isinstance(elem, Float32Type | Float64Type) else 'i'}{_byte_width(elem)}"
        )
        values = np.frombuffer(attr.data.data, dtype=storage)
    else:
        values = np.asarray(attr.get_values())
    values = values.astype(to_numpy_dtype(attr.type, float_dtype))
    if values.size == 1 and np.prod(shape, dtype=np.int64) != 1:
        return np.full(shape, values.reshape(()), dtype=values.dtype)
    return values.reshape(shape)


def _byte_width(elem: Attribute) -> int:
    if isinstance(elem, Float32Type):
        return 4
    if isinstance(elem, Float64Type):
        return 8
    assert isinstance(elem, IntegerType)
    return elem.width.data // 8


def exact_cast(array: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """`array` as `dtype` when no value changes (int64 labels that fit i32, integral floats as
    labels), and floats or integers of any width as the interpreter's float type, a rounding
    that users expect of f32 models fed float64 data. A ValueError names the first value that
    would change (int64 2^32+1 is 1 in i32, a float label 0.9 is 0, a float64 1e300 is inf in
    f32), or a dtype that is not a number."""
    if array.dtype == dtype:
        return array
    kind = array.dtype.kind
    if kind not in "biuf":
        raise ValueError(f"holds {array.dtype} values, not numbers")
    with np.errstate(invalid="ignore", over="ignore"):  # what the check below reports
        converted = array.astype(dtype)
    if dtype.kind == "f":  # rounding is expected; a finite value becoming inf is not
        changed = np.isfinite(array) & ~np.isfinite(converted)
    else:
        changed = converted != array  # numpy compares across dtypes by value
        if kind == "f":
            changed |= ~np.isfinite(array)
    if changed.any():
        index = tuple(int(i) for i in np.argwhere(changed)[0])
        value = array[index].item()
        integral = kind != "f" or value == np.floor(value)
        why = f"does not fit {dtype.name}" if integral else f"is not an integer ({dtype.name})"
        raise ValueError(f"value {value!r} at index {index} {why}")
    return converted
