"""A sparse update scheme that fits an SRAM budget, chosen greedily by trained values per byte.

TTE (Lin et al., "On-Device Training Under 256KB Memory", NeurIPS 2022) picks what to train on
a microcontroller by an offline contribution analysis: the accuracy each layer's biases and
each layer's weights (or a fraction of their output channels) add when fine-tuned, against the
memory they cost. Its findings: biases are cheap and help; the later layers' weights help most;
more channels help more. adir has no data at compile time, so its estimate of a step's benefit
is the number of parameter values it makes trainable (the capacity a fine-tuning gains, counted
in elements, whatever their type: an int8 weight of level-2 quantized training is one value in
one byte, an f32 one a value in four), and its cost is measured, not estimated: each
candidate scheme is compiled as `adir-opt` would compile it (apply the scheme,
freeze-batchnorm, autodiff, the optimizer, the planning passes for the target; with
`--quantize-frozen` the int8 passes of quantized training too) and its SRAM is the planned
arena plus the parameters and state in RAM, what `plan-memory{sram=...}` checks
(`adir/passes/plan_memory/budget.py`).

The search grows the scheme from the output back, as TTE's findings order it, with two
candidates each round:

- biases: the biases of the last m layers that have one, m growing as 1, 2, 4, ... (doubling
  while the budget holds, then halving the step: a bisection of the deepest that fits);
- weights: the frontier layer (the last layer with a weight of rank 2 or more first, then the one
  before it, ...) trained whole if that fits, else its largest fitting fraction of output channels
  among 1/2, 1/4, 1/8 (`channels:F@layer`); once a layer cannot grow, the frontier moves to the
  layer before it, and the search for weights ends at the first layer none of whose fractions
  fits.

Each round takes the candidate with the most newly trained values per byte of SRAM it adds (a
step that adds no byte wins), and ends when neither fits. The first step trains part of the last
layer at least, or the budget is an error naming what even that needs. The result is a scheme
string (`adir/update_scheme.py`) a user can paste into `--train=`, printed with its SRAM.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import PassPipeline
from xdsl.utils.exceptions import PassFailedException

from adir.context import adir_context
from adir.dialects.tensor.params import ParamOp
from adir.param_storage import STATE, TRAINABLE, static_memory
from adir.update_scheme import BIAS, SchemeError, layers_of

# The fractions of a layer's output channels the search tries when the whole layer does not fit.
FRACTIONS = (0.5, 0.25, 0.125)


@dataclass(frozen=True)
class Cost:
    """What a scheme needs: SRAM (arena + RAM parameters and state) and its parts."""

    sram: int
    arena: int
    trainable: int  # bytes of trainable parameters
    state: int  # bytes of optimizer state
    flash: int
    # Trainable parameter values (elements, of any type): the estimate of what the scheme can
    # learn. Level 2 trains i8 weights and i32 biases, so bytes / 4 would undercount them.
    values: int


@dataclass(frozen=True)
class Scheme:
    """A point of the search: the biases of the last `biases` layers that have one, and per
    weight layer the fraction of its output channels that trains (1.0: the whole layer)."""

    biases: int = 0
    weights: tuple[tuple[str, float], ...] = ()

    def text(self, layers: list[str], bias_layers: list[str]) -> str:
        """The scheme string: `bias@last:K+all@fc+channels:0.25@conv2`, or `none`."""
        terms = []
        whole = [name for name, fraction in self.weights if fraction == 1.0]
        # Biases that whole layers already train need no term of their own.
        if self.biases and not set(bias_layers[-self.biases :]) <= set(whole):
            deepest = bias_layers[-self.biases]
            terms.append(f"bias@last:{len(layers) - layers.index(deepest)}")
        if whole:
            terms.append("all@" + ",".join(whole))
        for fraction in sorted({f for _, f in self.weights if f < 1.0}, reverse=True):
            names = [name for name, f in self.weights if f == fraction]
            terms.append(f"channels:{fraction:g}@" + ",".join(names))
        return "+".join(terms) if terms else "none"


@dataclass
class Step:
    """One accepted step of the search, for the report."""

    scheme: str
    cost: Cost


@dataclass
class Suggestion:
    scheme: str
    cost: Cost
    steps: list[Step] = field(default_factory=list[Step])
    tried: int = 0


class BudgetTooSmall(ValueError):
    """Even the smallest step (a fraction of the last layer) does not fit."""


def measure(module: ModuleOp, scheme: str, pipeline: str) -> Cost:
    """Compile a clone of `module` under `scheme` through `pipeline` (which must end with
    `plan-memory`) and say what it needs."""
    from adir.passes import ADIR_PASSES
    from adir.update_scheme import apply_scheme

    planned = module.clone()
    apply_scheme(planned, scheme)
    PassPipeline.parse_spec(dict(ADIR_PASSES), pipeline).apply(adir_context(), planned)
    memory = static_memory(planned)
    arena = planned.attributes["adir.arena_size"].value.data  # type: ignore[union-attr]
    values = sum(
        math.prod(op.type.get_shape())
        for op in planned.ops
        if isinstance(op, ParamOp) and memory.kinds[op.sym_name.data] is TRAINABLE
    )
    return Cost(
        sram=arena + memory.ram_params,
        arena=arena,
        trainable=memory.by_kind[TRAINABLE],
        state=memory.by_kind[STATE],
        flash=memory.flash,
        values=values,
    )


@dataclass
class Search:
    module: ModuleOp
    pipeline: str
    sram: int
    layers: list[str]
    bias_layers: list[str]  # layers with a bias, in order
    weight_layers: list[str]  # layers with a weight of rank >= 2, in order
    costs: dict[str, Cost | str] = field(default_factory=dict[str, "Cost | str"])

    def attempt(self, scheme: Scheme) -> Cost | str:
        """What `scheme` needs, or why it does not compile (a channel fraction of a weight
        that cannot be split, say): such a candidate is one that does not fit."""
        text = scheme.text(self.layers, self.bias_layers)
        if text not in self.costs:
            try:
                self.costs[text] = measure(self.module, text, self.pipeline)
            except PassFailedException as error:
                self.costs[text] = str(error)
        return self.costs[text]

    def cost(self, scheme: Scheme) -> Cost:
        """What a scheme that fitted needs."""
        cost = self.attempt(scheme)
        assert isinstance(cost, Cost), cost
        return cost

    def fits(self, scheme: Scheme) -> bool:
        cost = self.attempt(scheme)
        return isinstance(cost, Cost) and cost.sram <= self.sram

    def grown_weights(self, scheme: Scheme, frontier: int) -> Scheme | None:
        """`scheme` with the weight layer `frontier` (counted from the output) trained whole,
        or its largest fraction that fits; None if none fits."""
        name = self.weight_layers[-1 - frontier]
        current = dict(scheme.weights).get(name, 0.0)
        for fraction in (1.0, *FRACTIONS):
            if fraction <= current:
                return None
            others = tuple((n, f) for n, f in scheme.weights if n != name)
            grown = Scheme(scheme.biases, (*others, (name, fraction)))
            if self.fits(grown):
                return grown
        return None

    def run(self) -> Suggestion:
        if not self.weight_layers:
            raise SchemeError(
                "no parameter of the module names its layer (adir.layer) or no layer has a weight "
                "of rank 2 or more: adir-import and the builder's `param(..., layer=...)` record "
                "layers"
            )
        scheme = Scheme()
        first = self.grown_weights(scheme, 0)
        if first is None:
            smallest = Scheme(0, ((self.weight_layers[-1], FRACTIONS[-1]),))
            cost = self.attempt(smallest)
            if isinstance(cost, str):
                raise BudgetTooSmall(
                    f"{smallest.text(self.layers, self.bias_layers)} does not compile: {cost}"
                )
            raise BudgetTooSmall(
                f"even {smallest.text(self.layers, self.bias_layers)} needs {cost.sram} bytes "
                f"of SRAM (arena {cost.arena}, trainable parameters {cost.trainable}, optimizer "
                f"state {cost.state})"
            )
        scheme, frontier = first, 0
        steps = [self.step(scheme)]
        bias_step = 1  # the biases' next growth: m -> m + bias_step
        weights_done = False
        while True:
            candidates: list[tuple[Scheme, int]] = []  # (scheme, new frontier)
            if bias_step and scheme.biases < len(self.bias_layers):
                grown = Scheme(
                    min(scheme.biases + bias_step, len(self.bias_layers)), scheme.weights
                )
                if self.fits(grown):
                    candidates.append((grown, frontier))
                else:
                    bias_step //= 2
            if not weights_done:
                weights = self.grown_weights(scheme, frontier)
                if weights is not None:
                    candidates.append((weights, frontier))
                elif frontier + 1 < len(self.weight_layers):
                    deeper = self.grown_weights(scheme, frontier + 1)
                    if deeper is not None:
                        candidates.append((deeper, frontier + 1))
                    else:
                        weights_done = True
                else:
                    weights_done = True
            if not candidates:
                if bias_step and scheme.biases < len(self.bias_layers):
                    continue  # a smaller step of biases may still fit
                break
            now = self.cost(scheme)
            chosen, frontier = max(candidates, key=lambda c: self.per_byte(now, self.cost(c[0])))
            if chosen.biases > scheme.biases:
                bias_step *= 2  # it fitted: try twice as far next time
            scheme = chosen
            if self.step(scheme).scheme != steps[-1].scheme:
                steps.append(self.step(scheme))
        text = scheme.text(self.layers, self.bias_layers)
        return Suggestion(text, self.cost(scheme), steps, len(self.costs))

    @staticmethod
    def per_byte(now: Cost, then: Cost) -> float:
        """Newly trained values per added byte of SRAM (a step that adds none is the best)."""
        return (then.values - now.values) / max(then.sram - now.sram, 1)

    def step(self, scheme: Scheme) -> Step:
        return Step(scheme.text(self.layers, self.bias_layers), self.cost(scheme))


def suggest_scheme(module: ModuleOp, sram: int, pipeline: str) -> Suggestion:
    """The scheme the search (module docstring) picks for `module` within `sram` bytes, each
    candidate compiled by `pipeline` (from freeze-batchnorm to plan-memory)."""
    layers = layers_of(module)
    names = list(layers)
    bias_layers = [name for name, ops in layers.items() if any(BIAS in op.attributes for op in ops)]
    weight_layers = [
        name
        for name, ops in layers.items()
        if any(BIAS not in op.attributes and op.type.get_num_dims() >= 2 for op in ops)
    ]
    search = Search(module, pipeline, sram, names, bias_layers, weight_layers)
    return search.run()
