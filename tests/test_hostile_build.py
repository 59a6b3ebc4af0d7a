"""Hostile bot folders against the image builder (take5_arena/referee/sandbox/images.py), on the
real engine.

Each test is an attack a bot author could make at build time, written before the defence:
requirements that make pip build a local package on the host (its build backend writes a marker
file: it must never exist), symlinks to host files, Dockerfiles that reach the host's loopback
(ADD of a URL, FROM or COPY --from a loopback registry, RUN steps), VOLUME declarations, a
folder of 100,000 files, a build that never ends. Each must be refused with a clear message, leak
no host content, and leave nothing behind (containers and intermediate images are found by a
label the hostile Dockerfiles carry).

Network probes only target a listener this test opens on 127.0.0.1. Without an engine the docker
tests skip with the reason (with CI set they fail); the folder and requirement checks run anyway.
"""

from __future__ import annotations

import io
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tarfile
import threading
import time
from pathlib import Path

import docker
import pytest
from docker_images import client_with_base_images
from support import EXAMPLES, ROOT, referee

from take5_arena.referee.sandbox import context, dockerfile, requirements
from take5_arena.referee.sandbox.build_errors import (
    BuildFailedError,
    BuildRefusedError,
    BuildTimeoutError,
    ImageBuildError,
)

TOKEN = secrets.token_hex(4)
MARK = f"t5hostile.{TOKEN}"  # a label on the hostile Dockerfiles' steps: finds what they leave


@pytest.fixture(scope="module")
def client():
    c = client_with_base_images(timeout=120)
    yield c
    leftovers = c.containers.list(all=True, filters={"label": MARK})
    images = c.images.list(all=True, filters={"label": MARK})
    for img in images:
        try:
            c.images.remove(img.id, force=True)
        except docker.errors.APIError:
            pass
    assert not leftovers, f"build containers left behind: {[x.name for x in leftovers]}"
    c.close()


@pytest.fixture
def build(client):
    """build_image on this engine; removes the images the test made."""
    from take5_arena.referee.sandbox.images import build_image

    made: list[str] = []

    def run(folder: Path, **kwargs):
        info = build_image(folder, docker=client, **kwargs)
        made.append(info.tag)
        return info

    yield run
    for tag in made:
        try:
            client.images.remove(tag, force=True)
        except Exception:
            pass


