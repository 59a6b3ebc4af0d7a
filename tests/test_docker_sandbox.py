"""referee.docker_sandbox: unit tests of the pure parts, and @pytest.mark.docker tests against a real
engine (scripts/setup-docker.sh starts one). Without an engine the docker tests skip, except with
CI set, where they fail.

The docker tests use tests/docker_bots/standin: a plain-socket stand-in for an SDK bot that runs the
hostile probes (escape attempts, fork bomb, memory hog, CPU spin, output flood) from inside.
Network probes only ever target 127.0.0.1, this host's own addresses and, after the bot checked
that its namespace has nothing but `lo`, a TEST-NET documentation address (198.51.100.1; on the
project's VMs 192.0.2.1 is the real gateway, so it is not used)."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import threading
import time
import zipfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from referee import docker_sandbox as ds
from referee.docker_sandbox import (
    BotNotReady,
    ContainerStartError,
    Docker,
    DockerSandbox,
    DockerUnavailable,
    ImageBuildError,
    SandboxLimits,
    build_image,
    check_requirements,
    cleanup_leftovers,
    docker_run_args,
    list_containers,
    start_bot_container,
)

HERE = Path(__file__).resolve().parent
BOTS = HERE / "docker_bots"
REPO = HERE.parent
TOKEN = secrets.token_hex(3)  # this test session's containers: run ids start with pytest-TOKEN


def _ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def _unavailable(reason: str):
    if _ci():
        pytest.fail(f"{reason} -- CI is set, so the docker tests fail instead of skipping "
                    "(run scripts/setup-docker.sh in .ci/run)")
    pytest.skip(reason)


# ------------------------------------------------------------------------------------------------
# Pure parts: no engine needed


def test_run_args_lock_the_container_down():
    args = docker_run_args("img:1", name="n1", socket_dir="/tmp/t5-x/c001",
                           limits=SandboxLimits(memory="128m", cpus=0.5, pids=32),
                           labels={"take5.run": "r1", "take5.game": "g1"}, env={"A": "1"})
    joined = " ".join(args)
    for flag in ["--network none", "--read-only", "--user 10001:10001", "--cap-drop ALL",
                 "--security-opt no-new-privileges", "--memory 128m", "--memory-swap 128m",
                 "--cpus 0.5", "--pids-limit 32", "--restart no", "--log-driver json-file",
                 "--log-opt max-size=1m", "--log-opt max-file=1", "--label take5.arena=1",
                 "--label take5.run=r1", "--label take5.game=g1", "--env A=1",
                 "--env TAKE5_LISTEN=unix:/run/take5/bot.sock",
                 "type=bind,source=/tmp/t5-x/c001,target=/run/take5"]:
        assert flag in joined, flag
    tmpfs = args[args.index("--tmpfs") + 1]
    assert tmpfs.startswith("/tmp:") and "noexec" in tmpfs and "size=16m" in tmpfs
    assert args[-1] == "img:1"
    assert "--privileged" not in args and "--rm" not in args


def test_limits_are_validated():
    assert SandboxLimits() == SandboxLimits(memory="256m", cpus=1.0, pids=64, tmpfs="16m")
    with pytest.raises(ValueError):
        SandboxLimits(memory="lots")
    with pytest.raises(ValueError):
        SandboxLimits(cpus=0)
    with pytest.raises(ValueError):
        SandboxLimits(pids=2)
    with pytest.raises(AttributeError):  # frozen
        SandboxLimits().memory = "1g"


def test_socket_path_length_is_checked(tmp_path):
    with pytest.raises(ValueError, match="longer than"):
        ds.prepare_socket_dir(tmp_path / ("x" * 120))


def test_requirements_allow_only_plain_lines():
    assert check_requirements("# c\nnumpy>=1.24  # why\n\nscipy[extra]==1.1 ; python_version>'3'\n") == [
        "numpy>=1.24", "scipy[extra]==1.1 ; python_version>'3'"]
    for bad in ["-e .", "--index-url https://x", "-r other.txt", "git+https://h/r.git",
                "pkg @ https://h/p.whl", "pkg@file:///tmp/p", "./local", "/abs/path.whl",
                "--extra-index-url=x"]:
        with pytest.raises(ImageBuildError, match="not allowed"):
            check_requirements(f"numpy\n{bad}\n")


def test_source_hash_follows_files_not_caches(tmp_path):
    bot = tmp_path / "bot"
    shutil.copytree(BOTS / "standin", bot)
    h1 = ds.source_hash(bot)
    (bot / "__pycache__").mkdir(exist_ok=True)
    (bot / "__pycache__" / "x.pyc").write_bytes(b"junk")
    (bot / ".git").mkdir()
    (bot / ".git" / "HEAD").write_text("ref")
    assert ds.source_hash(bot) == h1
    (bot / "extra.txt").write_text("1")
    h2 = ds.source_hash(bot)
    assert h2 != h1
    os.chmod(bot / "extra.txt", 0o755)
    assert ds.source_hash(bot) != h2
    assert ds.source_hash(bot, extra=["name"]) != ds.source_hash(bot)


def test_sdk_versions_come_from_the_sdk_sources():
    version, protocol = ds.sdk_versions(REPO / "sdk")
    assert version and version != "unknown"
    assert protocol and protocol != "unknown"


def test_missing_engine_gives_docker_unavailable(monkeypatch):
    with pytest.raises(DockerUnavailable, match="no docker client"):
        Docker(binary="/nonexistent/docker").check()
    if shutil.which("docker") is None:
        pytest.skip("no docker client on PATH")
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/take5-docker.sock")
    with pytest.raises(DockerUnavailable):
        Docker().check()


# ------------------------------------------------------------------------------------------------
# Against the real engine


@pytest.fixture(scope="session")
def engine():
    try:
        version = ds.check_docker(Docker())
    except DockerUnavailable as exc:
        _unavailable(str(exc))
    d = Docker()
    if d.image_inspect(ds.DEFAULT_BASE_IMAGE) is None:
        _unavailable(f"base image {ds.DEFAULT_BASE_IMAGE} is missing (run scripts/setup-docker.sh)")
    yield version
    # Nothing of this session may be left behind.
    proc = d.run(["ps", "-a", "--filter", "label=take5.arena=1", "--format", '{{.Label "take5.run"}}'])
    leftovers = [r for r in proc.stdout.split() if r.startswith(f"pytest-{TOKEN}")]
    for run in set(leftovers):
        cleanup_leftovers(run)
    assert not leftovers, f"containers left behind by runs {sorted(set(leftovers))}"
    # Keep only the newest image of each test bot (the SDK changes, so their hashes do too).
    ds.prune_bot_images(["standin", "dockerfile_bot", "lowest"], keep=1)
    ds.prune_bot_images(["cache-probe", "wheel-bot", "foreign"], keep=0)


@pytest.fixture(scope="session")
def sdk_copy(tmp_path_factory):
    """A snapshot of the SDK, so that edits to sdk/ during the test session do not change hashes."""
    dst = tmp_path_factory.mktemp("sdk")
    shutil.copytree(REPO / "sdk" / "take5", dst / "take5",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copy(REPO / "sdk" / "pyproject.toml", dst / "pyproject.toml")
    return dst


@pytest.fixture(scope="session")
def standin(engine, sdk_copy):
    return build_image(BOTS / "standin", sdk_dir=sdk_copy)


@pytest.fixture
def sandbox(engine):
    sb = DockerSandbox(run_id=f"pytest-{TOKEN}-{secrets.token_hex(2)}", ready_timeout=30)
    try:
        yield sb
    finally:
        sb.close()
        assert list_containers(sb.run_id) == []
        assert not sb.socket_root.exists()


@pytest.fixture
def remove_images(engine):
    tags = []
    yield tags
    if tags:
        Docker().run(["rmi", "-f", *tags], check=False)


class Client:
    """Talks to the stand-in bot: one JSON line per request."""

    def __init__(self, container, timeout=30.0):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(str(container.socket_path))
        self.f = self.sock.makefile("rwb")

    def __call__(self, cmd, **kw):
        self.f.write(json.dumps({"cmd": cmd, **kw}).encode() + b"\n")
        self.f.flush()
        line = self.f.readline()
        if not line:
            raise ConnectionError(f"bot closed the connection during {cmd}")
        return json.loads(line)

    def close(self):
        self.f.close()
        self.sock.close()


def _labels(image_tag):
    return Docker().image_inspect(image_tag)["Config"]["Labels"]


@pytest.mark.docker
def test_build_labels_and_no_rebuild_when_unchanged(engine, sdk_copy, tmp_path, remove_images):
    bot = tmp_path / "cache-probe"
    shutil.copytree(BOTS / "standin", bot)
    (bot / "nonce.txt").write_text(secrets.token_hex(8))  # a fresh hash: really builds
    first = build_image(bot, sdk_dir=sdk_copy)
    remove_images.append(first.tag)
    assert first.built
    sdk_version, protocol = ds.sdk_versions(sdk_copy)
    labels = _labels(first.tag)
    assert labels["take5.bot"] == "cache-probe"
    assert labels["take5.bot.version"] == "1.0-test"  # __version__ in bot.py
    assert labels["take5.sdk.version"] == sdk_version
    assert labels["take5.protocol"] == protocol
    assert labels["take5.source_hash"] == first.source_hash
    assert first.tag == f"take5-bot/cache-probe:{first.source_hash[:16]}"

    t0 = time.monotonic()
    again = build_image(bot, sdk_dir=sdk_copy)
    assert not again.built and again.id == first.id and again.tag == first.tag
    assert time.monotonic() - t0 < 2.0

    (bot / "bot.py").write_text((bot / "bot.py").read_text() + "\n# changed\n")
    changed = build_image(bot, sdk_dir=sdk_copy)
    remove_images.append(changed.tag)
    assert changed.built and changed.source_hash != first.source_hash and changed.id != first.id

    # An SDK change is a source change too.
    sdk2 = tmp_path / "sdk2"
    shutil.copytree(sdk_copy, sdk2)
    with open(sdk2 / "take5" / "__init__.py", "a") as fh:
        fh.write("\n# sdk changed\n")
    assert ds.source_hash(bot, sdk2) != ds.source_hash(bot, sdk_copy)


@pytest.mark.docker
def test_requirements_are_installed_from_wheels(engine, sdk_copy, tmp_path, remove_images):
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    _make_wheel(wheels, "t5demo", "0.1", {"t5demo/__init__.py": "VALUE = 42\n"})
    bot = tmp_path / "wheel-bot"
    shutil.copytree(BOTS / "standin", bot)
    (bot / "requirements.txt").write_text("t5demo==0.1\n")
    (bot / "nonce.txt").write_text(secrets.token_hex(8))
    info = build_image(bot, sdk_dir=sdk_copy, pip_args=["--no-index", "--find-links", str(wheels)])
    remove_images.append(info.tag)
    proc = Docker().run(["run", "--rm", "--network", "none", info.tag, "python3", "-c",
                         "import t5demo, take5, grpc; print(t5demo.VALUE, t5demo.__file__)"])
    assert proc.stdout.split() == ["42", "/opt/take5/site/t5demo/__init__.py"]

    (bot / "requirements.txt").write_text("t5demo==9.9\n")  # no such wheel
    with pytest.raises(ImageBuildError) as err:
        build_image(bot, sdk_dir=sdk_copy, pip_args=["--no-index", "--find-links", str(wheels)])
    assert "t5demo==9.9" in err.value.output


@pytest.mark.docker
def test_foreign_base_gets_the_grpc_runtime_installed(remove_images, sandbox, sdk_copy, tmp_path):
    """A base without take5's runtime labels (like python:3.11-slim on a machine with a
    registry): the Python version is asked from the image, grpcio/protobuf wheels are added."""
    base = "take5/base:bookworm"  # python3.11 only: no grpc, no pip, no take5 labels, no bot user
    if Docker().image_inspect(base) is None:
        _unavailable(f"{base} is missing (run scripts/setup-docker.sh)")
    bot = tmp_path / "foreign"
    shutil.copytree(BOTS / "standin", bot)
    (bot / "nonce.txt").write_text(secrets.token_hex(8))
    info = build_image(bot, base_image=base, sdk_dir=sdk_copy)
    remove_images.append(info.tag)
    assert info.labels["take5.base"] == base
    proc = Docker().run(["run", "--rm", "--network", "none", "--user", "10001:10001", info.tag,
                         "python3", "-c", "import grpc, google.protobuf, take5; print(grpc.__file__)"])
    assert proc.stdout.strip().startswith("/opt/take5/site/grpc/")
    c = sandbox.start(info)
    assert Client(c)("whoami")["uid"] == 10001


def _make_wheel(dest: Path, name: str, version: str, files: dict[str, str]) -> Path:
    dist = f"{name}-{version}.dist-info"
    meta = {
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: take5-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    allfiles = {**files, **meta}
    record = "".join(f"{p},,\n" for p in allfiles) + f"{dist}/RECORD,,\n"
    path = dest / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        for p, text in allfiles.items():
            z.writestr(p, text)
        z.writestr(f"{dist}/RECORD", record)
    return path


@pytest.mark.docker
def test_build_failure_carries_the_build_output(engine, sdk_copy):
    with pytest.raises(ImageBuildError) as err:
        build_image(BOTS / "broken_build", sdk_dir=sdk_copy, force=True)
    assert "T5-BUILD-MARKER" in err.value.output
    assert "T5-BUILD-MARKER" in str(err.value)


@pytest.mark.docker
def test_bot_with_its_own_dockerfile(sandbox, sdk_copy):
    info = build_image(BOTS / "dockerfile_bot", sdk_dir=sdk_copy)
    labels = _labels(info.tag)
    assert labels["take5.bot"] == "dockerfile_bot" and labels["take5.source_hash"] == info.source_hash
    c = sandbox.start(info)
    client = Client(c)
    assert client("ping") == {"pong": True, "kind": "dockerfile"}
    client.close()


@pytest.mark.docker
def test_real_sdk_bot_serves_grpc_in_the_sandbox(sandbox, sdk_copy):
    """An example bot on the real SDK runtime: ready in the sandbox, and a gRPC channel connects."""
    grpc = pytest.importorskip("grpc")
    bot = REPO / "example_bots" / "lowest"
    if not (bot / "bot.py").is_file() or not (sdk_copy / "take5" / "bot.py").is_file():
        pytest.skip("no example bot / SDK bot runtime yet")
    info = build_image(bot, sdk_dir=sdk_copy)
    assert info.labels["take5.bot"] == "lowest" and info.bot_version == "1.0"
    c = sandbox.start(info)
    channel = grpc.insecure_channel(c.address)
    try:
        grpc.channel_ready_future(channel).result(timeout=10)
    finally:
        channel.close()
    assert "serving on unix:/run/take5/bot.sock" in c.logs_tail()


def _host_addresses() -> list[str]:
    addrs = {"127.0.0.1"}
    try:
        out = subprocess.run(["ip", "-o", "addr", "show"], capture_output=True, text=True, timeout=10,
                             check=False).stdout
        for line in out.splitlines():
            parts = line.split()
            if len(parts) > 3 and parts[2] in ("inet", "inet6"):
                ip = parts[3].split("/")[0]
                if not ip.startswith("fe80"):
                    addrs.add(ip)
    except (OSError, subprocess.SubprocessError):
        try:
            addrs.update(socket.gethostbyname_ex(socket.gethostname())[2])
        except OSError:
            pass
    return sorted(addrs)


@pytest.mark.docker
def test_container_is_locked_down(sandbox, standin):
    # A listener on the host, on all addresses: the bot must not reach it.
    accepted = []
    lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsock.bind(("0.0.0.0", 0))
    lsock.listen(8)
    lsock.settimeout(0.2)
    port = lsock.getsockname()[1]
    stop = threading.Event()

    def accept_loop():
        while not stop.is_set():
            try:
                accepted.append(lsock.accept()[1])
            except OSError:
                pass

    t = threading.Thread(target=accept_loop, daemon=True)
    t.start()
    try:
        c = sandbox.start(standin)
        client = Client(c)
        me = client("whoami")
        assert (me["uid"], me["euid"], me["gid"]) == (10001, 10001, 10001)
        assert me["cwd"] == "/bot" and me["listen"] == "unix:/run/take5/bot.sock"
        assert me["status"]["CapEff"] == "0" * 16 and me["status"]["CapBnd"] == "0" * 16
        assert me["status"]["NoNewPrivs"] == "1"
        assert me["status"]["Seccomp"] == "2"  # docker's default seccomp filter

        lim = client("limits")
        if lim["v1"]:
            assert lim["v1"]["memory"] == str(256 << 20) == lim["v1"]["memsw"]
            assert lim["v1"]["pids"] == "64" and lim["v1"]["cpu_quota"] == "100000"
        else:
            assert lim["v2"]["memory"] == str(256 << 20) and lim["v2"]["pids"] == "64"

        fs = client("fs")
        for d in ("/", "/bot", "/etc", "/opt/take5/site", "/usr/bin", "/var/tmp", "/home"):
            assert fs["write"][d] == "EROFS", (d, fs["write"][d])
        assert fs["write"]["/root"] in ("EROFS", "EACCES")
        assert fs["write"]["/tmp"] == "ok"
        assert fs["exec_tmp"] == "EACCES"  # /tmp is noexec
        assert fs["fill_tmp"] == [16 << 20, "ENOSPC"]  # /tmp is 16m
        assert fs["run_take5"] == ["bot.sock"]  # only its own socket dir
        if os.geteuid() == 0:
            assert fs["fill_run"][1] == "ENOSPC" and fs["fill_run"][0] <= 256 << 10

        targets = [[a, port] for a in _host_addresses()] + [["::1", port]]
        net = client("net", targets=targets, outside=[["198.51.100.1", 443]], dns="pypi.org")
        assert net["interfaces"] == ["lo"] and net["routes"] == [] and net["isolated"]
        for target, result in net["connect"].items():
            assert result != "connected", target
        assert net["outside"] == {"198.51.100.1:443": "ENETUNREACH"}
        assert net["dns"].startswith("failed")
        client.close()
        time.sleep(0.3)
        assert accepted == [], "the bot reached the host's listener"
    finally:
        stop.set()
        t.join(2)
        lsock.close()
        for s in accepted:
            s.close()


@pytest.mark.docker
def test_fork_bomb_is_contained_by_the_pids_limit(sandbox, standin):
    c = sandbox.start(standin, limits=SandboxLimits(pids=32))
    client = Client(c)
    result = client("forkbomb", max=5000, seconds=3)
    assert result["error"] == "EAGAIN"
    assert 0 < result["forked"] < 32
    assert client("ping") == {"pong": True}  # still alive and answering
    assert c.status().running
    client.close()


@pytest.mark.docker
def test_memory_hog_is_oom_killed_and_reported(sandbox, standin):
    limits = SandboxLimits(memory="64m")
    with pytest.raises(ContainerStartError) as err:
        sandbox.start(standin, limits=limits, env={"TAKE5_STANDIN_MODE": "memhog"})
    assert err.value.exit_code == 137 and err.value.oom_killed
    assert "eating memory" in err.value.logs and "OOM" in str(err.value)
    assert list_containers(sandbox.run_id) == []  # the failed start was removed

    c = sandbox.start(standin, limits=limits)
    client = Client(c)
    with pytest.raises((ConnectionError, OSError)):
        client("memhog")
    st = c.wait_exit(10)
    assert not st.running and st.exit_code == 137 and st.oom_killed
    assert "OOM" in st.describe()
    client.close()
    c.remove()
    assert c.status().oom_killed  # still known after removal


@pytest.mark.docker
def test_cpu_spinner_is_limited(sandbox, standin):
    c = sandbox.start(standin, limits=SandboxLimits(cpus=0.5))
    client = Client(c)
    lim = client("limits")
    if lim["v1"]:
        assert lim["v1"]["cpu_quota"] == "50000"
    result = client("spin", seconds=1.5)
    assert result["ratio"] < 0.7, result  # ~0.5 of a CPU
    client.close()


@pytest.mark.docker
def test_output_flood_does_not_fill_the_disk(sandbox, standin):
    c = sandbox.start(standin, limits=SandboxLimits(log_max_size="256k"),
                      env={"TAKE5_STANDIN_MODE": "flood", "TAKE5_STANDIN_FLOOD": str(16 << 20)})
    assert Client(c)("ping") == {"pong": True}
    log_path = Docker().container_inspect(c.id)["LogPath"]
    if os.access(log_path, os.R_OK):
        assert os.path.getsize(log_path) <= 400 << 10, os.path.getsize(log_path)
    tail = c.logs_tail(lines=5)
    assert "flood" in tail and len(tail) < 16 << 10


@pytest.mark.docker
def test_start_errors_are_specific(sandbox, standin):
    with pytest.raises(ContainerStartError) as err:
        sandbox.start(standin, env={"TAKE5_STANDIN_MODE": "crash"})
    assert err.value.exit_code == 3 and not err.value.oom_killed
    assert "crashing on purpose" in err.value.logs

    sandbox.ready_timeout = 1.5
    with pytest.raises(BotNotReady):
        sandbox.start(standin, env={"TAKE5_STANDIN_MODE": "nosocket"})

    with pytest.raises(ContainerStartError, match="docker run"):
        sandbox.start("take5-bot/does-not-exist:nope")
    assert list_containers(sandbox.run_id) == []


@pytest.mark.docker
def test_cleanup_leftovers_removes_labelled_containers(engine, standin, tmp_path):
    run_a, run_b = f"pytest-{TOKEN}-a", f"pytest-{TOKEN}-b"
    dirs = [Path(f"/tmp/t5-{TOKEN}{i}") for i in range(3)]
    try:
        for i, run in enumerate([run_a, run_a, run_b]):
            start_bot_container(standin, socket_dir=dirs[i], run_id=run, game_id="g", wait=True)
        assert len(list_containers(run_a)) == 2 and len(list_containers(run_b)) == 1
        assert cleanup_leftovers(run_a) == 2
        assert list_containers(run_a) == [] and len(list_containers(run_b)) == 1
        assert not (dirs[0] / "bot.sock").exists()
        assert cleanup_leftovers(run_b) == 1
        assert list_containers(run_b) == []
        assert cleanup_leftovers(run_b) == 0
    finally:
        cleanup_leftovers(run_a)
        cleanup_leftovers(run_b)
        for d in dirs:
            shutil.rmtree(d, ignore_errors=True)


@pytest.mark.docker
def test_prefetch_starts_the_next_game_ahead(sandbox, standin):
    pending = sandbox.prefetch([standin, standin], game_id="g2")
    current = sandbox.start_game([standin, standin], game_id="g1")
    nxt = pending.result(timeout=60)
    assert [c.labels["take5.seat"] for c in nxt] == ["0", "1"]
    assert {c.labels["take5.game"] for c in nxt} == {"g2"}
    for c in current + nxt:
        assert c.ready_seconds is not None and Client(c)("ping") == {"pong": True}
    print("ready after (s):", [round(c.ready_seconds, 2) for c in current + nxt])
    sandbox.release(current)
    assert len(list_containers(sandbox.run_id)) == 2

    cancelled = sandbox.prefetch([standin], game_id="g3")
    cancelled.cancel()
    sandbox.release(nxt)
    assert list_containers(sandbox.run_id) == []

    bad = sandbox.prefetch([standin, standin], game_id="g4", env={"TAKE5_STANDIN_MODE": "crash"})
    with pytest.raises(ContainerStartError):
        bad.result(timeout=60)
    assert list_containers(sandbox.run_id) == []
