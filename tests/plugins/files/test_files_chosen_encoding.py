"""A legacy multi-byte file the model can settle, one version at a time (issue 36, item 18).

Two short GB18030 lines are too little text to guess from: read_file showed them as
U+FFFD and refused every edit that brought Chinese text in until ``[files] encodings``
was set, which only the user can. Now the model reads the file again with
``encoding="gb18030"``: the result says so, the observation of that version keeps it,
and edits and writes of that version (and of the versions the session's own edits
write) read and write GB18030. A version changed behind the session's back is not
covered by the choice. The user may also list ``[files] fallback_encodings``, which a
workspace config cannot set. Nothing is ever guessed silently: a read says how it knows.

Through ``callgate replay`` in a subprocess (the helper checks every output line is
strict UTF-8), except where a test needs the session object.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from callgate._fs.observations import Present, entry_from_json, entry_to_json

from .test_files_legacy_encodings import call, ok, refused, replay

GB = "名字 = 张三\n地址 = 北京\n".encode("gb18030")  # 24 bytes: no guess can be made
SETTLED_NOTE = ('[encoding: gb18030, as read_file was asked (encoding="gb18030"): edits of '
                "this version read and write it in gb18030]")


def test_two_gb18030_lines_are_settled_by_read_file_and_edited_in_gb18030(tmp_path):
    out, ws = replay(tmp_path, {"c.txt": GB}, [
        call("r0", "read_file", path="c.txt"),
        call("e0", "edit_file", path="c.txt", old_string=" = ", new_string=": ",
             replace_all=True),
        call("r1", "read_file", path="c.txt", encoding="gb18030"),
        call("e1", "edit_file", path="c.txt", old_string="北京", new_string="上海"),
        call("e2", "edit_file", path="c.txt", old_string="张三", new_string="李四"),
        call("r2", "read_file", path="c.txt"),
        call("w1", "write_file", path="c.txt", content="名字 = 王五\n"),
    ])
    # without the encoding: U+FFFD, said plainly, with the way to settle it
    first = ok(out["r0"])
    assert first.startswith("1→\ufffd")
    assert 'read it again with encoding="<name>", which settles it for this version' in first
    assert "it reads without an error as gb18030" in first
    # ASCII edits were always safe; the edit that brings Chinese in now works
    ok(out["e0"])
    assert ok(out["r1"]) == f"1→名字: 张三\n2→地址: 北京\n\n{SETTLED_NOTE}"
    assert "+地址: 上海" in ok(out["e1"])
    ok(out["e2"])  # the version the session wrote keeps the encoding
    assert ok(out["r2"]) == f"1→名字: 李四\n2→地址: 上海\n\n{SETTLED_NOTE}"
    assert out["r2"]["meta"]["encoding"] == "gb18030"
    assert out["r2"]["meta"]["encoding_basis"] == "declared"
    ok(out["w1"])
    assert (ws / "c.txt").read_bytes() == "名字 = 王五\n".encode("gb18030")


def test_the_choice_covers_only_the_version_read(tmp_path):
    out, ws = replay(tmp_path, {"c.txt": GB}, [
        call("r1", "read_file", path="c.txt", encoding="gb18030"),
        call("x1", "raw_append", path="c.txt", hex="cec4d7d60a"),  # "文字\n", behind its back
        call("e1", "edit_file", path="c.txt", old_string="北京", new_string="上海"),
        call("r2", "read_file", path="c.txt"),
        call("e2", "edit_file", path="c.txt", old_string="= ", new_string="= 新",
             replace_all=True),
    ])
    ok(out["r1"])
    # stale, and the detail shows the change in the encoding the model settled
    assert "+文字" in refused(out["e1"], "FS_STALE_VERSION")
    after = GB + "文字\n".encode("gb18030")
    assert (ws / "c.txt").read_bytes() == after
    # the new version is not covered: read as before, unsettled, and Chinese is refused
    assert out["r2"]["meta"]["encoding_basis"] in ("guessed", "unknown")
    refused(out["e2"], "FS_ENCODING_UNSETTLED")
    assert (ws / "c.txt").read_bytes() == after


def test_an_encoding_that_does_not_fit_is_refused_and_nothing_is_recorded(tmp_path):
    out, ws = replay(tmp_path, {"c.txt": GB, "u.txt": "héllo\n".encode(),
                                "d.txt": "Тест\n".encode("cp1251"),
                                "k.py": b"# -*- coding: latin-1 -*-\nx = '\xe9'\n"}, [
        call("b1", "read_file", path="c.txt", encoding="utf-8"),
        call("b2", "read_file", path="c.txt", encoding="nope"),
        call("b3", "read_file", path="c.txt", encoding="utf-7"),
        call("e1", "edit_file", path="c.txt", old_string="a", new_string="b"),
        call("s1", "read_file", path="u.txt", encoding="cp1251"),
        call("s2", "read_file", path="d.txt", encoding="koi8-r"),
        call("s3", "read_file", path="k.py", encoding="cp1252"),
        call("s4", "read_file", path="u.txt", encoding="UTF8"),
        call("e4", "edit_file", path="u.txt", old_string="héllo", new_string="hé"),
    ], config='encodings = {"d.txt" = "cp1251"}\n')
    assert "c.txt is not utf-8: line 1 holds bytes (c3 fb d7 d6)" in \
        refused(out["b1"], "FS_ENCODING_MISMATCH")
    for cid, says in (("b2", "which is not an encoding Python knows"),
                      ("b3", "a stateful encoding")):
        assert out[cid]["error"]["kind"] == "invalid_arguments"
        assert out[cid]["error"]["signature"].startswith("argument_validation:read_file:")
        assert says in out[cid]["content"]
    refused(out["e1"], "FS_NOT_OBSERVED")  # no failed read recorded anything
    assert (ws / "c.txt").read_bytes() == GB
    assert "u.txt is valid UTF-8, so it is not read as cp1251" in \
        refused(out["s1"], "FS_ENCODING_SETTLED")
    assert 'd.txt is declared cp1251 by [files] encodings "d.txt"' in \
        refused(out["s2"], "FS_ENCODING_SETTLED")
    assert "k.py declares iso8859-1 in its coding line" in \
        refused(out["s3"], "FS_ENCODING_SETTLED")
    assert ok(out["s4"]) == "1→héllo"  # the encoding it has: nothing to settle
    ok(out["e4"])


def test_a_write_in_another_encoding_does_not_carry_the_choice(tmp_path):
    """write_file follows the coding line of its content: the version it writes is in that
    encoding, and the next read says so (the choice was for the version written over)."""
    content = "# -*- coding: cp1251 -*-\nимя = 'Иван'\n"
    out, ws = replay(tmp_path, {"c.txt": GB}, [
        call("r1", "read_file", path="c.txt", encoding="gb18030"),
        call("w1", "write_file", path="c.txt", content=content),
        call("r2", "read_file", path="c.txt"),
    ])
    ok(out["w1"])
    assert (ws / "c.txt").read_bytes() == content.encode("cp1251")
    assert ok(out["r2"]) == ("1→# -*- coding: cp1251 -*-\n2→имя = 'Иван'\n\n[encoding: cp1251, "
                             "declared by its coding line]")


def test_move_file_carries_the_choice(tmp_path):
    out, ws = replay(tmp_path, {"c.txt": GB}, [
        call("r1", "read_file", path="c.txt", encoding="gb18030"),
        call("m1", "move_file", source_path="c.txt", destination_path="d/c.txt"),
        call("e1", "edit_file", path="d/c.txt", old_string="北京", new_string="上海"),
    ])
    ok(out["m1"])
    ok(out["e1"])
    assert (ws / "d/c.txt").read_bytes() == "名字 = 张三\n地址 = 上海\n".encode("gb18030")


def test_the_users_fallback_list_settles_undeclared_legacy_files(tmp_path):
    out, ws = replay(tmp_path, {"c.txt": GB, "u.txt": "héllo\n".encode()}, [
        call("r1", "read_file", path="c.txt"),
        call("e1", "edit_file", path="c.txt", old_string="北京", new_string="上海"),
        call("r2", "read_file", path="u.txt"),
    ], config='fallback_encodings = ["shift_jis", "gb18030"]\n')
    assert ok(out["r1"]) == ("1→名字 = 张三\n2→地址 = 北京\n\n[encoding: gb18030, the first of "
                             "the user's [files] fallback_encodings that reads c.txt]")
    ok(out["e1"])
    assert (ws / "c.txt").read_bytes() == "名字 = 张三\n地址 = 上海\n".encode("gb18030")
    assert ok(out["r2"]) == "1→héllo"  # UTF-8 first, always


def _replay_with_user_config(tmp_path: Path, user: str, workspace_config: str,
                             files: dict[str, bytes], calls: list[dict]) -> tuple[dict, str]:
    ws, home, conf = tmp_path / "ws", tmp_path / "home", tmp_path / "conf"
    for d in (ws, home, conf):
        d.mkdir(parents=True)
    for rel, data in files.items():
        (ws / rel).write_bytes(data)
    (ws / "callgate.toml").write_text(workspace_config)
    (conf / "config.toml").write_text(user)
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("\n".join(json.dumps(c) for c in calls) + "\n")
    env = {**os.environ, "CALLGATE_HOME": str(home), "CALLGATE_CONFIG_HOME": str(conf),
           "CALLGATE_LOAD_PLUGINS": "files"}
    proc = subprocess.run([sys.executable, "-m", "callgate_cli", "replay", "-v",
                           str(transcript), "--workspace", str(ws)],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return {r["id"]: r for r in map(json.loads, proc.stdout.splitlines())}, proc.stderr


def test_attack_a_workspace_config_cannot_set_the_fallback_list(tmp_path):
    calls = [call("r1", "read_file", path="c.txt"),
             call("e1", "edit_file", path="c.txt", old_string="北京", new_string="上海")]
    planted = "[files]\nwatch = false\nfallback_encodings = [\"gb18030\"]\n"
    out, stderr = _replay_with_user_config(tmp_path, "", planted, {"c.txt": GB}, calls)
    assert "could not be told" in ok(out["r1"])
    refused(out["e1"], "FS_NO_MATCH")
    assert (tmp_path / "ws/c.txt").read_bytes() == GB
    assert "files.fallback_encodings in the workspace config is ignored" in stderr
    # the positive control: the same list in the user's own config applies
    out, _ = _replay_with_user_config(tmp_path / "user", planted, "", {"c.txt": GB}, calls)
    assert "fallback_encodings that reads c.txt" in ok(out["r1"])
    ok(out["e1"])


def test_a_fallback_list_callgate_cannot_use_fails_boot_naming_the_entry(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text('[files]\nfallback_encodings = [\n  "gb18030",\n  "utf-7",\n]\n')
    proc = subprocess.run([sys.executable, "-m", "callgate_cli", "call", "read_file",
                           '{"path": "x"}', "--workspace", str(tmp_path), "--config", str(cfg)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip() == (f'callgate: {cfg}:4: files.fallback_encodings: "utf-7", a '
                                   "stateful encoding, which callgate cannot edit safely; list "
                                   "encodings callgate can edit (gb18030, cp1251, shift_jis, "
                                   "...)")


def test_the_choice_survives_in_a_durable_session_record():
    entry = Present((1,) * 9, (2, 3), "ab", "gb18030")
    assert entry_from_json(json.loads(json.dumps(entry_to_json(entry)))) == entry
    plain = Present((1,) * 9, (2, 3), None)
    assert "encoding" not in entry_to_json(plain)
    assert entry_from_json(entry_to_json(plain)) == plain