class Listener:
    """A TCP listener on the host's loopback that counts connections (SSRF probes)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.hits = 0
        self._stop = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.hits += 1
            conn.close()

    def close(self) -> None:
        self._stop = True
        self.thread.join()
        self.sock.close()


@pytest.fixture
def listener():
    lis = Listener()
    yield lis
    lis.close()


def python_bot(tmp_path: Path, name: str = "bot") -> Path:
    bot = tmp_path / name
    shutil.copytree(EXAMPLES / "lowest", bot)
    (bot / "nonce.txt").write_text(TOKEN + secrets.token_hex(4))
    return bot


def dockerfile_bot(tmp_path: Path, text: str, name: str = "dfbot") -> Path:
    bot = tmp_path / name
    bot.mkdir()
    (bot / "bot.py").write_text("print('hello')\n")
    (bot / "Dockerfile").write_text(text)
    return bot


# -- 1. requirements: nothing of the bot is built or run on the host -------------------------------


def hostile_package(where: Path, marker: Path) -> Path:
    """A local package whose in-tree build backend writes `marker` when imported (= built)."""
    pkg = where / "evilpkg"
    pkg.mkdir(parents=True)
    (pkg / "pyproject.toml").write_text(
        '[build-system]\nrequires = []\nbuild-backend = "evilbackend"\nbackend-path = ["."]\n'
        '[project]\nname = "evilpkg"\nversion = "1.0"\n'
    )
    (pkg / "evilbackend.py").write_text(
        f"open({str(marker)!r}, 'w').write('built on the host')\n"
        "def build_wheel(*a, **k): raise SystemExit(1)\n"
        "def build_sdist(*a, **k): raise SystemExit(1)\n"
    )
    return pkg


HOSTILE_REQUIREMENTS = [
    "./evilpkg",
    "evilpkg/",
    "{pkg}",
    "file://{pkg}",
    "evilpkg @ file://{pkg}",
    "-e ./evilpkg",
    "-e {pkg}",
    "--editable=./evilpkg",
    "--index-url http://127.0.0.1:{port}/simple",
    "--extra-index-url http://127.0.0.1:{port}/simple",
    "-i http://127.0.0.1:{port}/simple",
    "-f ./dist",
    "--find-links=./dist",
    "git+file://{pkg}",
    "evilpkg @ git+https://127.0.0.1:{port}/e.git",
    "evilpkg-1.0.tar.gz",
    "./dist/evilpkg-1.0.tar.gz",
    "http://127.0.0.1:{port}/evilpkg-1.0.tar.gz",
    "-r other.txt",
    "-c other.txt",
    "--trusted-host 127.0.0.1",
    "numpy \\",
    "~/evilpkg",
    "evilpkg @ http://127.0.0.1:{port}/evilpkg-1.0-py3-none-any.whl",
    "evilpkg.whl",
    "evilpkg.zip",
]


@pytest.mark.parametrize("line", HOSTILE_REQUIREMENTS)
def test_requirement_lines_that_could_build_on_the_host_are_refused(line, tmp_path):
    text = line.format(pkg=tmp_path / "evilpkg", port=9)
    with pytest.raises(BuildRefusedError) as err:
        requirements.parse_requirements(f"grpcio\n{text}\n")
    assert "requirements.txt line 2" in str(err.value)


def test_plain_requirements_are_reserialised():
    reqs = requirements.parse_requirements(
        "# comment\nnumpy>=1.24\n  scipy[extra] ==1.11 ; python_version >= '3.10'  # why\n\nsix\n"
    )
    assert [str(r) for r in reqs] == [
        "numpy>=1.24",
        'scipy[extra]==1.11; python_version >= "3.10"',
        "six",
    ]
    cmd = requirements.pip_command(reqs, Path("/t"), python_version="3.11")
    assert "--only-binary=:all:" in cmd and cmd[cmd.index("--") + 1 :] == [str(r) for r in reqs]


@pytest.mark.docker
@pytest.mark.parametrize(
    "line",
    [
        "./evilpkg",
        "file://{pkg}",
        "evilpkg @ file://{pkg}",
        "-e ./evilpkg",
        "--index-url http://127.0.0.1:{port}/simple",
        "git+file://{pkg}",
    ],
)
def test_hostile_requirements_never_build_the_package(line, build, tmp_path, listener):
    bot = python_bot(tmp_path)
    marker = tmp_path / "MARKER"
    hostile_package(bot, marker)
    (bot / "requirements.txt").write_text(
        line.format(pkg=bot / "evilpkg", port=listener.port) + "\n"
    )
    with pytest.raises(BuildRefusedError):
        build(bot)
    assert not marker.exists(), "the bot's build backend ran on the host"
    assert listener.hits == 0


@pytest.mark.docker
def test_a_plain_name_never_builds_an_sdist_or_a_folder_of_that_name(build, tmp_path):
    """`evilpkg` is a plain name; the index (the operator's --find-links here) only has an sdist,
    and the bot folder a directory of that name: pip refuses both (wheels only, empty cwd)."""
    bot = python_bot(tmp_path)
    marker = tmp_path / "MARKER"
    hostile_package(bot, marker)
    index = tmp_path / "index"
    index.mkdir()
    src = hostile_package(tmp_path / "sdist-src", marker)
    with tarfile.open(index / "evilpkg-1.0.tar.gz", "w:gz") as tar:
        tar.add(src, arcname="evilpkg-1.0")
    (bot / "requirements.txt").write_text("evilpkg\n")
    with pytest.raises(BuildFailedError) as err:
        build(bot, pip_args=["--no-index", "--find-links", str(index)])
    assert "evilpkg" in err.value.output
    assert not marker.exists(), "the bot's build backend ran on the host"


# -- 2. symlinks: never followed, outside ones refused, no host content anywhere -------------------


@pytest.fixture
def secret(tmp_path):
    path = tmp_path / "host-secret.txt"
    path.write_text(f"HOST-SECRET-{TOKEN}\n")
    return path


@pytest.mark.parametrize(
    "link", ["secret.txt", "requirements.txt", "Dockerfile", "bot.toml", "lib/deep/x.py"]
)
def test_symlink_to_a_host_file_is_refused_by_name(link, tmp_path, secret):
    bot = python_bot(tmp_path)
    (bot / link).parent.mkdir(parents=True, exist_ok=True)
    (bot / link).symlink_to(secret)
    with pytest.raises(BuildRefusedError) as err:
        context.scan(bot)
    assert repr(link) in str(err.value) and "outside" in str(err.value)
    assert secret.read_text().strip() not in str(err.value)


def test_relative_escapes_are_refused_and_inside_links_kept(tmp_path, secret):
    bot = python_bot(tmp_path)
    (bot / "d").symlink_to(".")
    (bot / "up").symlink_to(f"d/d/../{secret.name}")  # d/d is the folder itself: .. leaves it
    with pytest.raises(BuildRefusedError, match="'up'"):
        context.scan(bot)
    (bot / "up").unlink()
    (bot / "lib").mkdir()
    (bot / "lib" / "real.py").write_text("X = 1\n")
    (bot / "bin").mkdir()
    (bot / "bin" / "tool").symlink_to("../lib/real.py")  # like node_modules/.bin
    with context.ContextWriter() as ctx:
        ctx.add_folder(context.scan(bot), "bot")
        with tarfile.open(fileobj=ctx.fileobj()) as tar:
            member = tar.getmember("bot/bin/tool")
        assert member.issym() and member.linkname == "../lib/real.py"


def test_links_in_ignored_folders_never_reach_the_context(tmp_path, secret):
    bot = python_bot(tmp_path)
    (bot / "__pycache__").mkdir()
    (bot / "__pycache__" / "bot.cpython-311.pyc").symlink_to(secret)
    (bot / ".git").mkdir()
    (bot / ".git" / "config").symlink_to(secret)
    with context.ContextWriter() as ctx:
        ctx.add_folder(context.scan(bot), "bot")
        data = ctx.fileobj().read()
    assert b"HOST-SECRET" not in data and b"__pycache__" not in data


def test_a_file_swapped_for_a_symlink_after_the_scan_is_refused(tmp_path, secret):
    bot = python_bot(tmp_path)
    folder = context.scan(bot)
    (bot / "bot.py").unlink()
    (bot / "bot.py").symlink_to(secret)
    with context.ContextWriter() as ctx, pytest.raises(BuildRefusedError, match="changed"):
        ctx.add_folder(folder, "bot")


def test_a_folder_swapped_for_a_symlink_after_the_scan_is_refused(tmp_path, secret):
    bot = python_bot(tmp_path)
    folder = context.scan(bot)
    bot.rename(tmp_path / "moved")
    bot.symlink_to(secret.parent)
    with context.ContextWriter() as ctx, pytest.raises(BuildRefusedError, match="changed"):
        ctx.add_folder(folder, "bot")


def test_fifos_are_refused_not_read(tmp_path):
    bot = python_bot(tmp_path)
    os.mkfifo(bot / "pipe")
    with pytest.raises(BuildRefusedError, match="'pipe'"):
        context.scan(bot)


@pytest.mark.docker
def test_symlinked_control_files_are_refused_by_the_builder(build, tmp_path, secret):
    for name in ("requirements.txt", "Dockerfile"):
        bot = python_bot(tmp_path, f"bot-{name}")
        (bot / name).symlink_to(secret)
        with pytest.raises(BuildRefusedError) as err:
            build(bot)
        assert name in str(err.value) and "HOST-SECRET" not in str(err.value) + err.value.output


@pytest.mark.docker
def test_a_match_with_a_linking_bot_rejects_it_and_leaks_nothing(client, tmp_path, secret):
    """Through the command line as an operator runs it: the bot is rejected before play (exit 3)
    with the link's name; the secret is in no output and no record."""
    bot = python_bot(tmp_path, "linker")
    (bot / "requirements.txt").symlink_to(secret)
    records = tmp_path / "records"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "take5_arena",
            "match",
            "--sandbox",
            "docker",
            str(bot),
            str(EXAMPLES / "random"),
            "--records",
            str(records),
            "--json",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env={**os.environ, "TAKE5_RUN_PREFIX": f"pytest-{TOKEN}"},
    )
    assert proc.returncode == 3, proc.stderr[-2000:]
    assert "requirements.txt" in proc.stderr and "symlink" in proc.stderr
    everything = proc.stdout + proc.stderr
    for path in records.rglob("*"):
        if path.is_file():
            everything += path.read_text(errors="replace")
    assert "HOST-SECRET" not in everything


