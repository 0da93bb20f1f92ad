"""The observation ledger (files.md §5.1-5.2), directly."""

from __future__ import annotations

import os
import time

from callgate.files import Absent, ObservationLedger, Present, matches, needs_digest, version_of


def test_version_covers_metadata_and_identity(tmp_path):
    f = tmp_path / "a"
    f.write_text("x")
    v1 = version_of(os.stat(f))
    os.chmod(f, 0o600)
    assert version_of(os.stat(f)) != v1
    v2 = version_of(os.stat(f))
    os.link(f, tmp_path / "b")
    assert version_of(os.stat(f)) != v2


def test_lookup_by_identity_then_path(tmp_path):
    f = tmp_path / "a"
    f.write_text("x")
    os.link(f, tmp_path / "b")
    ledger = ObservationLedger()
    st = os.stat(f)
    ledger.record_present(str(f), st)
    entry = ledger.lookup(str(tmp_path / "b"), os.stat(tmp_path / "b"))
    assert isinstance(entry, Present) and matches(entry, os.stat(tmp_path / "b"), str(f))
    # another file at the observed path: a path hit with another identity is stale, not unseen
    g = tmp_path / "g"
    g.write_text("y")
    os.replace(g, f)
    entry = ledger.lookup(str(f), os.stat(f))
    assert isinstance(entry, Present) and not matches(entry, os.stat(f), str(f))


def test_absent_forget_and_move(tmp_path):
    ledger = ObservationLedger()
    ledger.record_absent("/x")
    assert isinstance(ledger.lookup("/x"), Absent)
    ledger.forget("/x")
    assert ledger.lookup("/x") is None
    f = tmp_path / "a"
    f.write_text("x")
    entry = ledger.record_present(str(f), os.stat(f), snapshot="x")
    assert ledger.snapshot(entry) == "x"
    dst = tmp_path / "b"
    os.rename(f, dst)
    ledger.move(str(f), str(dst), os.stat(dst))
    assert isinstance(ledger.lookup(str(f)), Absent)
    moved = ledger.lookup(str(dst), os.stat(dst))
    assert isinstance(moved, Present) and ledger.snapshot(moved) == "x"


def test_small_files_carry_a_digest_that_is_checked_whatever_their_age(tmp_path):
    f = tmp_path / "a"
    f.write_bytes(b"abc")
    st = os.stat(f)
    assert needs_digest(st)
    assert needs_digest(st, now_ns=time.time_ns() + 3_000_000_000)  # age proves nothing
    big = tmp_path / "big"
    big.write_bytes(b"x" * ((1 << 20) + 1))
    assert not needs_digest(os.stat(big))
    ledger = ObservationLedger()
    entry = ledger.record_present(str(f), st, content=b"abc")
    assert entry.digest is not None and matches(entry, st, str(f))
    # same size, same stat (forged by restoring times is not enough: ctime moves), but a
    # digest mismatch alone must also refuse
    with open(f, "r+b") as fh:
        fh.write(b"xyz")
    forged = Present(version_of(os.stat(f)), entry.identity, entry.digest)
    assert not matches(forged, os.stat(f), str(f))


def test_snapshots_stay_within_budget(tmp_path, monkeypatch):
    import callgate._fs.observations as obs

    monkeypatch.setattr(obs, "SNAPSHOT_BUDGET", 10)
    ledger = ObservationLedger()
    entries = []
    for i in range(3):
        f = tmp_path / f"f{i}"
        f.write_text("x")
        entries.append(ledger.record_present(str(f), os.stat(f), snapshot="abcdef"))
    assert ledger.snapshot(entries[0]) is None and ledger.snapshot(entries[2]) == "abcdef"
