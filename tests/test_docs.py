"""The documentation holds (docs/maintainers/docs.md): the README is a front page whose examples
run, every link and every docs/ path cited anywhere leads somewhere, the API reference names what
``take5`` exports, and the SDK's named tuples describe their fields in ``help()``.

The examples run as a reader would run them: Python blocks in a fresh interpreter, in order, in a
scratch folder where the README's bot has been saved as ``mybot/bot.py``; a block of ``>>>`` lines
is a doctest; shell blocks whose commands are all cheap (``referee play``, ``referee verify``,
``take5-harness``) run line by line with the documented exit code 0.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
import os
import pkgutil
import pydoc
import re
import shlex
import subprocess
import sys
import zlib
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

import pytest
from support import ROOT

import take5
import take5.bots
import take5.harness
import take5.record

README = ROOT / "README.md"
DOCS = ROOT / "docs"
#: Pages whose code blocks run: the README and the pages that teach by example.
EXAMPLE_PAGES = [
    README,
    *sorted((DOCS / "authors").glob("*.md")),
    DOCS / "organisers" / "matches.md",
]
#: Every Markdown page whose links are checked.
PAGES = [README, ROOT / "CHANGELOG.md", *sorted(DOCS.rglob("*.md"))]
#: docs/ pages that the docs name before they exist (each has an open issue).
PLANNED = {"docs/operations.md"}

BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.DOTALL | re.MULTILINE)
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def blocks(page: Path, language: str) -> list[str]:
    return [body for lang, body in BLOCK.findall(page.read_text()) if lang == language]


def slug(heading: str) -> str:
    """The anchor a Markdown renderer gives a heading (GitHub's rule: lower case, punctuation
    out)."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = BLOCK.sub("", page.read_text())
    return {slug(m.group(1)) for m in re.finditer(r"^#+ (.+)$", text, re.MULTILINE)}


def rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


# -- the front page
# ---------------------------------------------------------------------------------


def test_the_readme_is_a_front_page() -> None:
    size = len(README.read_bytes())
    assert size <= 12 * 1024, (
        f"README.md is {size} bytes: keep it a front page (what it is, a quick start, links) "
        "and move the detail to the page of its audience in docs/ (docs/README.md lists them)"
    )
    text = README.read_text()
    for needed in ("scripts/test.sh", "scripts/demo.sh", "skips allowed in CI", "docs/README.md"):
        assert needed in text


# -- links and paths
# --------------------------------------------------------------------------------


@pytest.mark.parametrize("page", PAGES, ids=rel)
def test_every_link_leads_somewhere(page: Path) -> None:
    broken = []
    for target in LINK.findall(BLOCK.sub("", page.read_text())):
        if re.match(r"[a-z]+:", target):  # https:, mailto:, file:
            continue
        path, _, anchor = target.partition("#")
        where = (page.parent / path).resolve() if path else page
        if not where.exists():
            broken.append(f"{target}: no such file")
        elif anchor and where.suffix == ".md" and anchor not in anchors(where):
            broken.append(f"{target}: no heading #{anchor} in {rel(where)}")
    assert not broken, f"{rel(page)}: " + "; ".join(broken)


def test_every_docs_path_cited_in_the_tree_exists() -> None:
    """Code, tests, protocol files and pages cite docs by path ("see docs/faults.md"): a page that
    moves must take every citation with it."""
    cited: dict[str, set[str]] = {}
    suffixes = {".py", ".md", ".proto", ".sh", ".js", ".html", ".toml", ".go"}
    skip = {".git", "node_modules", "build", "__pycache__", ".mypy_cache", ".ruff_cache"}
    for path in ROOT.rglob("*"):
        if path.suffix not in suffixes or skip & set(path.relative_to(ROOT).parts):
            continue
        if not path.is_file():
            continue
        for name in re.findall(r"docs/[\w./-]*\w\.md", path.read_text(errors="replace")):
            cited.setdefault(name, set()).add(rel(path))
    missing = {
        name: sorted(where)
        for name, where in cited.items()
        if name not in PLANNED and not (ROOT / name).exists()
    }
    assert not missing, f"cited but missing: {missing}"


# -- the API reference
# ------------------------------------------------------------------------------