# -- 7. limits, checked before any copy ------------------------------------------------------------


@pytest.mark.docker
def test_a_folder_of_100000_files_is_refused_before_copying(build, tmp_path):
    bot = python_bot(tmp_path)
    many = bot / "many"
    many.mkdir()
    for i in range(100_000):
        (many / f"f{i:06d}").touch()
    with pytest.raises(BuildRefusedError) as err:
        build(bot)
    message = str(err.value)
    assert (
        "too many files" in message
        and "more than 10,000" in message
        and "limit is 10,000" in message
    )


@pytest.mark.parametrize("depth", [100_000, 5_000])
def test_a_deeply_nested_bot_toml_is_one_line_refusal(depth, tmp_path):
    """``a = [[[[...]]]]`` nested 100,000 deep (200 KB: past the manifest's size cap) and 5,000
    deep (small, but past the TOML parser's recursion): `referee build` refuses either in one line,
    no traceback."""
    bot = tmp_path / "deep"
    bot.mkdir()
    (bot / "bot.toml").write_text('runtime = "python"\na = ' + "[" * depth + "]" * depth + "\n")
    done = referee("build", str(bot), timeout=120)
    assert done.returncode == 3, done
    assert "Traceback" not in done.stderr + done.stdout, done.stderr[-2000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "bot.toml" in lines[0], done.stderr[-2000:]
    assert ("nested too deeply" if depth < 10_000 else "at most 65,536") in lines[0]


@pytest.mark.parametrize(
    ("limits", "make", "expect"),
    [
        (
            context.FolderLimits(max_bytes=1000),
            lambda b: (b / "big").write_bytes(b"x" * 2000),
            "too large: more than",
        ),
        (context.FolderLimits(max_path=40), lambda b: (b / ("n" * 50)).touch(), "path too long"),
        (
            context.FolderLimits(max_depth=3),
            lambda b: (b / "a/b/c/d/e").mkdir(parents=True),
            "nested too deep",
        ),
        (
            context.FolderLimits(max_files=5),
            lambda b: [(b / f"f{i}").touch() for i in range(9)],
            "too many files",
        ),
    ],
)
def test_each_limit_names_itself_the_figure_and_the_limit(limits, make, expect, tmp_path):
    bot = python_bot(tmp_path)
    make(bot)
    with pytest.raises(BuildRefusedError) as err:
        context.scan(bot, limits)
    assert expect in str(err.value) and "the limit is" in str(err.value)


# -- 3. Dockerfile bots: no network, allowed bases only, no ADD, no VOLUME -------------------------


@pytest.mark.parametrize(
    ("text", "expect"),
    [
        ("FROM 127.0.0.1:{port}/evil:latest\n", "is not allowed"),
        ("FROM python:3.11-slim\n", "is not allowed"),
        ("ARG B=127.0.0.1:{port}/evil\nFROM $B\n", "is not allowed"),
        ("FROM --platform=linux/arm64 take5/python:3.11\n", "--platform"),
        ("# syntax=127.0.0.1:{port}/frontend\nFROM take5/python:3.11\n", "parser directive"),
        ("# escape=`\nFROM take5/python:3.11\n", "parser directive"),
        ("FROM take5/python:3.11\nADD http://127.0.0.1:{port}/x /x\n", "ADD is refused"),
        ("FROM take5/python:3.11\nadd \\\n  http://127.0.0.1:{port}/x /x\n", "ADD is refused"),
        ("FROM take5/python:3.11\nADD bot.py /bot/\n", "ADD is refused"),
        (
            "FROM take5/python:3.11\nCOPY --from=127.0.0.1:{port}/evil /x /x\n",
            "only an earlier stage",
        ),
        ("FROM take5/python:3.11\nVOLUME /data\n", "VOLUME is refused"),
        ('FROM take5/python:3.11\nVOLUME ["/data"]\n', "VOLUME is refused"),
        ("FROM take5/python:3.11\nONBUILD RUN true\n", "ONBUILD"),
        ("FROM take5/python:3.11\nRUN --network=host true\n", "RUN options"),
        ("FROM take5/python:3.11\nLABEL take5.arena=1\n", "take5.*"),
        ("FROM take5/python:3.11\nLABEL a=1 \\\n take5.base=x\n", "take5.*"),
        ("RUN true\nFROM take5/python:3.11\n", "before the first FROM"),
    ],
)
def test_dockerfile_rules(text, expect):
    with pytest.raises(BuildRefusedError) as err:
        dockerfile.check_dockerfile(text.format(port=5000))
    assert expect in str(err.value)


def test_dockerfile_rules_accept_the_arena_bases_and_stages():
    plan = dockerfile.check_dockerfile(
        "ARG TAKE5_BASE_IMAGE=take5/python:3.11\nFROM ${TAKE5_BASE_IMAGE} AS build\nRUN true\n"
        "FROM take5/static:1\nCOPY --from=build /bin/true /bot/run\nCOPY --from=0 /x /y\n"
    )
    assert (
        plan.bases == ("$TAKE5_BASE_IMAGE", "take5/static:1")
        and plan.final_base == "take5/static:1"
    )
    with pytest.raises(BuildRefusedError, match="only an earlier stage"):
        dockerfile.check_dockerfile("FROM take5/static:1 AS a\nCOPY --from=a /x /y\n")


@pytest.mark.docker
@pytest.mark.parametrize(
    "kind", ["add-url", "from-loopback", "copy-from-loopback", "syntax", "volume"]
)
def test_dockerfile_attacks_never_reach_the_host(kind, build, tmp_path, listener):
    url = f"127.0.0.1:{listener.port}"
    text = {
        "add-url": f"FROM take5/python:3.11\nADD http://{url}/secret /x\n",
        "from-loopback": f"FROM {url}/evil:latest\n",
        "copy-from-loopback": f"FROM take5/python:3.11\nCOPY --from={url}/evil:latest /x /x\n",
        "syntax": f"# syntax={url}/frontend\nFROM take5/python:3.11\n",
        "volume": "FROM take5/python:3.11\nVOLUME /data\n",
    }[kind]
    with pytest.raises(BuildRefusedError):
        build(dockerfile_bot(tmp_path, text))
    assert listener.hits == 0


@pytest.mark.docker
def test_run_steps_have_no_network_not_even_the_hosts_loopback(build, tmp_path, listener):
    probe = (
        "import os, socket, sys\n"
        "assert sorted(os.listdir('/sys/class/net')) == ['lo'], os.listdir('/sys/class/net')\n"
        f"s = socket.socket(); s.settimeout(3)\n"
        f"sys.exit(7 if s.connect_ex(('127.0.0.1', {listener.port})) == 0 else 0)\n"
    )
    bot = dockerfile_bot(
        tmp_path,
        f"FROM take5/python:3.11\nLABEL {MARK}=1\nCOPY probe.py /probe.py\nRUN python3 /probe.py\n",
    )
    (bot / "probe.py").write_text(probe)
    info = build(bot)
    assert info.labels["take5.kind"] == "dockerfile"
    assert listener.hits == 0


@pytest.mark.docker
def test_a_build_that_never_ends_is_cancelled_and_leaves_nothing(client, build, tmp_path):
    bot = dockerfile_bot(tmp_path, f"FROM take5/python:3.11\nLABEL {MARK}=1\nRUN sleep 600\n")
    with pytest.raises(BuildTimeoutError) as err:
        build(bot, timeout=10)
    assert "longer than 10s" in str(err.value)
    deadline = time.monotonic() + 60  # the engine kills and removes the step's container
    while client.containers.list(all=True, filters={"label": MARK}) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert client.containers.list(all=True, filters={"label": MARK}) == []
    assert client.images.list(all=True, filters={"label": MARK}) == []


@pytest.mark.docker
def test_a_failed_build_leaves_no_intermediate_image(client, build, tmp_path):
    """The steps that succeeded before the failing one made images; they are removed, found by the
    build's own stamp, whatever the bot printed (here: a fake step line naming the base image)."""
    base_id = client.images.get("take5/python:3.11").id.split(":")[1][:12]
    bot = dockerfile_bot(
        tmp_path,
        f"FROM take5/python:3.11\nLABEL {MARK}=1\nRUN echo layer > /tmp/layer\n"
        f"RUN echo ' ---> {base_id}' && exit 3\n",
    )
    with pytest.raises(BuildFailedError):
        build(bot)
    assert client.images.list(all=True, filters={"label": MARK}) == []
    assert client.images.get("take5/python:3.11").id.split(":")[1].startswith(base_id)


@pytest.mark.docker
def test_a_build_step_is_memory_limited(client, build, tmp_path):
    bot = dockerfile_bot(
        tmp_path,
        f"FROM take5/python:3.11\nLABEL {MARK}=1\n"
        "RUN python3 -c \"x = bytearray(3 << 30); print('T5-' + 'ALLOCATED')\"\n",
    )
    with pytest.raises(BuildFailedError) as err:
        build(bot)
    assert "T5-ALLOCATED" not in err.value.output and "137" in err.value.output
    assert client.containers.list(all=True, filters={"label": MARK}) == []
    assert client.images.list(all=True, filters={"label": MARK}) == []


# -- 6. the image's own command: refused at build, never a crash in a rated game -----------------

BASE = "ARG TAKE5_BASE_IMAGE\nFROM ${TAKE5_BASE_IMAGE}\nUSER root\n"
REFUSED_COMMANDS = {
    "missing": (BASE + 'CMD ["/no/such/program"]\n', "'/no/such/program' is not in the image"),
    "not on PATH": (BASE + 'CMD ["nosuchbot", "--serve"]\n', "is not in the image's PATH"),
    "a folder": (BASE + 'ENTRYPOINT ["/etc"]\n', "is a folder, not a program"),
    "none": (BASE + "CMD []\n", "has no command (CMD or ENTRYPOINT)"),
    "not executable": (
        BASE + "RUN printf '#!/bin/sh\\n' > /srv/run && chmod 644 /srv/run\nCMD [\"/srv/run\"]\n",
        "may not be executed by the bot's user",
    ),
    "bad interpreter": (
        BASE + "RUN printf '#!/no/interpreter\\n' > /srv/run && chmod 755 /srv/run\n"
        'CMD ["/srv/run"]\n',
        "the interpreter of /srv/run '/no/interpreter' is not in the image",
    ),
    "under /tmp": (
        BASE + "RUN printf '#!/bin/sh\\n' > /tmp/run && chmod 755 /tmp/run\nCMD [\"/tmp/run\"]\n",
        "is under /tmp, which is an empty tmpfs when the bot runs",
    ),
    "a link loop": (
        BASE + 'RUN ln -s /srv/b /srv/a && ln -s /srv/a /srv/b\nCMD ["/srv/a"]\n',
        "too many symbolic links",
    ),
    "no dynamic loader": (
        "FROM take5/python:3.11 AS tools\nFROM take5/static:1\n"
        'COPY --from=tools /bin/ls /bot/run\nCMD ["/bot/run"]\n',
        "needs the dynamic loader",
    ),
}


@pytest.mark.docker
@pytest.mark.parametrize("case", sorted(REFUSED_COMMANDS))
def test_a_command_that_cannot_start_is_refused_at_build(case, build, tmp_path):
    """An image whose own command cannot start as the launcher runs it (uid 10001) is refused
    when it is built, in one line that names what to change; nothing of it ran, nothing is
    left (the module's fixture finds containers and images by the label)."""
    text, expect = REFUSED_COMMANDS[case]
    bot = dockerfile_bot(tmp_path, f"{text}LABEL {MARK}=1\n")
    with pytest.raises(BuildRefusedError) as caught:
        build(bot)
    assert expect in str(caught.value) and "\n" not in str(caught.value), str(caught.value)


@pytest.mark.docker
def test_a_bot_whose_command_cannot_start_is_rejected_before_play(tmp_path):
    """`referee build` exits 3 with one line; `referee match` rejects the bot before any game
    (exit 3): it is never charged a crash in a game."""
    text, expect = REFUSED_COMMANDS["missing"]
    bot = dockerfile_bot(tmp_path, text)
    done = referee("build", str(bot), timeout=300)
    assert done.returncode == 3, done.stderr[-2000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and expect in lines[0] and "CMD [" in lines[0], done.stderr
    played = referee(
        "match", "--sandbox", "docker", "--json", str(bot), str(EXAMPLES / "lowest"), timeout=300
    )
    assert played.returncode == 3, played.stderr[-2000:]
    assert "Traceback" not in played.stderr
    result = json.loads(played.stdout)
    (rejection,) = result["rejections"]
    assert expect in rejection["detail"]  # rejected before play, never charged in a game


@pytest.mark.docker
def test_build_output_reaches_errors_escaped(build, tmp_path):
    bot = dockerfile_bot(
        tmp_path,
        f"FROM take5/python:3.11\nLABEL {MARK}=1\n"
        "RUN printf 'T5-FAIL \\033]0;owned\\007\\033[2J\\n' && exit 3\n",
    )
    with pytest.raises(BuildFailedError) as err:
        build(bot)
    assert (
        "T5-FAIL" in err.value.output
        and "\x1b" not in err.value.output
        and "\x07" not in err.value.output
    )


def test_every_refusal_is_an_image_build_error():
    assert issubclass(BuildRefusedError, ImageBuildError) and issubclass(
        BuildTimeoutError, BuildFailedError
    )


def test_the_context_tar_holds_only_root_owned_readable_files(tmp_path):
    bot = python_bot(tmp_path)
    os.chmod(bot / "bot.py", 0o600)
    with context.ContextWriter() as ctx:
        ctx.add_folder(context.scan(bot), "bot")
        data = ctx.fileobj().read()
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        members = tar.getmembers()
    for m in members:
        assert (m.uid, m.gid) == (0, 0) and m.mode in (0o644, 0o755, 0o777), (m.name, oct(m.mode))
