"""Sphinx configuration of the SDK's API reference (scripts/docs.sh builds it, warnings as errors).

Only the reference is built here: the guides in docs/ are Markdown read where the code is (the
forge, a clone), and tests/test_docs.py checks their links. Why Sphinx: docs/maintainers/docs.md.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "sdk"))  # document the tree's SDK, whatever is installed

from sphinx.application import Sphinx  # noqa: E402
from sphinx.pycode import ModuleAnalyzer  # noqa: E402
from sphinx.util import logging  # noqa: E402

import take5  # noqa: E402

project = "take5"
release = version = take5.__version__
copyright = "take5 arena authors"

extensions = ["sphinx.ext.autodoc", "sphinx.ext.viewcode"]

# The SDK's docstrings are reST prose: `name` in single backquotes names code and becomes a
# cross-reference where the name is documented here (plain code otherwise), ``x`` is literal.
# Types come from the annotations, so docstrings need no parameter sections (no napoleon).
default_role = "py:obj"
autodoc_default_options = {"members": True, "member-order": "bysource"}
autodoc_typehints = "signature"
autodoc_preserve_defaults = True
# A bundled bot overrides `Bot.name` and `pick_card`; repeating the base class's words there says
# nothing about that bot.
autodoc_inherit_docstrings = False
add_module_names = False
python_use_unqualified_type_names = True

html_theme = "alabaster"
html_theme_options = {"description": "Write bots for take5 arena"}
html_title = f"take5 {release}: API reference"
html_show_sourcelink = False
exclude_patterns = ["_build"]

#: Where the constants that ``take5`` re-exports are defined and documented.
_CONSTANT_HOMES = ("take5.rules", "take5.convert", "take5.game", "take5.bot")
_log = logging.getLogger(__name__)


def _constant_docs(
    app: Sphinx, what: str, name: str, obj: Any, options: Any, lines: list[str]
) -> None:
    """A constant re-exported by ``take5`` shows the docstring written where it is defined.

    Sphinx reads a constant's docstring from the source of the module it documents, and
    ``take5/__init__.py`` only imports them; without this hook ``take5.CARD_COUNT`` would show
    int's own docstring. A public constant with no docstring at its home is a warning (an error
    under scripts/docs.sh)."""
    if what != "data" or not name.startswith("take5.") or name.count(".") != 1:
        return
    attr = name.rsplit(".", 1)[1]
    for home in _CONSTANT_HOMES:
        docs = ModuleAnalyzer.for_module(home).find_attr_docs()
        if ("", attr) in docs:
            lines[:] = list(docs[("", attr)])
            return
    lines[:] = []
    _log.warning("%s has no docstring where it is defined (%s)", name, ", ".join(_CONSTANT_HOMES))


def _documented_with_take5(
    app: Sphinx, what: str, name: str, obj: Any, skip: bool, options: Any
) -> bool | None:
    """A module's member that ``take5`` exports is documented once, with ``take5`` (take5.rst):
    the module pages (``take5.game``, ``take5.bot``, ...) skip it instead of repeating it."""
    if (
        what == "module"
        and not isinstance(obj, (int, float, str))  # constants: equal values, not the same name
        and any(getattr(take5, n, None) is obj for n in take5.__all__)
    ):
        return True
    return None


def setup(app: Sphinx) -> None:
    app.connect("autodoc-process-docstring", _constant_docs)
    app.connect("autodoc-skip-member", _documented_with_take5)
