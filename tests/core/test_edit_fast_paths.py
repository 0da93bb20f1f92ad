"""The shortcuts that make a small edit cheap keep every guarantee (issue 11 follow-up).

- A version's digest (every file up to 1 MiB) is checked by comparing the file with the bytes the
  digest was taken from (kept per session, within a budget), not by hashing:
  the same verdict, caught here on a rewrite that a stat cannot see.
- Snapshot budget accounting stays exact when sizes are remembered instead of
  re-encoded.
- A plain mutating tool is gated and run in one worker-thread hop.
"""

from __future__ import annotations

import hashlib
import os
import threading
from typing import Any

import attrs
import callgate._fs.observations as obs
import callgate_files
from callgate import ToolSpec, hookimpl
from callgate.files import ObservationLedger, Present, matches, version_of


def test_young_version_keeps_its_bytes_and_compares_them(tmp_path):
    f = tmp_path / "a"
    f.write_bytes(b"abc")
    ledger = ObservationLedger()
    entry = ledger.record_present(str(f), os.stat(f), content=b"abc")
    assert entry.digest == hashlib.sha256(b"abc").hexdigest()
    kept = ledger.content(entry)
    assert kept == b"abc" and matches(entry, os.stat(f), str(f), kept)
    # a same-size rewrite whose stat a coarse clock could not tell apart: forge the version
    f.write_bytes(b"xyz")
    forged = attrs.evolve(entry, version=version_of(os.stat(f)))
    assert ledger.content(forged) is None  # the kept bytes belong to the recorded version only
    assert not matches(forged, os.stat(f), str(f), kept)
    assert not matches(forged, os.stat(f), str(f))  # the digest says the same


def test_kept_bytes_follow_the_entry_and_stay_within_budget(tmp_path, monkeypatch):
    monkeypatch.setattr(obs, "CONTENT_BUDGET", 8)
    ledger = ObservationLedger()
    entries = []
    for i in range(3):
        f = tmp_path / f"f{i}"
        f.write_bytes(b"abcd")
        entries.append(ledger.record_present(str(f), os.stat(f), content=b"abcd"))
    assert ledger.content(entries[0]) is None and ledger.content(entries[2]) == b"abcd"
    assert ledger._content_bytes == 8
    ledger.forget(str(tmp_path / "f2"))
    assert ledger.content(entries[2]) is None and ledger._content_bytes == 4
    old = tmp_path / "f1"
    old.write_bytes(b"abcd")  # no content given: nothing kept, the file is hashed instead
    entry = ledger.record_present(str(old), os.stat(old))
    assert entry.digest is not None and ledger.content(entry) is None
    assert ledger._content_bytes == 0


def test_snapshot_budget_accounting_is_exact(tmp_path):
    ledger = ObservationLedger()
    f = tmp_path / "a"
    f.write_text("x")
    texts = ["é" * 10, "x" * 3, "\udcff" * 4]  # 20, 3 and 4 bytes in UTF-8 + surrogateescape
    for text in texts:
        entry = ledger.record_present(str(f), os.stat(f), snapshot=text)
        assert ledger.snapshot(entry) == text
        assert ledger._snapshot_bytes == len(text.encode("utf-8", "surrogateescape"))
    ledger.record_present(str(f), os.stat(f))
    assert ledger._snapshot_bytes == 0


def test_edit_refuses_a_young_file_rewritten_behind_an_unchanged_version(callgate_session):
    s = callgate_session(plugins=[callgate_files], files={"a.txt": "one\ntwo\n"})
    assert not s.call("read_file", {"path": "a.txt"}).is_error
    path = os.path.realpath(s.workspace / "a.txt")
    ledger = s.session.ledger
    entry = ledger.entry(path)
    assert isinstance(entry, Present) and ledger.content(entry) == b"one\ntwo\n"
    (s.workspace / "a.txt").write_bytes(b"ONE\ntwo\n")
    # pretend the rewrite kept every stat field (what a same-tick rewrite on a coarse clock
    # can look like): only the content check can catch it
    forged = attrs.evolve(entry, version=version_of(os.stat(path)))
    with ledger._lock:
        ledger._by_path[path] = forged
        ledger._contents[forged.identity] = (forged.version, forged.digest,
                                             b"one\ntwo\n")
    r = s.call("edit_file", {"path": "a.txt", "old_string": "two", "new_string": "2"})
    assert r.is_error and "FS_STALE_VERSION" in r.text
    assert (s.workspace / "a.txt").read_bytes() == b"ONE\ntwo\n"