def test_the_api_reference_lists_what_take5_exports() -> None:
    """docs/api/take5.rst groups take5's names by hand: it must name each of __all__, and only those
    (take5.bots, take5.harness and take5.record are documented from their own __all__)."""
    text = (DOCS / "api" / "take5.rst").read_text()
    listed = set(re.findall(r"^\.\. auto\w+:: take5\.(\w+)$", text, re.MULTILINE))
    exported = set(take5.__all__) - {"__version__"}
    assert listed - exported == set(), "named in docs/api/take5.rst but not exported"
    assert exported - listed == set(), "exported by take5 but missing from docs/api/take5.rst"


def _public_modules() -> list[ModuleType]:
    """The SDK's public modules: ``take5`` and each of its modules that declares ``__all__``
    (``take5.v1``, generated from the .proto, and ``_private`` modules excepted): a new module with
    an ``__all__`` is checked without being listed here."""
    found = [take5]
    for info in pkgutil.walk_packages(take5.__path__, "take5."):
        parts = info.name.split(".")
        if parts[1] == "v1" or any(p.startswith("_") for p in parts):
            continue
        module = importlib.import_module(info.name)
        if hasattr(module, "__all__"):
            found.append(module)
    return found


def _inventory(out: Path) -> set[str]:
    """The Python objects a built reference documents, from its objects.inv (four header lines,
    then zlib: ``name domain:role priority uri dispname`` a line)."""
    header, _, packed = (out / "objects.inv").read_bytes().partition(b"zlib.\n")
    assert b"Sphinx inventory version 2" in header
    lines = zlib.decompress(packed).decode().splitlines()
    return {line.split(" ", 1)[0] for line in lines if " py:" in line}


def test_the_api_reference_covers_every_public_name(tmp_path: Path) -> None:
    """scripts/docs.sh's build (warnings are errors) documents every name of every public module's
    ``__all__``: under that module, or once where it is defined (a class or function a package
    re-exports, a name ``take5`` exports, a constant another public module documents)."""
    if importlib.util.find_spec("sphinx") is None:
        pytest.skip("Sphinx is not installed (the test extra installs it)")
    out = tmp_path / "docs"
    build = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html"]
        + ["-d", str(out / ".doctrees"), str(DOCS / "api"), str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert build.returncode == 0, build.stderr[-3000:]
    documented = _inventory(out)
    modules = _public_modules()
    missing = []
    for module in modules:
        for name in module.__all__:
            obj = getattr(module, name)
            homes = [f"{module.__name__}.{name}"]
            if getattr(take5, name, None) is obj:
                homes.append(f"take5.{name}")
            if inspect.isclass(obj) or inspect.isfunction(obj):
                homes.append(f"{obj.__module__}.{obj.__qualname__}")
            homes += [f"{m.__name__}.{name}" for m in modules if getattr(m, name, None) is obj]
            if name != "__version__" and not documented & set(homes):
                missing.append(f"{module.__name__}.{name}")
    assert not missing, f"public names missing from the API reference (docs/api/): {missing}"
    assert {"take5.sim", "take5.batch", "take5.encode", "take5.vector", "take5.env"} <= {
        m.__name__ for m in modules
    }


def test_help_of_the_named_tuples_shows_their_types() -> None:
    """``help(take5.View)`` starts with a signature a reader can read: the fields' types, not
    ``ForwardRef('int')`` (the SDK's modules use postponed annotations)."""
    import take5.sim
    import take5.vector

    for cls in (*_named_tuples(), take5.sim.Table, take5.vector.Step):
        page = pydoc.render_doc(cls, renderer=pydoc.plaintext)
        assert "ForwardRef" not in page, cls.__name__
    view = pydoc.render_doc(take5.View, renderer=pydoc.plaintext)
    assert "View(seat: int, settings: take5.game.Settings," in view


def _named_tuples() -> list[type[tuple[Any, ...]]]:
    found = {}
    for module in (take5, take5.bots, take5.harness, take5.record):
        for name in module.__all__:
            value = getattr(module, name)
            if isinstance(value, type) and issubclass(value, tuple) and hasattr(value, "_fields"):
                found[value.__qualname__] = value
    return list(found.values())


@pytest.mark.parametrize("cls", _named_tuples(), ids=lambda cls: cls.__name__)
def test_named_tuple_fields_say_what_they_hold(cls: type[tuple[Any, ...]]) -> None:
    page = pydoc.render_doc(cls, renderer=pydoc.plaintext)
    assert "Alias for field number" not in page
    for field in cls._fields:  # type: ignore[attr-defined]
        doc = getattr(cls, field).__doc__ or ""
        assert doc and not doc.startswith("Alias for field number"), f"{cls.__name__}.{field}"
        assert doc.split("\n")[0][:40] in page


def test_the_view_is_covered() -> None:
    assert {take5.View, take5.Play, take5.RowTake} <= set(_named_tuples())
    assert "Your hand, ascending" in pydoc.render_doc(take5.View, renderer=pydoc.plaintext)


# -- the examples run
# -------------------------------------------------------------------------------

RUNNER = r"""
import doctest, json, sys
blocks = json.load(sys.stdin)
namespace = {"__name__": "__readme__"}
for number, source in enumerate(blocks, 1):
    if source.lstrip().startswith(">>>"):
        test = doctest.DocTestParser().get_doctest(source, namespace, f"block {number}", None, 0)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
        runner.run(test, out=sys.stderr.write)
        if runner.failures:
            sys.exit(f"block {number}: {runner.failures} example(s) failed")
        namespace.update(test.globs)
    else:
        exec(compile(source, f"block {number}", "exec"), namespace)
"""


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT), str(ROOT / "sdk"), *filter(None, [env.get("PYTHONPATH")])]
    )
    return env


