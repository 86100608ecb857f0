"""numpy semantics of the adir tensor dialect: the oracle that every pass and the C backend
are checked against.

    from adir.interpreter import Session, run
    (loss,) = run(module, "loss", x, labels)          # one call, fresh parameters
    session = Session(module)                          # parameters persist across calls
    session.call("train_step", x, labels); session.params["w1"]

Built on xDSL's interpreter framework: each op family registers its implementations in the
file of the same name as the dialect's (`elementwise.py`, `reductions.py`, ...). Float tensors
are computed in `float_dtype` (float32 by default; float64 for precise gradient checks).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from adir.interpreter.session import FAMILY_FUNCTIONS, Session, run

__all__ = ["FAMILY_FUNCTIONS", "Session", "run"]


def __getattr__(name: str) -> Any:
    """`Session` and `run` load on first use (PEP 562): xDSL's interpreter framework takes half
    a second to import, and the compiler needs only this package's conversions
    (`arrays`, `initializers`, shared with the C backend), not the interpreter."""
    if name in __all__:
        from adir.interpreter import session

        return getattr(session, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
