"""Sparse update schemes: which parameters of a module train, written as one short string.

TTE (Lin et al., "On-Device Training Under 256KB Memory", NeurIPS 2022) fine-tunes a model on
a microcontroller by updating only part of it: the biases of chosen layers, the weights of
chosen layers (typically the last few), and for some layers only the first fraction of their
output channels. The IR says this per parameter, with attributes any front-end can set:

    {trainable = false}                 the parameter is frozen (no gradient, no update; with
                                        dense data it is a `static const` array, in flash)
    {update_fraction = 0.25 : f32}      a conv or linear weight: only its first
    {update_channels = 16}              ceil(0.25 * C) (or 16) output channels train; the
                                        rest is frozen (`split-partial-updates` splits it)

A scheme string is the short way to set them. The front-ends group parameters into layers and
record it on each parameter: `adir.layer = "stacks.2.conv2"` (the importer: the torch module
that owns the parameter; the builder: the `layer=` of `param`), and the unit attribute
`adir.bias` on a layer's bias. The layers are ordered as their first parameters are declared
(the importer declares them as `model.named_parameters()` lists them).

    scheme  := term ("+" term)*
    term    := "all" | "none" | "last:" K           (every parameter of the last K layers)
             | what ["@" layers]                     (default: every layer)
    what    := "all" | "bias" | "channels:" F | "channels:" N
    layers  := "last:" K | NAME ("," NAME)*

    all                   full training (what a module without a scheme does)
    bias                  every layer's bias
    bias+last:1           TTE's bias-only plus the classifier: biases, and all of the last layer
    bias@last:3+last:1    the biases of the last 3 layers, all of the last one
    channels:0.25@last:2  the first quarter of the output channels of the weights of the last 2
                          layers (`update_fraction`); `channels:16` sets `update_channels`
    all@fc,stacks.2.conv2 every parameter of the two named layers

A parameter trains when some term selects it; a whole selection wins over a channel fraction.
`channels` applies to the layers' weights of rank 2 or more (conv and linear weights), not to
their biases nor to a batch norm's rank-1 scale. The scheme touches only parameters that have
an `adir.layer` and are not already `{trainable = false}` (running statistics stay as they are).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import (
    Float32Type,
    FloatAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    UnitAttr,
    i1,
    i64,
)

from adir.dialects.tensor.params import ParamOp

LAYER = "adir.layer"
BIAS = "adir.bias"
UPDATE_FRACTION = "update_fraction"
UPDATE_CHANNELS = "update_channels"


class SchemeError(ValueError):
    """A scheme that does not parse or names what the module does not have."""


@dataclass(frozen=True)
class Term:
    """One `+`-separated part: what it trains in which layers."""

    what: str  # all, bias or channels
    layers: tuple[str, ...] | int | None  # names, the last K (an int), or None for every layer
    fraction: float | None = None  # channels:F
    count: int | None = None  # channels:N


def parse_scheme(text: str) -> list[Term]:
    """The terms of a scheme string (module docstring), or a SchemeError saying what is wrong."""
    terms = []
    for part in text.split("+"):
        part = part.strip()
        if not part:
            raise SchemeError(f"scheme '{text}': an empty term")
        what, _, layers = part.partition("@")
        if what.startswith("last:") and not layers:
            terms.append(Term("all", _parse_layers(what, text)))
            continue
        if what == "none" and not layers:
            continue
        if what in ("all", "bias"):
            terms.append(Term(what, _parse_layers(layers, text) if layers else None))
        elif what.startswith("channels:"):
            fraction, count = _parse_channels(what.removeprefix("channels:"), text)
            scope = _parse_layers(layers, text) if layers else None
            terms.append(Term("channels", scope, fraction, count))
        else:
            raise SchemeError(
                f"scheme '{text}': unknown term '{part}' (expected all, none, bias, last:K or "
                "channels:F, optionally @layers)"
            )
    return terms


def _parse_layers(text: str, scheme: str) -> tuple[str, ...] | int:
    if text.startswith("last:"):
        count = text.removeprefix("last:")
        if not count.isdigit() or int(count) < 1:
            raise SchemeError(f"scheme '{scheme}': last:{count} needs a positive integer")
        return int(count)
    names = tuple(name.strip() for name in text.split(","))
    if not all(names):
        raise SchemeError(f"scheme '{scheme}': an empty layer name in '{text}'")
    return names


def _parse_channels(text: str, scheme: str) -> tuple[float | None, int | None]:
    if text.isdigit():
        if int(text) < 1:
            raise SchemeError(f"scheme '{scheme}': channels:{text} must be at least 1")
        return None, int(text)
    try:
        fraction = float(text)
    except ValueError:
        raise SchemeError(
            f"scheme '{scheme}': channels:{text} needs a fraction in (0, 1] or a channel count"
        ) from None
    if not 0 < fraction <= 1:
        raise SchemeError(f"scheme '{scheme}': channels:{text} must be a fraction in (0, 1]")
    return fraction, None


def layers_of(module: ModuleOp) -> dict[str, list[ParamOp]]:
    """The module's layers in declaration order: name -> its parameters."""
    layers: dict[str, list[ParamOp]] = {}
    for op in module.ops:
        if isinstance(op, ParamOp) and isinstance(name := op.attributes.get(LAYER), StringAttr):
            layers.setdefault(name.data, []).append(op)
    return layers


