"""Named tuples that read cleanly in ``help()`` and the API reference.

A `typing.NamedTuple` declared in a module with ``from __future__ import annotations`` keeps its
fields' annotations as text, and the ``__new__`` it generates shows them as ``ForwardRef('int')``
in its signature (``help(take5.View)``'s first line) and in the class's ``__annotations__``.
:func:`plain_signature` replaces them with the types they name, resolved once in the class's own
module, after the class is defined.
"""

from __future__ import annotations

import sys
import typing
from typing import Any


def plain_signature(cls: type[Any]) -> None:
    """Give the named tuple ``cls``'s ``__new__`` the resolved types of its fields (a field whose
    type does not resolve keeps its text, never a ForwardRef)."""
    module = vars(sys.modules[cls.__module__])
    text: dict[str, Any] = dict(getattr(cls, "__annotations__", {}))
    resolved: dict[str, Any] = {}
    for name, value in text.items():
        source = value.__forward_arg__ if isinstance(value, typing.ForwardRef) else value
        if isinstance(source, str):
            try:
                resolved[name] = eval(source, module)
            except Exception:  # noqa: BLE001 - a name only known to type checkers: keep the text
                resolved[name] = source
        else:
            resolved[name] = source
    cls.__new__.__annotations__ = resolved
    cls.__annotations__ = resolved  # help() lists it among the class's data
