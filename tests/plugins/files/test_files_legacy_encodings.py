"""Issue 26 through ``callgate replay`` in a subprocess: results stay valid UTF-8, legacy
8-bit files are never silently corrupted, and FS_NO_MATCH says what differs.

Every test checks that each output line decodes as strict UTF-8 (the replay helper
fails otherwise), and after each refusal that the file is byte-for-byte as it was.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

RAW_PLUGIN = textwrap.dedent('''
    """A test plugin that appends raw bytes to a file behind the session's back."""
    from callgate import ToolSpec, hookimpl

    def raw_append(ctx, args):
        with open(ctx.workspace.resolve(args["path"]).path, "ab") as fh:
            fh.write(bytes.fromhex(args["hex"]))
        return "appended"

    @hookimpl
    def callgate_register_tools(registry):
        registry.add(ToolSpec(name="raw_append", description="append bytes outside the ledger",
                              schema={"type": "object", "properties": {
                                  "path": {"type": "string"}, "hex": {"type": "string"}}},
                              execute=raw_append, visibility="surface"))
''')


def _site(root: Path) -> Path:
    site = root / "site"
    site.mkdir()
    (site / "cg_raw.py").write_text(RAW_PLUGIN)
    info = site / "cg_raw-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: cg-raw\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[callgate]\nraw = cg_raw\n")
    return site


def replay(tmp_path: Path, files: dict[str, bytes], calls: list[dict[str, Any]],
           config: str = "") -> tuple[dict[str, dict[str, Any]], Path]:
    """Run ``calls`` through ``callgate replay`` on a workspace holding ``files``; every
    output line must be strict UTF-8. Returns the results by id and the workspace."""
    ws = tmp_path / "ws"
    for rel, data in files.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_bytes(data)
    cfg = tmp_path / "callgate.toml"
    cfg.write_text("[files]\nwatch = false\n" + config)
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("\n".join(json.dumps(c) for c in calls) + "\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(_site(tmp_path)), os.environ.get(
        "PYTHONPATH", "")]), "CALLGATE_LOAD_PLUGINS": "files,raw",
        # a C locale makes stdout escape lone surrogates as raw bytes instead of failing:
        # exactly how the defect reached the output
        "LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONIOENCODING": "utf-8:surrogateescape"}
    proc = subprocess.run([sys.executable, "-m", "callgate_cli", "replay", str(transcript),
                           "--workspace", str(ws), "--surface", "full", "--config", str(cfg)],
                          capture_output=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    out = {}
    for raw in proc.stdout.splitlines():
        line = raw.decode("utf-8")  # strict: a lone surrogate would have become raw bytes
        result = json.loads(line)
        out[result["id"]] = result
    assert len(out) == sum(len(c["batch"]) if "batch" in c else 1 for c in calls)
    return out, ws


def call(cid: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"id": cid, "name": name, "arguments": arguments}


def ok(result: dict[str, Any]) -> str:
    assert not result["is_error"], result
    return result["content"]


def refused(result: dict[str, Any], code: str) -> str:
    assert result["is_error"] and result["error"]["signature"] == code, result
    return result["content"]


LOSSY = b'a = "\xcf\xf0\xe8"\nb = 1\n'           # issue 26 repro 1 (cp1251 "При")
GB_LOOKALIKE = b"# \xd2\xe5\xf1\xf2\nx = 1\n"      # issue 26 repro 2 (cp1251 "Тест")
NO_FINAL_NEWLINE = b"def f():\n    return 1"       # issue 26 repro 3


def test_the_three_repros(tmp_path):
    files = {"a.py": LOSSY, "r.py": GB_LOOKALIKE, "n.py": NO_FINAL_NEWLINE}
    out, ws = replay(tmp_path, files, [
        call("r1", "read_file", path="a.py"),
        call("e1", "edit_file", path="a.py", old_string="b = 1", new_string="b = 2"),
        call("r2", "read_file", path="r.py"),
        call("e2", "edit_file", path="r.py", old_string="x = 1", new_string='x = "Да"'),
        call("m2", "multi_edit", path="r.py", edits=[
            {"old_string": "x = 1", "new_string": "x = 3"},
            {"old_string": "x = 3", "new_string": "x = 'Да'"}]),
        call("r3", "read_file", path="n.py"),
        call("e3", "edit_file", path="n.py", old_string="    return 1\n",
             new_string="    return 2\n"),
    ])
    # 1: the diff shows the invalid bytes as read_file does, and the bytes survive the edit
    assert ok(out["r1"]).startswith('1→a = "\ufffd\ufffd\ufffd"\n2→b = 1')
    assert ok(out["e1"]).endswith(' a = "\ufffd\ufffd\ufffd"\n-b = 1\n+b = 2')
    assert (ws / "a.py").read_bytes() == b'a = "\xcf\xf0\xe8"\nb = 2\n'
    # 2: not shown as Chinese; new Cyrillic is refused with how to settle it; nothing changed
    shown = ok(out["r2"])
    assert "义" not in shown and shown.startswith("1→# \ufffd\ufffd\ufffd\ufffd\n2→x = 1")
    assert "r.py is not valid UTF-8 and its encoding could not be told" in shown
    message = refused(out["e2"], "FS_ENCODING_UNSETTLED")
    assert '("Да")' in message and "nothing was written" in message
    assert '[files] encodings = {"r.py" = "<encoding>"}' in message
    assert "# -*- coding: <encoding> -*-" in message and "write_file" in message
    assert refused(out["m2"], "FS_ENCODING_UNSETTLED").startswith(
        "FS_ENCODING_UNSETTLED: edit 2 of 2: r.py is not valid UTF-8")
    assert (ws / "r.py").read_bytes() == GB_LOOKALIKE
    # 3: the hint says what differs instead of repeating the line
    message = refused(out["e3"], "FS_NO_MATCH")
    assert message == (
        'FS_NO_MATCH: old_string was not found in n.py (closest line 2: "return 1"); re-read '
        "that region and copy the text exactly, indentation included\n"
        "what differs: the file has no newline at its end (after line 2), but old_string ends "
        "with one; leave the final newline out of old_string")
    assert (ws / "n.py").read_bytes() == NO_FINAL_NEWLINE


def test_ascii_edits_and_whole_file_writes_of_an_unsettled_file(tmp_path):
    out, ws = replay(tmp_path, {"r.py": GB_LOOKALIKE, "w.py": GB_LOOKALIKE,
                                "u.py": b"caf\xe9\r\nx = 1\r\n"}, [
        call("r1", "read_file", path="r.py"),
        call("e1", "edit_file", path="r.py", old_string="x = 1", new_string="x = 2"),
        call("d1", "delete_range", path="r.py", start_anchor="x = 2", end_anchor="x = 2"),
        call("r2", "read_file", path="w.py"),
        call("w2", "write_file", path="w.py", content='# Тест\nx = "Да"\n'),
        call("r3", "read_file", path="u.py"),
        call("w3", "write_file", path="u.py", content="caf\ufffd\nx = 2\n"),
        call("w4", "write_file", path="u.py", content="café\nx = 2\n"),
    ])
    ok(out["e1"])
    assert ok(out["d1"]).startswith("deleted lines 2-2 of r.py")
    assert (ws / "r.py").read_bytes() == b"# \xd2\xe5\xf1\xf2\n"
    # the whole content is the model's: written as UTF-8, and the result says so
    assert ok(out["w2"]) == "wrote 22 bytes to w.py (as UTF-8: its encoding was unknown)"
    assert (ws / "w.py").read_bytes() == '# Тест\nx = "Да"\n'.encode()
    # U+FFFD over undecodable bytes would destroy them: refused; real text is written
    assert "replace those bytes for good" in refused(out["w3"], "FS_ENCODING_UNSETTLED")
    assert ok(out["w4"]).endswith("(as UTF-8: its encoding was unknown)")
    assert (ws / "u.py").read_bytes() == "café\r\nx = 2\r\n".encode()


CP1251_DECLARED = "# -*- coding: cp1251 -*-\n# Тест\nx = 1\n".encode("cp1251")


def test_declared_cp1251_is_edited_in_cp1251(tmp_path):
    legacy = "# Загрузка конфигурации\nx = 1\n".encode("cp1251")
    out, ws = replay(tmp_path, {"c.py": CP1251_DECLARED, "legacy/deep/er/l.py": legacy,
                                "x.xml": '<?xml version="1.0" encoding="windows-1251"?>\n'
                                         "<a>Тест</a>\n".encode("cp1251")}, [
        call("r1", "read_file", path="c.py"),
        call("e1", "edit_file", path="c.py", old_string="x = 1", new_string='x = "Да"'),
        call("e2", "edit_file", path="c.py", old_string='"Да"', new_string='"你"'),
        call("e3", "edit_file", path="c.py", old_string="# -*- coding: cp1251 -*-\n",
             new_string=""),
        call("r4", "read_file", path="legacy/deep/er/l.py"),
        call("e4", "edit_file", path="legacy/deep/er/l.py", old_string="x = 1",
             new_string='x = "Привет"'),
        call("r5", "read_file", path="x.xml"),
        call("e5", "edit_file", path="x.xml", old_string="Тест", new_string="Проверка"),
        call("w6", "write_file", path="legacy/new.txt", content="Новый файл\n"),
    ], config='encodings = {"legacy/**" = "cp1251"}\n')
    assert ok(out["r1"]) == ("1→# -*- coding: cp1251 -*-\n2→# Тест\n3→x = 1\n\n"
                             "[encoding: cp1251, declared by its coding line]")
    assert ok(out["e1"]).endswith('-x = 1\n+x = "Да"')
    # cp1251 cannot write 你; removing the coding line would leave cp1251 bytes undeclared
    assert '"你" (U+4F60 CJK UNIFIED IDEOGRAPH-4F60)' in refused(out["e2"], "FS_UNENCODABLE")
    assert "no longer" not in refused(out["e3"], "FS_ENCODING_DECLARATION")
    assert (ws / "c.py").read_bytes() == \
        '# -*- coding: cp1251 -*-\n# Тест\nx = "Да"\n'.encode("cp1251")
    # a config glob with ** crosses directories
    assert ok(out["r4"]).startswith("1→# Загрузка конфигурации\n2→x = 1\n\n[encoding: cp1251, "
                                    'declared by [files] encodings "legacy/**"]')
    ok(out["e4"])
    assert (ws / "legacy/deep/er/l.py").read_bytes() == \
        '# Загрузка конфигурации\nx = "Привет"\n'.encode("cp1251")
    assert "declared by its XML declaration" in ok(out["r5"])
    ok(out["e5"])
    assert (ws / "x.xml").read_bytes().endswith("<a>Проверка</a>\n".encode("cp1251"))
    # a new file under a declared glob is created in that encoding
    assert ok(out["w6"]) == "created legacy/new.txt (11 bytes, cp1251)"
    assert (ws / "legacy/new.txt").read_bytes() == "Новый файл\n".encode("cp1251")


GB_TEXT = "第一行\n第二行 x\n第三行\n"


def test_gb18030_round_trips_and_is_settled_by_a_declaration(tmp_path):
    out, ws = replay(tmp_path, {
        "g.txt": GB_TEXT.encode("gb18030"),
        "g.py": ("# -*- coding: gb18030 -*-\n" + GB_TEXT).encode("gb18030"),
        "cn/tiny.txt": "你好\n".encode("gbk"),
    }, [
        call("r1", "read_file", path="g.txt"),
        call("e1", "edit_file", path="g.txt", old_string="x", new_string="y"),
        call("e2", "edit_file", path="g.txt", old_string="第三行", new_string="第四行"),
        call("r3", "read_file", path="g.py"),
        call("e3", "edit_file", path="g.py", old_string="第三行", new_string="第四行"),
        call("r4", "read_file", path="cn/tiny.txt"),
        call("e4", "edit_file", path="cn/tiny.txt", old_string="你好", new_string="再见"),
    ], config='encodings = {"cn/*.txt" = "gb18030"}\n')
    # undeclared: read as a clear guess, marked as one; ASCII edits keep every other byte
    assert ok(out["r1"]) == (
        "1→第一行\n2→第二行 x\n3→第三行\n\n[g.txt is not UTF-8 and declares no encoding: shown "
        "as gb18030, a guess; edits that add non-ASCII text are refused until the encoding is "
        'settled: read it again with encoding="gb18030" if the text is right (or name the '
        "encoding that is), which settles it for this version (a coding line or the user's "
        "[files] encodings also settle it; write_file of the whole file makes it UTF-8)]")
    ok(out["e1"])
    message = refused(out["e2"], "FS_ENCODING_UNSETTLED")
    assert "it reads as gb18030, but that is only a guess" in message
    assert '[files] encodings = {"g.txt" = "gb18030"}' in message
    assert (ws / "g.txt").read_bytes() == GB_TEXT.replace("x", "y").encode("gb18030")
    # declared by a coding line or by config: Chinese text is written as GB18030
    ok(out["e3"])
    assert (ws / "g.py").read_bytes() == \
        ("# -*- coding: gb18030 -*-\n" + GB_TEXT.replace("第三行", "第四行")).encode("gb18030")
    assert ok(out["r4"]).startswith("1→你好\n")
    ok(out["e4"])
    assert (ws / "cn/tiny.txt").read_bytes() == "再见\n".encode("gb18030")


def test_stale_detail_of_a_file_with_invalid_bytes_is_valid_utf8(tmp_path):
    out, ws = replay(tmp_path, {"a.py": LOSSY}, [
        call("r1", "read_file", path="a.py"),
        call("x1", "raw_append", path="a.py", hex=b"c = '\xff\xfe'\n".hex()),
        call("e1", "edit_file", path="a.py", old_string="b = 1", new_string="b = 2"),
    ])
    message = refused(out["e1"], "FS_STALE_VERSION")
    assert message.endswith("changed since that read:\n@@ -2,0 +3 @@\n+c = '\ufffd\ufffd'")
    assert (ws / "a.py").read_bytes() == LOSSY + b"c = '\xff\xfe'\n"


def test_no_match_hints_show_invisible_differences(tmp_path):
    out, ws = replay(tmp_path, {
        "tabs.py": b"def f():\n\tx = 1\n\ty = 2\n",
        "spaces.py": b"x = 1  # one\n",
        "nbsp.py": "x\u00a0= 1\ny = 2\n".encode(),
        "crlf.txt": b"one\r\ntwo  three\r\n",
        "later.py": b"def f():\n    a = 1\n    b = 2\n",
        "anchor.txt": b"keep\nstart \nend\n",
    }, [
        {"batch": [call(f"r{i}", "read_file", path=p) for i, p in enumerate(
            ["tabs.py", "spaces.py", "nbsp.py", "crlf.txt", "later.py", "anchor.txt"])]},
        call("e0", "edit_file", path="tabs.py", old_string="def f():\n  x = 1\n  y = 2\n",
             new_string="z"),
        call("e1", "edit_file", path="spaces.py", old_string="x = 1 # one", new_string="z"),
        call("e2", "edit_file", path="nbsp.py", old_string="x = 1\ny = 2", new_string="z"),
        call("e3", "edit_file", path="crlf.txt", old_string="one\ntwo three", new_string="z"),
        call("e4", "edit_file", path="later.py", old_string="def f():\n    a = 1\n    b = 3\n",
             new_string="z"),
        call("d5", "delete_range", path="anchor.txt", start_anchor="start", end_anchor="end"),
    ])
    def hint(cid: str) -> str:
        # a run of refusals may get the storm breaker's advice after the message
        return refused(out[cid], "FS_NO_MATCH").split("\n", 1)[1]

    assert hint("e0").startswith(
        "what differs: line 2 is indented with 1 tab, old_string with 2 spaces")
    assert hint("e1").startswith(
        'what differs: line 1, column 7: the file has a space where old_string has "#"\n'
        '  file:       "x = 1  # one"\n  old_string: "x = 1 # one"')
    assert hint("e2").startswith(
        "what differs: line 1, column 2: the file has U+00A0 NO-BREAK SPACE where old_string "
        'has a space\n  file:       "x\\u00a0= 1"\n  old_string: "x = 1"')
    assert hint("e3").startswith(
        'what differs: line 2, column 5: the file has a space where old_string has "t"\n'
        '  file:       "two  three"\n  old_string: "two three"\n'
        "the file uses CRLF; LF-only old_string is already adapted, so the text differs")
    assert '(closest line 1: "def f():")' in out["e4"]["content"]
    assert hint("e4").startswith(
        'what differs: line 3, column 9: the file has "2" where old_string has "3"')
    assert hint("d5").startswith(
        "what differs: line 2 ends with 1 space, start_anchor with none")
    assert (ws / "tabs.py").read_bytes() == b"def f():\n\tx = 1\n\ty = 2\n"
    assert (ws / "anchor.txt").read_bytes() == b"keep\nstart \nend\n"
