"""One read deny list for every reader (issue 16, defect 5).

With ``[files] read_denylist = true``, ``.env*``, ``.git-credentials``, ``.netrc``, ``*.pem``,
``*.key``, ``*.p12``, ``*.pfx`` (any component below a root, any case) and ``~/.ssh/**`` are
answered exactly like missing paths by read_file, the mutations, grep (both engines), glob,
ls, code_index, view_image, notebook_edit, a plugin reading through ``ctx.files``, and the
same tools called through ``use_capability``; walks leave them out. Before the fix only
read_file refused: ``grep {"pattern": ".", "path": ".env"}`` printed ``API_KEY=...``.
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from . import _api_tools

SECRETS = ("sk-test-4b1d", "PEM-SECRET-LINE", "leaked_symbol", "SSH-KEY-LINE", "NETRC-LINE")


def _png() -> bytes:
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + \
            struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)) \
        + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00")) + chunk(b"IEND", b"")


NOTEBOOK = json.dumps({"cells": [{"cell_type": "code", "execution_count": None, "id": "a1",
                                  "metadata": {}, "outputs": [], "source": ["x = 1\n"]}],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
FILES: dict[str, str | bytes] = {
    ".env": "API_KEY=sk-test-4b1d\n",
    "config/.env.local": "API_KEY=sk-test-4b1d\n",
    "server.pem": "-----BEGIN PRIVATE KEY-----\nPEM-SECRET-LINE\n",
    "deploy/SERVER.PEM": "PEM-SECRET-LINE\n",
    ".netrc": "machine example.com password NETRC-LINE\n",
    "vault.key/mod.py": "def leaked_symbol():\n    return 'PEM-SECRET-LINE'\n",
    "badge.pfx": _png(),
    ".env.ipynb": NOTEBOOK,
    "src/app.py": "def visible():\n    return 1\n",
    "notes.txt": "a plain line\n",
}


@pytest.fixture
def denying(callgate_session: Callable[..., Any], tmp_path: Path,
            monkeypatch: pytest.MonkeyPatch) -> Callable[..., Any]:
    """``denying(on=True)``: a session of every reading family on `FILES`, with a home
    directory (``~/.ssh`` inside) readable as an extra read root."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("SSH-KEY-LINE\n")
    (home / "readme.txt").write_text("home readme\n")
    monkeypatch.setenv("HOME", str(home))

    def make(on: bool = True, engine: str = "rg") -> Any:
        s = callgate_session(
            plugins=[_api_tools], files=FILES,
            entrypoints=["files", "search", "code", "media", "capability"],
            config={"files": {"read_denylist": on, "watch": False},
                    "search": {"grep_engine": engine},
                    "workspace": {"extra_read_roots": [str(home)]}})
        s.home = home
        return s

    return make


def shows_secret(result: Any) -> bool:
    text = result.text + "".join(repr(i.data) for i in result.images)
    return any(secret in text for secret in SECRETS)


def test_the_deny_list_off_lets_every_reader_through(denying: Callable[..., Any]) -> None:
    """The control: without the deny list these reads show the secrets (so the refusals
    below are the deny list's doing)."""
    s = denying(on=False)
    assert "sk-test-4b1d" in s.call("grep", pattern=".", path=".env").text
    assert "PEM-SECRET-LINE" in s.call("grep", pattern="SECRET").text
    assert "server.pem" in s.call("glob", pattern="**/*.pem").text
    assert "leaked_symbol" in s.call("code_index", action="outline").text


def test_denied_reads_answer_exactly_like_missing_paths(denying: Callable[..., Any]) -> None:
    s = denying()
    for path in (".env", "server.pem", "deploy/SERVER.PEM", ".netrc", "vault.key/mod.py",
                 f"{s.home}/.ssh/id_ed25519"):
        denied = s.call("read_file", path=path)
        missing = s.call("read_file", path=path + "-nope")
        assert denied.error.kind == "not_found", denied.text
        assert denied.error.signature == missing.error.signature == "FS_NOT_FOUND"
        assert denied.text.splitlines()[0] == \
            missing.text.splitlines()[0].replace(path + "-nope", path)
    seen = s.session.observations()
    assert not [p for p in seen if not p.endswith("-nope")], seen  # denied: nothing recorded


