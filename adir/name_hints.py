"""Name hints (`%w1`) made from text that may not be a valid SSA name, such as a symbol.

A symbol may be any string (`@"my weight"`, `@"1abc"`), but xDSL accepts only value names
that match `[A-Za-z_$.-][\\w$.-]*` and raises on any other. A hint is only for people reading
the IR (and the C's local names), so an invalid one is repaired instead: every other character
becomes `_`, and a name that cannot start as it does (a digit, a letter outside ASCII) gets a
leading `_` (`my_weight`, `_1abc`).
"""

from __future__ import annotations

import re

_OUTSIDE_NAME = re.compile(r"[^\w$.-]")
_NAME_START = re.compile(r"[A-Za-z_$.-]")


def name_hint_of(text: str) -> str | None:
    """`text` as a valid value name hint, or None for the empty string."""
    name = _OUTSIDE_NAME.sub("_", text)
    if not name:
        return None
    return name if _NAME_START.match(name) else "_" + name