class Probe:
    """A plain mutating tool that notes the thread it runs in; the gate is observed too."""

    __name__ = "probe"

    def __init__(self) -> None:
        self.threads: dict[str, int] = {}

    @hookimpl
    def callgate_register_tools(self, registry: Any) -> None:
        def execute(ctx: Any, args: dict[str, Any]) -> str:
            self.threads["tool"] = threading.get_ident()
            return "ok"

        registry.add(ToolSpec(name="probe", description="Probe.", execute=execute,
                              schema={"type": "object", "properties": {
                                  "path": {"type": "string"}}},
                              mutates_paths=("path",), visibility="surface"))


def test_gate_and_plain_tool_share_one_worker_thread_hop(callgate_session, monkeypatch):
    import callgate._pipeline.pipeline as session_mod

    probe = Probe()
    real = session_mod.check_paths

    def spying(*args: Any, **kwargs: Any) -> Any:
        probe.threads["gate"] = threading.get_ident()
        return real(*args, **kwargs)

    monkeypatch.setattr(session_mod, "check_paths", spying)
    hops = []
    real_run_sync = session_mod.anyio.to_thread.run_sync

    async def counting(fn: Any, *args: Any, **kwargs: Any) -> Any:
        hops.append(fn)
        return await real_run_sync(fn, *args, **kwargs)

    monkeypatch.setattr(session_mod.anyio.to_thread, "run_sync", counting)
    import callgate._pipeline.worker as worker_mod

    real_submit = worker_mod._POOL.submit
    monkeypatch.setattr(worker_mod._POOL, "submit", lambda job: (hops.append(job),
                                                                  real_submit(job)))
    s = callgate_session(plugins=[callgate_files, probe], files={"a.txt": "x"})
    assert not s.call("read_file", {"path": "a.txt"}).is_error
    hops.clear()
    r = s.call("probe", {"path": "a.txt"})
    assert not r.is_error, r.text
    assert probe.threads["gate"] == probe.threads["tool"] != threading.get_ident()
    assert len(hops) == 1


class Loader:
    """A plain mutating tool that loads its source and reports what the gate handed over."""

    __name__ = "loader"

    def __init__(self) -> None:
        self.seen: dict[str, Any] = {}

    @hookimpl
    def callgate_register_tools(self, registry: Any) -> None:
        def execute(ctx: Any, args: dict[str, Any]) -> str:
            gated = ctx.gated["path"]
            source = ctx.files.load(gated, tool="loader")
            self.seen = {"handed": gated.content, "data": source.data, "text": source.text}
            return "ok"

        registry.add(ToolSpec(name="loader", description="Loader.", execute=execute,
                              schema={"type": "object", "properties": {
                                  "path": {"type": "string"}}},
                              mutates_paths=("path",), visibility="surface"))


def test_the_gate_hands_a_young_versions_bytes_to_load(callgate_session):
    loader = Loader()
    s = callgate_session(plugins=[callgate_files, loader], files={"a.txt": "héllo\n"})
    assert not s.call("read_file", {"path": "a.txt"}).is_error
    assert not s.call("loader", {"path": "a.txt"}).is_error
    assert loader.seen["handed"] == "héllo\n".encode() == loader.seen["data"]
    assert loader.seen["text"] == "héllo\n"


def test_an_old_version_is_checked_by_its_bytes_too(callgate_session):
    """Age proves nothing (an mmap writer keeps size and times): an hour-old version is
    compared by bytes like a young one, and those bytes are handed to load."""
    loader = Loader()
    s = callgate_session(plugins=[callgate_files, loader], files={"a.txt": "old\n"})
    hour_ago = os.stat(s.workspace / "a.txt").st_mtime - 3600
    os.utime(s.workspace / "a.txt", (hour_ago, hour_ago))
    assert not s.call("read_file", {"path": "a.txt"}).is_error
    assert not s.call("loader", {"path": "a.txt"}).is_error
    assert loader.seen["handed"] == b"old\n" == loader.seen["data"]


def test_a_version_whose_bytes_were_not_kept_is_hashed_and_handed(callgate_session,
                                                                  monkeypatch):
    loader = Loader()
    s = callgate_session(plugins=[callgate_files, loader], files={"a.txt": "kept\n"})
    monkeypatch.setattr(obs, "CONTENT_BUDGET", 0)  # nothing kept: the digest decides
    assert not s.call("read_file", {"path": "a.txt"}).is_error
    assert not s.call("loader", {"path": "a.txt"}).is_error
    assert loader.seen["handed"] == b"kept\n" == loader.seen["data"]


def test_a_version_above_the_digest_limit_is_loaded_from_the_file(callgate_session,
                                                                   monkeypatch):
    loader = Loader()
    s = callgate_session(plugins=[callgate_files, loader], files={"a.txt": "large\n"})
    monkeypatch.setattr(obs, "DIGEST_MAX_BYTES", 4)
    assert not s.call("read_file", {"path": "a.txt"}).is_error
    assert not s.call("loader", {"path": "a.txt"}).is_error
    assert loader.seen["handed"] is None and loader.seen["data"] == b"large\n"
