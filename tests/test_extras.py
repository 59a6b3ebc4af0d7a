"""Extras, as Starlette and httpx have them: the base install plays local matches and tournaments,
rates them and verifies records; ``[docker]``, ``[web]``, ``[metrics]``, ``[dask]``, ``[postgres]``
and ``[rl]`` add
the rest (pyproject.toml, take5_arena/errors.py's EXTRAS).

Each check runs in a fresh interpreter whose import system refuses the modules of the extras taken
away (a meta path finder ahead of every other), as if they were not installed: a venv per extra
would say the same in minutes, this says it in seconds.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from support import EXAMPLES, ROOT

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from take5_arena.errors import EXTRAS, MISSING_EXTRA_EXIT, MissingExtraError, missing_extra

#: extra -> what it installs that the platform imports (dask's extra also brings prometheus_client,
#: for a worker's own figures on its /metrics page)
INSTALLS = {**EXTRAS, "dask": EXTRAS["dask"] + EXTRAS["metrics"]}
#: extra -> the public entry points that need it
ENTRY_POINTS = {
    "docker": ["take5_arena.referee.sandbox.launcher", "take5_arena.cli.build"],
    "web": ["take5_arena.web.server", "take5_arena.web.app"],
    "metrics": ["take5_arena.service.metrics"],
    "dask": ["take5_arena.referee.tournament.run.workers"],
    "postgres": ["take5_arena.referee.store.postgres"],
    "rl": ["take5.env"],
}
#: the subcommands that need an extra to load at all; every other one loads with none
COMMAND_NEEDS = {"build": "docker"}

_BLOCKER = """
import importlib.abc, sys
_BLOCKED = {blocked!r}
class _NotInstalled(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in _BLOCKED:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None
sys.meta_path.insert(0, _NotInstalled())
"""


def without(blocked: set[str], code: str) -> subprocess.CompletedProcess[str]:
    """``code`` in a fresh interpreter where the top-level modules ``blocked`` are not found."""
    return subprocess.run(
        [sys.executable, "-c", _BLOCKER.format(blocked=sorted(blocked)) + code],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )


def every_extra() -> set[str]:
    return {m for tops in INSTALLS.values() for m in tops}


def test_the_extras_are_the_ones_pyproject_declares():
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = set(declared["optional-dependencies"]) - {"test"}
    assert extras == set(EXTRAS) == set(ENTRY_POINTS)
    base = " ".join(declared["dependencies"]).lower()
    for extra, tops in INSTALLS.items():
        for top in tops:
            assert top.replace("_", "-") not in base.replace("_", "-"), (extra, top)


def test_the_blocker_blocks():
    done = without({"docker"}, "import docker")
    assert done.returncode == 1 and "ModuleNotFoundError" in done.stderr


def test_every_command_but_build_loads_with_no_extra_installed():
    code = (
        "import importlib\n"
        "from take5_arena.cli.main import COMMANDS\n"
        "for name, sub in sorted(COMMANDS.items()):\n"
        "    try:\n"
        "        importlib.import_module(sub.target.partition(':')[0])\n"
        "    except ModuleNotFoundError as error:\n"
        "        print(name, error.name)\n"
    )
    done = without(every_extra(), code)
    assert done.returncode == 0, done.stderr
    failed = dict(line.split() for line in done.stdout.splitlines())
    assert failed.keys() == COMMAND_NEEDS.keys(), failed
    for name, module in failed.items():
        error = missing_extra(ModuleNotFoundError(name=module))
        assert error is not None and error.extra == COMMAND_NEEDS[name]


@pytest.mark.parametrize("extra", sorted(ENTRY_POINTS))
def test_each_entry_point_loads_with_only_its_extra(extra):
    blocked = every_extra() - set(INSTALLS[extra])
    code = "\n".join(f"import {module}" for module in ENTRY_POINTS[extra])
    done = without(blocked, code)
    assert done.returncode == 0, done.stderr


def test_a_postgresql_store_without_its_extra_is_one_line_and_exit_4(tmp_path):
    """`--store postgresql://...` without psycopg: the extra named, exit 4, no traceback."""
    code = (
        "from take5_arena.cli.main import main\n"
        f"main(['submit', {str(EXAMPLES / 'random')!r}, '--name', 'r', '-t', "
        f"{str(tmp_path / 't')!r}, '--sandbox', 'local', '--store', 'postgresql:///x'],"
        " prog_name='referee')\n"
    )
    done = without({"psycopg"}, code)
    assert done.returncode == MISSING_EXTRA_EXIT, done.stderr
    assert "pip install 'take5-arena[postgres]'" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_base_plays_a_local_tournament_and_verifies_its_records(tmp_path):
    code = (
        "import sys\n"
        "from take5_arena.cli.main import main\n"
        "from take5_arena.referee.tournament import submit\n"
        f"for name in ('random', 'lowest'):\n"
        f"    submit({str(tmp_path)!r}, {str(EXAMPLES)!r} + '/' + name, name, sandbox='local')\n"
        "for args in (['tournament', 'run', '-t', sys.argv[1], '-n', '2', '-g', '2', "
        "'--sandbox', 'local'], ['verify', '--tournament', sys.argv[1]]):\n"
        "    try:\n"
        "        main(args, prog_name='referee')\n"
        "    except SystemExit as done:\n"
        "        assert done.code == 0, (args, done.code)\n"
    )
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            _BLOCKER.format(blocked=sorted(every_extra())) + code,
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["match", str(EXAMPLES / "lowest"), str(EXAMPLES / "random"), "--sandbox", "docker"],
        ["submit", str(EXAMPLES / "lowest"), "--name", "lowest", "-t", "{tmp}"],
        ["build", str(EXAMPLES / "lowest")],
    ],
    ids=["match", "submit", "build"],
)
def test_a_missing_extra_is_one_line_naming_it(args, tmp_path):
    """Whatever imports it, a module of an extra that is not installed ends the command with one
    line that names the extra and how to install it, and exit status 4: never a traceback."""
    args = [a.replace("{tmp}", str(tmp_path / "t")) for a in args]
    code = f"from take5_arena.cli.main import main\nmain({args!r}, prog_name='referee')\n"
    done = without(set(EXTRAS["docker"]), code)
    assert done.returncode == MISSING_EXTRA_EXIT, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines == ["referee: " + str(MissingExtraError("docker", "docker"))], done.stderr


def test_a_docker_tournament_without_the_docker_extra_stops_before_it_plays(tmp_path):
    from take5_arena.referee.tournament import submit

    for name in ("random", "lowest"):
        submit(tmp_path, EXAMPLES / name, name, sandbox="local")
    args = ["tournament", "run", "-t", str(tmp_path), "-n", "2", "-g", "2", "--sandbox", "docker"]
    code = f"from take5_arena.cli.main import main\nmain({args!r}, prog_name='referee')\n"
    done = without(set(EXTRAS["docker"]), code)
    assert done.returncode == MISSING_EXTRA_EXIT, done.stdout + done.stderr
    assert "take5-arena[docker]" in done.stderr and "Traceback" not in done.stderr


# -- the SDK: take5 checks records with the standard library alone ---------------------------------

#: the SDK's extras -> the top-level modules they install (sdk/take5/extras.py)
SDK_EXTRAS = {
    "bot": {"grpc", "google"},
    "sim": {"numpy"},
    "rl": {"numpy", "pettingzoo", "gymnasium"},
}
NO_SDK_EXTRA = set().union(*SDK_EXTRAS.values())


def test_the_sdk_plays_and_checks_a_record_with_no_extra():
    code = (
        "import json, take5, take5.record, take5.audit\n"
        "game = take5.play_game([take5.RandomPlayer(1), take5.RandomPlayer(2)], seed=7)\n"
        "record = json.loads(json.dumps(game.record(game_id='g')))\n"
        "assert take5.record.verify_record(record) is None\n"
        "assert take5.audit.audit_record(record) is None\n"
    )
    done = without(NO_SDK_EXTRA, code)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(
    "extra, code",
    [
        ("bot", "import take5; take5.Bot"),
        ("bot", "import take5.harness"),
        ("sim", "import take5.batch"),
        ("sim", "import take5.encode"),
        ("rl", "import take5.env"),
    ],
)
def test_an_sdk_module_without_its_extra_names_it(extra, code):
    done = without(NO_SDK_EXTRA, code)
    assert done.returncode == 1
    assert f"needs the SDK's [{extra}] extra" in done.stderr
    assert f"pip install 'take5[{extra}]'" in done.stderr


def test_the_harness_without_the_bot_extra_is_one_line():
    done = without(
        SDK_EXTRAS["bot"], "from take5.harness_entry import main\nraise SystemExit(main())\n"
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "take5-harness: " in done.stderr
    assert "[bot]" in done.stderr


def test_the_platform_depends_on_its_own_sdk_and_ships_none_of_it():
    """After ``pip uninstall take5`` pip reports take5-arena broken, rather than an arena whose
    ``import take5`` fails: the wheel depends on the SDK at the one version of both."""
    import take5

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    needs = [d for d in project["project"]["dependencies"] if d.startswith("take5")]
    assert needs == [f"take5[bot,sim]=={take5.__version__}"]
    packages = project["tool"]["setuptools"]["packages"]
    assert [p for p in packages if not p.startswith("take5_arena")] == []
    sdk = tomllib.loads((ROOT / "sdk" / "pyproject.toml").read_text())["project"]
    assert sdk["dependencies"] == []
    assert set(sdk["optional-dependencies"]) == set(SDK_EXTRAS)
