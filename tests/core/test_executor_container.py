"""The container backend, run here (issue 37): ``callgate worker`` inside a podman (or
docker) container, reached with ``podman exec -i CONTAINER callgate worker --workspace
DIR`` as the executor transport.

The image is built from this checkout's wheels, offline (tests/core/worker_image.py; once
per checkout, cached by podman under a digest tag). A model-only transcript, replayed with
``--executor``, edits files that exist only inside the container; the host's directory at
the very same path (a decoy) stays byte-identical.

Containers need a runtime that works where the suite runs (`worker_image.runtime_options`
tries the defaults, then runc, then runc with this process's rlimits: a nested machine
without CAP_SYS_RESOURCE and with hybrid cgroups needs the last); if none does, the tests
skip with every runtime's answer.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from . import worker_image

ENGINE = shutil.which("podman") or shutil.which("docker")


@pytest.fixture(scope="session")
def container_image() -> tuple[str, str, list[str]]:
    """(engine, image, run options), or a skip saying why containers cannot run here."""
    if ENGINE is None:
        pytest.skip("neither podman nor docker is installed (.ci/run installs podman)")
    if subprocess.run([ENGINE, "info"], capture_output=True, timeout=60).returncode != 0:
        pytest.skip(f"{ENGINE} cannot reach a container engine here ({ENGINE} info failed)")
    try:
        image = worker_image.build(ENGINE)
    except worker_image.CannotBuild as exc:
        pytest.skip(f"the worker image cannot be built here: {exc}")
    options, why = worker_image.runtime_options(ENGINE, image)
    if options is None:
        pytest.skip(f"containers cannot run on this machine: {why}")
    return ENGINE, image, options


class Container:
    """One running container of the worker image (``sleep infinity``), removed at the end."""

    def __init__(self, engine: str, image: str, options: list[str]) -> None:
        self.engine = engine
        self.name = f"callgate-test-{uuid.uuid4().hex[:12]}"
        subprocess.run(
            [engine, "run", "-d", "--name", self.name, *options, image],
            check=True,
            capture_output=True,
            timeout=120,
        )

    def sh(self, script: str) -> str:
        done = subprocess.run(
            [self.engine, "exec", self.name, "sh", "-c", script],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def transport(self, workspace: str) -> list[str]:
        return [
            self.engine,
            "exec",
            "-i",
            self.name,
            "callgate",
            "worker",
            "--workspace",
            workspace,
        ]

    def remove(self) -> None:
        subprocess.run(
            [self.engine, "rm", "-f", "-t", "0", self.name], capture_output=True, timeout=120
        )


@pytest.fixture
def container(container_image: tuple[str, str, list[str]]) -> Iterator[Container]:
    running = Container(*container_image)
    try:
        yield running
    finally:
        running.remove()


@pytest.fixture
def image_plugins(user_config: Path) -> None:
    """The host loads what the image's worker has (the file, search and shell plugins): a
    worker refuses a handshake naming a plugin it lacks."""
    (user_config / "config.toml").write_text('[plugins]\nenable = ["files", "search", "shell"]\n')


def _replay(lines: list[dict[str, Any]], workspace: str, *args: str) -> list[dict[str, Any]]:
    text = "\n".join(json.dumps(line) for line in lines) + "\n"
    done = subprocess.run(
        [sys.executable, "-m", "callgate_cli", "replay", "-", "--workspace", workspace, *args],
        input=text,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_a_transcript_edits_files_only_the_container_has(
    tmp_path: Path, container: Container, image_plugins: None
) -> None:
    decoy = tmp_path / "ws"  # the host's own directory at the path the container's worker serves
    decoy.mkdir()
    (decoy / "app.py").write_text("HOST COPY\nreturn 1\n")
    before = _tree(decoy)
    container.sh(f"mkdir -p {decoy} && printf 'def main():\\n    return 1\\n' > {decoy}/app.py")
    results = _replay(
        [
            {"name": "read_file", "arguments": {"path": "app.py"}},
            {
                "name": "edit_file",
                "arguments": {"path": "app.py", "old_string": "return 1", "new_string": "return 2"},
            },
            {"name": "write_file", "arguments": {"path": "new.txt", "content": "made inside\n"}},
            {"name": "bash", "arguments": {"command": "cat app.py new.txt; cat /etc/hostname"}},
            {"name": "grep", "arguments": {"pattern": "return 2"}},
        ],
        str(decoy),
        "--executor",
        json.dumps(container.transport(str(decoy))),
        "--surface",
        "full",
    )
    assert [r["is_error"] for r in results] == [False] * 5, results
    assert "def main()" in results[0]["content"] and "HOST COPY" not in results[0]["content"]
    assert "return 2" in results[3]["content"] and "made inside" in results[3]["content"]
    assert "app.py" in results[4]["content"]
    # the container's files changed, and only they
    assert container.sh(f"cat {decoy}/app.py {decoy}/new.txt") == (
        "def main():\n    return 2\nmade inside\n"
    )
    assert _tree(decoy) == before  # the host's file system is untouched


def test_a_transcript_runs_where_the_host_has_no_such_directory(
    tmp_path: Path, container: Container, image_plugins: None
) -> None:
    ghost = "/ws"  # as the brief's argv: a path this host need not have
    container.sh("mkdir -p /ws && echo inside > /ws/a.txt")
    host_had = Path(ghost).exists()
    results = _replay(
        [
            {"name": "read_file", "arguments": {"path": "a.txt"}},
            {"name": "write_file", "arguments": {"path": "b.txt", "content": "b\n"}},
            {"name": "bash", "arguments": {"command": "cat b.txt"}},
        ],
        ghost,
        "--executor",
        json.dumps(container.transport(ghost)),
    )
    assert [r["is_error"] for r in results] == [False] * 3, results
    assert "inside" in results[0]["content"] and "b" in results[2]["content"]
    assert Path(ghost).exists() == host_had and not Path(ghost, "b.txt").exists()


def test_a_worker_lacking_a_plugin_the_host_loads_fails_closed(
    tmp_path: Path, container: Container
) -> None:
    """Without ``[plugins] enable`` the host loads every installed plugin (ask, web...), the
    image's worker has three: the handshake is refused and nothing runs anywhere, the
    call answers ``unavailable`` naming the missing plugin."""
    container.sh("mkdir -p /ws && echo inside > /ws/a.txt")
    [result] = _replay(
        [{"name": "write_file", "arguments": {"path": "a.txt", "content": "changed\n"}}],
        "/ws",
        "--executor",
        json.dumps(container.transport("/ws")),
    )
    assert result["is_error"] and result["error"]["kind"] == "unavailable", result
    assert "not an installed plugin" in result["content"]
    assert container.sh("cat /ws/a.txt") == "inside\n"
