"""install_source reads its source only beneath the source folder, never through a symlink.

Attacks (issue 30, item 6): a source folder's ``.git/HEAD`` is a symlink to a file outside
(its text used to appear in the plan as ``gitHead``), and a source file is swapped for a
symlink to an outside secret between the check and the read (the secret's bytes used to be
installed). Both go through the front door: ``install_source`` in a session.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import callgate_skills
import pytest
from callgate.paths import ResolvedPath, root_path
from callgate_skills import _install_tree

pytestmark = pytest.mark.skipif(os.name != "posix", reason="symlinks and descriptors")

SECRET = b"OUTSIDE-SECRET-7f3a9c do not install\n"


def _skill(name: str) -> str:
    return f"---\nname: {name}\ndescription: does a thing\n---\n\nDo the thing.\n"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("HOME", str(path))
    return path


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    path = tmp_path / "outside" / "secret.txt"
    path.parent.mkdir()
    path.write_bytes(SECRET)
    return path


def test_attack_git_head_symlink_does_not_reach_the_plan(callgate_session, home, secret):
    s = callgate_session(plugins=[callgate_skills],
                         files={"repo/skills/one/SKILL.md": _skill("one"),
                                "repo/.git/config": "[core]\n"})
    os.symlink(secret, s.workspace / "repo/.git/HEAD")
    plan = s.expect_ok("install_source", {"source": "repo"})
    assert "OUTSIDE-SECRET" not in plan
    assert "gitHead" not in json.loads(plan)
    # a symlinked .git directory is not followed either
    (s.workspace / "repo/.git/config").unlink()
    (s.workspace / "repo/.git/HEAD").unlink()
    (s.workspace / "repo/.git").rmdir()
    (secret.parent / "HEAD").write_bytes(SECRET)
    os.symlink(secret.parent, s.workspace / "repo/.git")
    assert "OUTSIDE-SECRET" not in s.expect_ok("install_source", {"source": "repo"})


def test_attack_symlinked_file_or_folder_in_a_source_is_skipped(callgate_session, home,
                                                                 secret):
    s = callgate_session(plugins=[callgate_skills],
                         files={"src/one/SKILL.md": _skill("one")})
    os.symlink(secret, s.workspace / "src/one/notes.md")
    os.symlink(secret.parent, s.workspace / "src/one/references")
    plan = json.loads(s.expect_ok("install_source", {"source": "src/one"}))
    assert plan["actions"][0]["files"] == ["SKILL.md"]
    assert any("notes.md" in x and "symlink" in x for x in plan["skipped"])
    assert any("references" in x and "symlink" in x for x in plan["skipped"])
    done = s.call("install_source", {"source": "src/one", "apply": True,
                                     "planId": plan["planId"]})
    assert not done.is_error, done.text
    installed = s.workspace / ".agents/skills/one"
    assert sorted(p.name for p in installed.iterdir()) == ["SKILL.md"]


class _Swapper:
    """Flips ``target`` between a regular file and a symlink to the secret, as fast as it
    can, by renaming prepared entries over it (each flip is atomic)."""

    def __init__(self, target: Path, secret: Path) -> None:
        self.target = target
        stage = target.parent.parent.parent / "stage"  # outside the source folder
        stage.mkdir(exist_ok=True)
        self.regular = stage / "regular"
        self.link = stage / "link"
        self.secret = secret
        self.stop = threading.Event()
        self.flips = 0
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self.stop.is_set():
            try:
                self.regular.write_bytes(b"harmless notes\n")
                os.replace(self.regular, self.target)
                os.symlink(self.secret, self.link)
                os.replace(self.link, self.target)
                self.flips += 2
            except OSError:
                pass

    def __enter__(self) -> _Swapper:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()


def test_attack_a_file_swapped_for_a_symlink_is_never_read(tmp_path, secret):
    """The source reader itself, hammered: no tree it returns holds a byte of the secret."""
    src = tmp_path / "src"
    (src / "one").mkdir(parents=True)
    (src / "one/SKILL.md").write_text(_skill("one"))
    (src / "one/notes.md").write_bytes(b"harmless notes\n")
    root = callgate_skills_root(src)
    reads = leaked = 0
    deadline = time.monotonic() + 2.0
    with _Swapper(src / "one/notes.md", secret) as swapper:
        while time.monotonic() < deadline:
            tree = _install_tree.read_folder(root)
            reads += 1
            if any(SECRET in e.data for e in tree.files.values()):
                leaked += 1
    print(f"read_folder under swaps: {leaked} of {reads} reads leaked ({swapper.flips} flips)")
    assert swapper.flips > 10 and reads > 10
    assert leaked == 0, f"{leaked} of {reads} reads took the outside file's bytes"


def callgate_skills_root(src: Path) -> ResolvedPath:
    """The folder ``src`` held as a root of its own, as `read_folder` takes it."""
    return root_path(src)


def test_attack_swap_between_check_and_copy_installs_no_outside_bytes(callgate_session, home,
                                                                     secret):
    """Plan and apply in a loop while the source file flips: 0 outside bytes installed."""
    s = callgate_session(plugins=[callgate_skills],
                         files={"src/one/SKILL.md": _skill("one"),
                                "src/one/notes.md": "harmless notes\n"})
    applies = installed = leaked = 0
    start = time.monotonic()
    with _Swapper(s.workspace / "src/one/notes.md", secret):
        # a slow machine gets longer to land a few installs (the race needs some to happen)
        while time.monotonic() - start < 5.0 or (installed < 5 and time.monotonic() - start < 30):
            name = f"s{applies}"
            plan = s.call("install_source", {"source": "src/one", "name": name})
            if plan.is_error:
                continue
            planned = json.loads(plan.text)
            applies += 1
            done = s.call("install_source", {"source": "src/one", "name": name, "apply": True,
                                             "planId": planned["planId"]})
            if done.is_error:
                continue
            installed += 1
            target = s.workspace / ".agents/skills" / name
            if any(SECRET in p.read_bytes() for p in target.rglob("*") if p.is_file()):
                leaked += 1
    print(f"install_source under swaps: {leaked} of {applies} applies leaked "
          f"({installed} installed)")
    assert applies > 10 and installed > 0
    assert leaked == 0, f"{leaked} of {applies} applies installed the outside file's bytes"


def test_attack_a_symlinked_callgate_toml_is_not_read(callgate_session, home, tmp_path):
    """The workspace's callgate.toml, which a plan reads for the servers already there, is
    never read through a symlink (its server names and digest would come from outside)."""
    outside = tmp_path / "outside.toml"
    outside.write_text('[mcp_servers.hidden-name]\ncommand = "x"\n')
    s = callgate_session(plugins=[callgate_skills], files={
        "vendor/.mcp.json": '{"mcpServers": {"hidden-name": {"command": "uvx"}}}'})
    os.symlink(outside, s.workspace / "callgate.toml")
    r = s.call("install_source", {"source": "vendor/.mcp.json"})
    assert r.is_error and r.error.signature == s.argument_signature(
        "install_source", "INSTALL_BAD_CONFIG"), r.text
    assert "already configured" not in r.text


def test_attack_no_plan_is_computed_from_outside_bytes(callgate_session, home, secret):
    """Plans in a loop while the source file flips: a plan's id is a digest of the bytes it
    read, so an id that is neither the regular file's plan nor the symlink's (skipped) plan
    was computed from the outside file's bytes."""
    s = callgate_session(plugins=[callgate_skills],
                         files={"src/one/SKILL.md": _skill("one"),
                                "src/one/notes.md": "harmless notes\n"})
    notes = s.workspace / "src/one/notes.md"

    def plan_id() -> str | None:
        r = s.call("install_source", {"source": "src/one"})
        return None if r.is_error else json.loads(r.text)["planId"]

    regular = plan_id()
    notes.unlink()
    os.symlink(secret, notes)
    linked = plan_id()
    notes.unlink()
    notes.write_bytes(b"harmless notes\n")
    assert regular and linked and regular != linked
    plans = outside = 0
    deadline = time.monotonic() + 3.0
    with _Swapper(notes, secret):
        while time.monotonic() < deadline:
            found = plan_id()
            if found is None:
                continue
            plans += 1
            outside += found not in (regular, linked)
    print(f"install_source plans under swaps: {outside} of {plans} read outside bytes")
    assert plans > 10
    assert outside == 0, f"{outside} of {plans} plans were computed from the outside file"
