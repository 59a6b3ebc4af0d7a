"""The referee: plays bots against each other (``referee.match``), in the Docker sandbox
(``referee.sandbox``), in tournaments (``referee.tournament``) kept in
a store (``referee.store``). The command line lives one layer up, in ``arena``.

Old module names: the match and tournament modules used to sit flat in this folder
(``referee.botref``, ``referee.remote``, ``referee.schedule``, ...). Those names still import, as
aliases of the modules' new homes, so code written against them keeps working while it moves over;
the alias is lazy (nothing is imported until the old name is), so it costs no start-up time.
"""

from __future__ import annotations

import importlib
import importlib.machinery  # already loaded by the interpreter: this module must stay cheap
import sys
from types import ModuleType
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from importlib.abc import Loader

#: old module name -> its new home (the same module object is returned under both names)
MOVED: dict[str, str] = {
    "referee.botref": "referee.match.botref",
    "referee.faults": "referee.match.faults",
    "referee.launch": "referee.match.launch",
    "referee.local": "referee.match.local",
    "referee.remote": "referee.match.remote",
    "referee.schedule": "referee.tournament.schedule",
    "referee.executors": "referee.tournament.executors",
}


class _MovedLoader:  # an importlib Loader (duck-typed: importlib.abc costs start-up time)
    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(self.target)
        self._spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        module.__spec__ = self._spec  # the import system set the alias's spec; keep the real one


class _MovedFinder:  # an importlib MetaPathFinder
    def find_spec(self, name: str, path: object = None, target: object = None) -> importlib.machinery.ModuleSpec | None:
        if name not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(name, cast("Loader", _MovedLoader(MOVED[name])))


if not any(isinstance(f, _MovedFinder) for f in sys.meta_path):
    sys.meta_path.insert(0, _MovedFinder())  # before an editable install's finder of the old layout
