"""What adir's passes and interpreter assume of a module's functions, checked once up front so
that a module that breaks it gets a located error instead of a crash deep inside a pass.

adir registers no branch op (no `cf`, no `scf`), so a function is one straight-line block:
- A second block could never be reached; the passes read `function.body.block`.
- A declaration (no block) has nothing to differentiate, plan or print as C.
- A call cycle (`@f` calls `@g` calls `@f`) has no way to stop: every call runs forever.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from adir.diagnostics import OpError


def check_single_blocks(module: ModuleOp) -> None:
    """Every function has exactly one block, else an error at the declaration or at the second
    block's first op."""
    for function in module.walk():
        if isinstance(function, func.FuncOp) and not function.body.blocks:
            raise OpError(
                function,
                f"@{function.sym_name.data} is a declaration (it has no body); adir compiles "
                "functions with a body",
            )
        if isinstance(function, func.FuncOp) and len(function.body.blocks) > 1:
            second = function.body.blocks[1]
            at = second.first_op or function
            raise OpError(
                at,
                f"@{function.sym_name.data} has {len(function.body.blocks)} blocks; adir's "
                "functions are one block (it has no branch ops, so a second block is "
                "unreachable)",
            )


def check_no_recursion(module: ModuleOp, name: str) -> None:
    """`@name` reaches no call cycle, else an error at the call that closes the cycle."""
    functions = {
        f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp) and f.body.blocks
    }
    finished: set[str] = set()
    path: list[str] = []

    def visit(current: str) -> None:
        # An explicit stack would do too; a chain of distinct calls as deep as Python's
        # recursion limit is not a model anyone writes.
        path.append(current)
        for op in functions[current].walk():
            if not isinstance(op, func.CallOp):
                continue
            callee = op.callee.root_reference.data
            if callee in path:
                cycle = " -> ".join(f"@{n}" for n in [*path[path.index(callee) :], callee])
                raise OpError(
                    op,
                    f"recursive call {cycle}: adir has no control flow to end a recursion, "
                    "so it would never return",
                )
            if callee in functions and callee not in finished:
                visit(callee)
        path.pop()
        finished.add(current)

    if name in functions:
        visit(name)
