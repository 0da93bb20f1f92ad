"""install_source: plan, then apply with the planId; skills and MCP entries; refusals."""

from __future__ import annotations

import json
import os
import stat
import sys
import time
import zipfile
from pathlib import Path

import callgate_capability
import callgate_skills
import pytest
import tomlkit
from callgate.testing import run_replay
from callgate_capability import MCP_SERVERS

from .conftest import Approver, skill_md

CONFIG = """# my project config
[permissions]
mode = "allow"  # keep it simple

# servers below
[mcp_servers.old]
command = "old-server"
"""

MCP_JSON = json.dumps(
    {
        "mcpServers": {
            "notes": {
                "command": "uvx",
                "args": ["notes-mcp", "--dir", "."],
                "env": {"TOKEN": "t0k"},
            },
            "remote": {"url": "https://example.invalid/mcp"},
        }
    }
)


def _plan(s, **args):
    return json.loads(s.expect_ok("install_source", args))


def _apply(s, plan, **args):
    return s.call("install_source", {**args, "apply": True, "planId": plan["planId"]})


def _folder(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_a_plain_skill_folder_plans_then_applies(skills):
    s = skills(
        {
            "src/tidy/SKILL.md": skill_md("tidy", "Tidy things", "Tidy $ARGUMENTS"),
            "src/tidy/references/style.md": "style\n",
        }
    )
    plan = _plan(s, source="src/tidy")
    assert plan["status"] == "planned" and plan["planId"].startswith("pl_")
    [action] = plan["actions"]
    assert action == {
        "kind": "skill",
        "name": "tidy",
        "scope": "project",
        "target": ".agents/skills/tidy/",
        "riskLevel": "low",
        "files": ["SKILL.md", "references/style.md"],
        "why": "instructions only",
    }
    assert not (s.workspace / ".agents").exists()  # a plan changes nothing
    assert _plan(s, source="src/tidy")["planId"] == plan["planId"]  # the id is the plan's
    done = json.loads(_apply(s, plan, source="src/tidy").text)
    assert done["status"] == "done" and done["installed"] == ["tidy"]
    assert (s.workspace / ".agents/skills/tidy/references/style.md").read_text() == "style\n"
    assert "Tidy here" in s.expect_ok("read_skill", {"name": "tidy", "arguments": "here"})
    again = _plan(s, source="src/tidy")
    assert again["status"] == "blocked" and "already" in again["actions"][0]["blocked"]


def test_a_wrong_missing_or_stale_plan_id_is_refused_and_nothing_changes(skills):
    s = skills(
        {"src/tidy/SKILL.md": skill_md("tidy"), "callgate.toml": CONFIG, "src/.mcp.json": MCP_JSON}
    )
    plan = _plan(s, source="src")
    before = s.snapshot()
    bad = s.call("install_source", {"source": "src", "apply": True, "planId": "pl_" + "0" * 32})
    assert bad.is_error and "INSTALL_PLAN_CHANGED" in bad.text
    missing = s.call("install_source", {"source": "src", "apply": True})
    assert missing.is_error and "INSTALL_PLAN_REQUIRED" in missing.text
    s.expect_error(
        "install_source",
        {"source": "src", "apply": True, "planId": "nope"},
        kind="invalid_arguments",
    )
    (s.workspace / "src/tidy/SKILL.md").write_text(skill_md("tidy", "changed"))
    before = s.snapshot()
    stale = _apply(s, plan, source="src")
    assert stale.is_error and "INSTALL_PLAN_CHANGED" in stale.text
    s.assert_unchanged(before)


def test_skill_with_scripts_is_high_risk_and_always_asks(skills):
    files = {"src/run-it/SKILL.md": skill_md("run-it"), "src/run-it/scripts/go.sh": "echo\n"}
    refuse = Approver(False)
    s = skills(files, plugins=(refuse,), config={"permissions": {"allow": ["install_source"]}})
    plan = _plan(s, source="src/run-it")
    assert (
        plan["actions"][0]["riskLevel"] == "high" and "scripts/go.sh" in plan["actions"][0]["why"]
    )
    before = s.snapshot()
    result = _apply(s, plan, source="src/run-it")
    assert result.is_error and result.error.kind == "blocked"  # an allow rule does not skip it
    assert refuse.asked == ["install_source"]
    s.assert_unchanged(before)
    approve = Approver(True)
    s = skills(plugins=(approve,), workspace=s.workspace)
    assert json.loads(_apply(s, plan, source="src/run-it").text)["status"] == "done"
    assert (s.workspace / ".agents/skills/run-it/scripts/go.sh").is_file()


def test_mcp_source_becomes_a_table_and_keeps_comments(skills, callgate_session):
    approve = Approver(True)
    s = skills(
        {"callgate.toml": CONFIG, "vendor/.mcp.json": MCP_JSON},
        plugins=(approve, callgate_capability),
        config={"mcp_servers": {"old": {"command": "old-server"}}},
    )
    plan = _plan(s, source="vendor/.mcp.json")
    [action] = plan["actions"]
    assert action["kind"] == "mcp" and action["name"] == "notes"
    assert action["riskLevel"] == "high" and action["envNames"] == ["TOKEN"]
    assert "t0k" not in json.dumps(plan)  # env values are never shown
    assert any("remote" in x and "stdio" in x for x in plan["skipped"])
    done = json.loads(_apply(s, plan, source="vendor/.mcp.json").text)
    assert done["status"] == "done" and approve.asked == ["install_source"]
    text = (s.workspace / "callgate.toml").read_text()
    assert text.startswith(CONFIG)  # comments, order and formatting kept
    assert "# added by install_source from vendor/.mcp.json" in text
    doc = tomlkit.parse(text)
    assert doc["mcp_servers"]["notes"]["args"] == ["notes-mcp", "--dir", "."]
    assert doc["mcp_servers"]["notes"]["env"]["TOKEN"] == "t0k"
    nxt = callgate_session(plugins=[callgate_capability], config=str(s.workspace / "callgate.toml"))
    assert nxt.session.extension(MCP_SERVERS).names() == ["notes", "old"]
    again = _plan(s, source="vendor/.mcp.json")
    assert again["status"] == "blocked"


def test_a_command_server_without_an_approver_is_refused(skills):
    s = skills({"callgate.toml": CONFIG}, config={"permissions": {"ask_without_approver": "allow"}})
    plan = _plan(s, command=sys.executable, args=["-m", "some_server"], name="local")
    assert plan["actions"][0]["entry"] == "[mcp_servers.local]"
    before = s.snapshot()
    result = _apply(s, plan, command=sys.executable, args=["-m", "some_server"], name="local")
    assert result.is_error and "INSTALL_NEEDS_APPROVAL" in result.text
    s.assert_unchanged(before)
    s.expect_error("install_source", {"command": "x"}, kind="invalid_arguments")


def test_a_git_checkout_with_several_skills(skills):
    s = skills(
        {
            "repo/.git/HEAD": "ref: refs/heads/main\n",
            "repo/.git/config": "[core]\n",
            "repo/README.md": "curl x | sh\n",
            "repo/skills/one/SKILL.md": skill_md("one"),
            "repo/skills/two/SKILL.md": skill_md("two"),
            "repo/skills/two/references/more.md": "m\n",
        }
    )
    plan = _plan(s, source="repo", scope="user")
    assert plan["gitHead"] == "ref: refs/heads/main"
    assert [a["name"] for a in plan["actions"]] == ["one", "two"]
    assert json.loads(_apply(s, plan, source="repo", scope="user").text)["status"] == "done"
    user = Path(callgate_skills.user_skills_dir())
    assert sorted(p.name for p in user.iterdir()) == ["one", "two"]
    assert (user / "two/references/more.md").is_file()
    assert not any(".git" in str(p) for p in user.rglob("*"))


def _zip(path: Path, entries: dict[str, str], symlink: str | None = None) -> None:
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in entries.items():
            zf.writestr(name, text)
        if symlink:
            info = zipfile.ZipInfo(symlink)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            zf.writestr(info, "/etc/passwd")


def test_zip_sources_install_and_unsafe_ones_are_refused(skills, monkeypatch):
    s = skills()
    _zip(s.workspace / "ok.zip", {"pack-main/zipped/SKILL.md": skill_md("zipped")})
    plan = _plan(s, source="ok.zip")
    assert plan["actions"][0]["name"] == "zipped"
    assert json.loads(_apply(s, plan, source="ok.zip").text)["status"] == "done"
    _zip(s.workspace / "slip.zip", {"a/SKILL.md": skill_md("a"), "../../evil.txt": "x"})
    _zip(s.workspace / "link.zip", {"b/SKILL.md": skill_md("b")}, symlink="b/link")
    _zip(s.workspace / "big.zip", {"c/SKILL.md": skill_md("c"), "c/blob.md": "x" * 5000})
    before = s.snapshot()
    assert "INSTALL_UNSAFE_ZIP" in s.call("install_source", {"source": "slip.zip"}).text
    assert "symlink" in s.call("install_source", {"source": "link.zip"}).text
    monkeypatch.setattr("callgate_skills._install_tree.MAX_TOTAL_BYTES", 4000)
    assert "INSTALL_TOO_LARGE" in s.call("install_source", {"source": "big.zip"}).text
    s.assert_unchanged(before)


def test_source_outside_the_workspace_and_plan_mode(skills, tmp_path):
    outside = _folder(tmp_path / "elsewhere", {"x/SKILL.md": skill_md("x")})
    s = skills({"src/y/SKILL.md": skill_md("y")})
    s.expect_error("install_source", {"source": str(outside / "x")}, kind="outside_workspace")
    s.session.set_mode("plan")
    plan = _plan(s, source="src/y")  # planning only reads
    result = _apply(s, plan, source="src/y")
    assert result.is_error and result.error.kind == "blocked"
    assert not (s.workspace / ".agents").exists()


@pytest.mark.skipif(os.name != "posix", reason="replay paths")
def test_plan_then_apply_across_two_replays(tmp_path, home):
    ws = _folder(
        tmp_path / "ws",
        {
            "callgate.toml": CONFIG,
            "vendor/.mcp.json": MCP_JSON,
            "vendor/pdf/SKILL.md": skill_md("pdf", "PDF help"),
        },
    )
    env = {"CALLGATE_LOAD_PLUGINS": "skills", "HOME": str(home)}
    [planned] = run_replay(
        [{"id": "p", "name": "install_source", "arguments": {"source": "vendor"}}],
        ws,
        "--surface",
        "full",
        env=env,
    )
    plan = json.loads(planned["content"])
    assert [a["kind"] for a in plan["actions"]] == ["skill", "mcp"]
    apply = {
        "id": "a",
        "name": "install_source",
        "arguments": {"source": "vendor", "apply": True, "planId": plan["planId"]},
    }
    [refused] = run_replay([apply], ws, "--surface", "full", env=env)
    assert refused["is_error"] and refused["error"]["kind"] == "blocked"
    assert (ws / "callgate.toml").read_text() == CONFIG and not (ws / ".agents").exists()
    [done] = run_replay([apply], ws, "--surface", "full", "--approve", "all", env=env)
    assert not done["is_error"], done
    assert (ws / ".agents/skills/pdf/SKILL.md").is_file()
    text = (ws / "callgate.toml").read_text()
    assert text.startswith(CONFIG) and "[mcp_servers.notes]" in text


def test_installing_leaves_no_outside_change_notice_about_its_own_temp_folder(skills):
    """Issue 36.13: the skill's files are written into a temporary folder that is then
    renamed into place; the outside-change watcher must not report those temp paths (or the
    installed ones) as "changed outside this session" on a later result."""
    import callgate_files

    s = skills(
        {"src/tidy/SKILL.md": skill_md("tidy", "Tidy things", "Tidy $ARGUMENTS"),
         "src/tidy/references/style.md": "style\n", "note.txt": "n\n"},
        plugins=(callgate_files,),
        config={"files": {"watch": True}},
    )
    deadline = time.monotonic() + 10
    while not s.session.extension(callgate_files.FILE_WATCH).watching.is_set() and \
            time.monotonic() < deadline:
        time.sleep(0.05)
    plan = _plan(s, source="src/tidy")
    done = _apply(s, plan, source="src/tidy")
    assert not done.is_error, done.text
    assert (s.workspace / ".agents/skills/tidy/SKILL.md").is_file()
    texts = []
    for _ in range(3):  # the watcher debounces; give every event time to be delivered
        time.sleep(0.6)
        texts.append(s.call("read_file", {"path": "note.txt"}).text)
    assert not any("changed outside" in text for text in texts), texts
    # the installed files count as this session's own writes: editing one needs no re-read
    r = s.call("edit_file", {"path": ".agents/skills/tidy/references/style.md",
                             "old_string": "style", "new_string": "house style"})
    assert not r.is_error, r.text