def _selected(term: Term, layers: dict[str, list[ParamOp]], scheme: str) -> list[str]:
    names = list(layers)
    if term.layers is None:
        return names
    if isinstance(term.layers, int):
        if term.layers > len(names):
            raise SchemeError(
                f"scheme '{scheme}': last:{term.layers}, but the module has {len(names)} layers"
            )
        return names[-term.layers :]
    for name in term.layers:
        if name not in layers:
            raise SchemeError(
                f"scheme '{scheme}': no layer '{name}' (the module's layers: "
                + ", ".join(names)
                + ")"
            )
    return list(term.layers)


def is_trainable(op: ParamOp) -> bool:
    flag = op.attributes.get("trainable")
    return not isinstance(flag, IntegerAttr) or bool(flag.value.data)


def apply_scheme(module: ModuleOp, scheme: str) -> None:
    """Mark the parameters of `module` as `scheme` says (module docstring)."""
    terms = parse_scheme(scheme)
    layers = layers_of(module)
    if not layers:
        raise SchemeError(
            f"scheme '{scheme}': no parameter of the module names its layer (adir.layer)"
        )
    whole: set[ParamOp] = set()
    partial: dict[ParamOp, Term] = {}
    for term in terms:
        for name in _selected(term, layers, scheme):
            for op in layers[name]:
                is_bias = BIAS in op.attributes
                if term.what == "all" or (term.what == "bias" and is_bias):
                    whole.add(op)
                elif term.what == "channels" and not is_bias and op.type.get_num_dims() >= 2:
                    partial[op] = term
    for ops in layers.values():
        for op in ops:
            if not is_trainable(op):
                continue
            if op in whole:
                continue
            term = partial.get(op)
            if term is None:
                op.attributes["trainable"] = IntegerAttr(0, i1)
            elif term.fraction is not None:
                op.attributes[UPDATE_FRACTION] = FloatAttr(term.fraction, Float32Type())
            else:
                assert term.count is not None
                channels = op.type.get_shape()[0]
                op.attributes[UPDATE_CHANNELS] = IntegerAttr(min(term.count, channels), i64)


def mark_layer(op: ParamOp, layer: str, bias: bool) -> None:
    """Record that `op` belongs to `layer` (and is its bias), as a front-end does."""
    op.attributes[LAYER] = StringAttr(layer)
    if bias:
        op.attributes[BIAS] = UnitAttr()