def _lay_out_the_readme_bot(where: Path) -> None:
    """`mybot/bot.py` as the README's "Write a bot" tells a reader to save it."""
    bot = next(b for b in blocks(README, "python") if "run(MyBot())" in b)
    (where / "mybot").mkdir(exist_ok=True)
    (where / "mybot" / "bot.py").write_text(bot)


@pytest.mark.parametrize("page", [p for p in EXAMPLE_PAGES if blocks(p, "python")], ids=rel)
def test_the_python_examples_run(page: Path, tmp_path: Path) -> None:
    _lay_out_the_readme_bot(tmp_path)
    run = subprocess.run(
        [sys.executable, "-c", RUNNER],
        input=json.dumps(blocks(page, "python")),
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env=_env(),
    )
    assert run.returncode == 0, f"{rel(page)}:\n{run.stdout}\n{run.stderr}"


class Command(NamedTuple):
    line: str
    argv: list[str]


#: Commands cheap enough to run from the docs, and how to run them from this checkout.
CHEAP = {
    ("referee", "play"): [sys.executable, "-m", "take5_arena", "play"],
    ("referee", "verify"): [sys.executable, "-m", "take5_arena", "verify"],
    ("take5-harness",): [sys.executable, "-m", "take5.harness_entry"],
}


def _cheap(line: str) -> Command | None:
    words = shlex.split(line, comments=True)
    for prefix, argv in CHEAP.items():
        if tuple(words[: len(prefix)]) == prefix:
            return Command(line, argv + words[len(prefix) :])
    return None


def _shell_blocks() -> list[tuple[str, list[Command]]]:
    found = []
    for page in EXAMPLE_PAGES:
        for number, body in enumerate(blocks(page, "bash"), 1):
            lines = [line for line in body.splitlines() if line.strip()]
            commands = [_cheap(line) for line in lines]
            if lines and all(commands):
                found.append((f"{rel(page)}, shell block {number}", commands))
    return found


@pytest.mark.slow
@pytest.mark.parametrize("name, commands", _shell_blocks(), ids=[n for n, _ in _shell_blocks()])
def test_the_cheap_shell_examples_run(name: str, commands: list[Command], tmp_path: Path) -> None:
    _lay_out_the_readme_bot(tmp_path)
    for command in commands:
        run = subprocess.run(
            command.argv,
            capture_output=True,
            text=True,
            timeout=300,
            cwd=tmp_path,
            env=_env(),
            stdin=subprocess.DEVNULL,
        )
        assert run.returncode == 0, f"{name}: {command.line}\n{run.stdout[-2000:]}\n{run.stderr}"


def test_the_readme_runs_some_shell_examples() -> None:
    """The quick start's own commands are among those that run."""
    lines = [c.line for name, commands in _shell_blocks() for c in commands if "README" in name]
    assert any("take5-harness mybot" in line for line in lines)
    assert any(line.startswith("referee play") for line in lines)
    assert any(line.startswith("referee verify") for line in lines)
