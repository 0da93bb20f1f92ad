"""The entry-point reader boot uses instead of `importlib.metadata` (issue 38) answers what
`importlib.metadata` answers: the same entry points, values, distributions and versions, for
every group installed here, and it leaves layouts it does not read to `importlib.metadata`."""

from __future__ import annotations

import importlib.metadata
import sys
from pathlib import Path

import pytest
from callgate._model import entrypoints


def _groups() -> set[str]:
    found = set()
    for dist in importlib.metadata.distributions():
        text = dist.read_text("entry_points.txt") or ""
        found |= {line.strip()[1:-1] for line in text.splitlines()
                  if line.strip().startswith("[") and line.strip().endswith("]")}
    return found


def _view(eps: list) -> list[tuple]:
    return [(ep.name, ep.value, ep.group, ep.dist.name if ep.dist else None,
             ep.dist.version if ep.dist else None) for ep in eps]


def test_every_group_of_this_environment_reads_as_importlib_metadata_reads_it() -> None:
    groups = _groups()
    assert {"callgate", "callgate.commands", "console_scripts"} <= groups
    for group in sorted(groups):
        mine = _view(entrypoints.entry_points(group))
        theirs = _view(list(importlib.metadata.entry_points(group=group)))
        assert mine == theirs, group
        assert all(isinstance(ep, entrypoints.EntryPoint)
                   for ep in entrypoints.entry_points(group))  # read here, not delegated


def test_versions_and_loading_agree() -> None:
    for name in ("callgate", "callgate-files", "pluggy", "attrs"):
        assert entrypoints.version(name) == importlib.metadata.version(name)
    assert entrypoints.version("no-such-distribution-callgate") is None
    mine = {ep.name: ep.load() for ep in entrypoints.entry_points("callgate")}
    theirs = {ep.name: ep.load() for ep in importlib.metadata.entry_points(group="callgate")}
    assert mine == theirs


def _dist(root: Path, name: str, version: str, entry_points: str) -> None:
    info = root / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
                                   "Summary: x\n\nName: not-this\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(entry_points, encoding="utf-8")


def test_the_first_distribution_of_a_name_wins_and_sections_are_kept_apart(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    _dist(first, "Demo.Plugin", "1.0", "# comment\n[demo.group]\none = pkg.one : run [x]\n"
          "[other]\ntwo = pkg.two\n")
    _dist(second, "demo-plugin", "2.0", "[demo.group]\nshadowed = pkg.three\n")
    monkeypatch.setattr(sys, "path", [str(first), str(tmp_path / "missing"), str(second)])
    eps = entrypoints.entry_points("demo.group")
    assert _view(eps) == _view(list(importlib.metadata.entry_points(group="demo.group")))
    assert [(ep.name, ep.value, ep.dist.name, ep.dist.version) for ep in eps] == [
        ("one", "pkg.one : run [x]", "Demo.Plugin", "1.0")]
    assert entrypoints.version("demo_plugin") == "1.0"


def test_a_layout_it_does_not_read_goes_to_importlib_metadata(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    legacy = tmp_path / "site"
    (legacy / "old.egg-info").mkdir(parents=True)
    (legacy / "old.egg-info" / "PKG-INFO").write_text("Name: old\nVersion: 0.5\n",
                                                     encoding="utf-8")
    (legacy / "old.egg-info" / "entry_points.txt").write_text("[demo.group]\nlegacy = old\n",
                                                             encoding="utf-8")
    monkeypatch.setattr(sys, "path", [str(legacy)])
    eps = entrypoints.entry_points("demo.group")
    assert [(ep.name, ep.value) for ep in eps] == [("legacy", "old")]
    assert not isinstance(eps[0], entrypoints.EntryPoint)  # importlib.metadata's own
    assert entrypoints.version("old") == "0.5"