@pytest.mark.parametrize("engine", ["rg", "python"])
def test_grep_never_shows_a_denied_file(denying: Callable[..., Any], engine: str) -> None:
    s = denying(engine=engine)
    named = s.call("grep", pattern=".", path=".env")
    assert named.error.kind == "not_found" and "sk-test" not in named.text
    for args in ({"pattern": "."}, {"pattern": "SECRET|sk-test|NETRC"},
                 {"pattern": ".", "path": "deploy"}, {"pattern": ".", "path": str(s.home)},
                 {"pattern": ".", "glob": "*.pem"}):
        r = s.call("grep", args)
        assert not shows_secret(r), (args, r.text)
    assert "src/app.py" in s.call("grep", pattern="visible").text


def test_glob_and_ls_leave_denied_names_out(denying: Callable[..., Any]) -> None:
    s = denying()
    listed = [s.call("glob", pattern="**/*").text, s.call("glob", pattern="**/*.pem").text,
              s.call("glob", pattern="*", path=str(s.home)).text,
              s.call("ls", path=".").text, s.call("ls", path=".", recursive=True).text,
              s.call("ls", path=str(s.home), recursive=True).text]
    for text in listed:
        for name in (".env", "server.pem", "SERVER.PEM", ".netrc", "vault.key", "badge.pfx",
                     ".ssh", "id_ed25519"):
            assert name not in text, (name, text)
    assert "notes.txt" in listed[0] and "readme.txt" in listed[2]
    assert s.call("ls", path="vault.key").error.kind == "not_found"


def test_code_index_view_image_and_notebooks_refuse_denied_paths(denying: Callable[..., Any]
                                                                ) -> None:
    s = denying()
    assert "leaked_symbol" not in s.call("code_index", action="outline").text
    assert "visible" in s.call("code_index", action="outline").text
    assert s.call("code_index", action="outline", path="vault.key/mod.py").error.kind == \
        "not_found"
    image = s.call("view_image", path="badge.pfx")
    assert image.error.kind == "not_found" and not image.images
    nb = s.call("notebook_edit", path=".env.ipynb", cell_number=0, new_source="y = 2\n")
    assert nb.error.kind == "not_found"
    assert json.loads(s.read(".env.ipynb")) == json.loads(NOTEBOOK)


def test_mutations_and_the_public_file_api_refuse_denied_files(denying: Callable[..., Any]
                                                               ) -> None:
    s = denying()
    before = s.snapshot()
    for call in (("edit_file", {"path": ".env", "old_string": "API", "new_string": "X"}),
                 ("write_file", {"path": "server.pem", "content": "x\n"}),
                 ("move_file", {"source_path": ".env", "destination_path": "plain.txt"}),
                 ("delete_symbol", {"path": "vault.key/mod.py", "name": "leaked_symbol"}),
                 ("peek", {"path": ".env"}), ("peek", {"path": "vault.key/mod.py"})):
        r = s.call(*call)
        assert r.error.kind == "not_found", (call, r.text)
        assert not shows_secret(r)
    s.assert_unchanged(before)
    assert s.call("peek", path="notes.txt").text == "a plain line\n"


def test_use_capability_goes_through_the_same_deny_list(denying: Callable[..., Any]) -> None:
    s = denying()
    for tool, args in (("grep", {"pattern": ".", "path": ".env"}), ("grep", {"pattern": "."}),
                       ("read_file", {"path": "server.pem"}), ("glob", {"pattern": "**/*"}),
                       ("ls", {"path": ".", "recursive": True}),
                       ("code_index", {"action": "outline"})):
        r = s.call("use_capability", {"action": "call", "capability_id": f"tool:{tool}",
                                      "arguments": args})
        assert r.error is None or r.error.kind == "not_found", (tool, r.text)
        assert not shows_secret(r), (tool, r.text)
    listing = s.call("use_capability", {"action": "call", "capability_id": "tool:ls",
                                        "arguments": {"path": "."}})
    assert "notes.txt" in listing.text and ".env" not in listing.text
