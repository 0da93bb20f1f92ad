"""Discovery, read_skill, install_skill and ``session.extension(SKILLS).index()``, through
the pipeline."""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path

import callgate_skills
from callgate.testing import run_replay
from callgate_skills import SKILLS

from .conftest import skill_md


def test_claude_code_skill_is_found_and_read_with_its_path(skills):
    s = skills(
        {
            ".claude/skills/pdf-fill/SKILL.md": skill_md(
                "pdf-fill", "Fill PDF forms", "Run scripts/fill.py on the form.", license="MIT"
            ),
            ".claude/skills/pdf-fill/scripts/fill.py": "print('x')\n",
        }
    )
    text = s.expect_ok("read_skill", {"name": "pdf-fill", "arguments": "form.pdf"})
    assert text.startswith("# Skill: pdf-fill\n> Fill PDF forms\n")
    assert "(project · .claude/skills/pdf-fill/SKILL.md)" in text
    assert "Skill folder: .claude/skills/pdf-fill" in text
    assert "Run scripts/fill.py on the form." in text
    assert text.endswith("Arguments: form.pdf")
    skill = s.session.extension(SKILLS).find("pdf-fill")
    assert skill.extra == {"license": "MIT"} and skill.has_scripts()


def test_read_skill_through_callgate_replay(tmp_path, home):
    ws = tmp_path / "ws"
    (ws / ".claude/skills/greet").mkdir(parents=True)
    (ws / ".claude/skills/greet/SKILL.md").write_text(
        skill_md("greet", "Greets someone", "Say hello to $1, then $ARGUMENTS. Costs $$5.")
    )
    out = run_replay(
        [
            {
                "id": "r1",
                "name": "read_skill",
                "arguments": {"name": "greet", "arguments": "Ana warmly"},
            },
            {"id": "r2", "name": "read_skill", "arguments": {"name": "nope"}},
        ],
        ws,
        "--surface",
        "full",
        env={"CALLGATE_LOAD_PLUGINS": "skills", "HOME": str(home)},
    )
    first, second = out
    assert not first["is_error"], first
    assert "Say hello to Ana, then Ana warmly. Costs $5." in first["content"]
    assert ".claude/skills/greet/SKILL.md" in first["content"]
    assert second["is_error"] and second["error"]["kind"] == "not_found"
    assert "greet" in second["content"]


def test_roots_in_priority_order(skills, home, tmp_path):
    custom = tmp_path / "custom"
    (custom / "shared").mkdir(parents=True)
    (custom / "shared/SKILL.md").write_text(skill_md("shared", "from custom"))
    (custom / "only-custom").mkdir()
    (custom / "only-custom/SKILL.md").write_text(skill_md("only-custom", "custom one"))
    (home / ".claude/skills/shared").mkdir(parents=True)
    (home / ".claude/skills/shared/SKILL.md").write_text(skill_md("shared", "from ~/.claude"))
    (home / ".claude/skills/mine").mkdir(parents=True)
    (home / ".claude/skills/mine/SKILL.md").write_text(skill_md("mine", "home claude"))
    user = Path(callgate_skills.user_skills_dir())
    (user / "mine").mkdir(parents=True)
    (user / "mine/SKILL.md").write_text(skill_md("mine", "callgate user"))
    s = skills(
        {
            ".callgate/skills/shared/SKILL.md": skill_md("shared", "from .callgate"),
            ".agents/skills/shared/SKILL.md": skill_md("shared", "from .agents"),
            ".agents/skills/agents-only/SKILL.md": skill_md("agents-only", "agents"),
            ".claude/skills/shared/SKILL.md": skill_md("shared", "from .claude"),
        },
        config={"skills": {"paths": [str(custom)]}},
    )
    index = {e["name"]: e["description"] for e in s.session.extension(SKILLS).index()}
    assert index == {
        "shared": "from .callgate",
        "agents-only": "agents",
        "only-custom": "custom one",
        "mine": "callgate user",
    }
    scopes = {n: sk.scope for n, sk in s.session.extension(SKILLS).catalog().skills.items()}
    assert scopes == {
        "shared": "project",
        "agents-only": "project",
        "only-custom": "custom",
        "mine": "user",
    }
    assert len(s.session.extension(SKILLS).catalog().shadowed) == 5
    (user / "mine/SKILL.md").unlink()
    assert s.session.extension(SKILLS).find("mine").scope == "claude-user"


def test_bad_front_matter_is_skipped_with_a_warning_naming_the_file(skills, caplog):
    files = {
        ".claude/skills/good/SKILL.md": skill_md("good"),
        ".claude/skills/badyaml/SKILL.md": "---\nname: badyaml\ndescription: [oops\n---\nx\n",
        ".claude/skills/mismatch/SKILL.md": skill_md("other-name"),
        ".claude/skills/nodesc/SKILL.md": "---\nname: nodesc\n---\nbody\n",
        ".claude/skills/toolong/SKILL.md": skill_md("toolong", "x" * 1025),
        ".claude/skills/Upper/SKILL.md": skill_md("Upper"),
        ".claude/skills/nofront/SKILL.md": "just text\n",
        ".claude/skills/badrun/SKILL.md": skill_md("badrun", run_as="sideways"),
    }
    with caplog.at_level(logging.WARNING, logger="callgate.skills"):
        s = skills(files)
        assert [e["name"] for e in s.session.extension(SKILLS).index()] == ["good"]
    warned = "\n".join(r.getMessage() for r in caplog.records)
    for folder in ("badyaml", "mismatch", "nodesc", "toolong", "Upper", "nofront", "badrun"):
        assert f".claude/skills/{folder}/SKILL.md" in warned, folder
    catalog = s.session.extension(SKILLS).catalog()
    problems = {Path(p.path).parent.name: p.reason for p in catalog.problems}
    assert "not valid YAML" in problems["badyaml"]
    assert "does not match its folder" in problems["mismatch"]
    assert "description is required" in problems["nodesc"]
    assert "at most 1024" in problems["toolong"]
    err = s.expect_error("read_skill", {"name": "nodesc"}, kind="not_found")
    assert "skipped" in err.text and "nodesc/SKILL.md" in err.text


def test_a_symlink_out_of_the_workspace_is_skipped(skills, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "SKILL.md").write_text(skill_md("leak", "outside"))
    s = skills({".claude/skills/keep/SKILL.md": skill_md("keep")})
    os.symlink(outside, s.workspace / ".claude/skills/leak")
    assert [e["name"] for e in s.session.extension(SKILLS).index()] == ["keep"]
    [problem] = s.session.extension(SKILLS).catalog().problems
    assert "outside the workspace" in problem.reason


def test_discovery_is_cached_and_refreshed_on_change(skills):
    s = skills({".claude/skills/a/SKILL.md": skill_md("a", "first")})
    first = s.session.extension(SKILLS).catalog()
    assert s.session.extension(SKILLS).catalog().skills["a"] is first.skills["a"]  # warm: reused
    path = s.workspace / ".claude/skills/a/SKILL.md"
    path.write_text(skill_md("a", "second, a longer description"))
    assert s.session.extension(SKILLS).find("a").description == "second, a longer description"
    (s.workspace / ".claude/skills/b").mkdir()
    assert s.session.extension(SKILLS).catalog().names() == ["a"]
    (s.workspace / ".claude/skills/b/SKILL.md").write_text(skill_md("b"))
    assert s.session.extension(SKILLS).catalog().names() == ["a", "b"]
    path.unlink()
    assert s.session.extension(SKILLS).catalog().names() == ["b"]


def test_read_skill_refuses_a_subagent_skill(skills):
    s = skills({".agents/skills/audit/SKILL.md": skill_md("audit", run_as="subagent")})
    err = s.expect_error("read_skill", {"name": "audit"}, kind="invalid_arguments")
    assert "run_skill" in err.text


def test_tools_are_hidden_by_default(skills):
    s = skills()
    for name in ("read_skill", "install_skill", "run_skill", "read_only_skill", "install_source"):
        assert s.session.tool(name).visibility == "hidden"


def test_install_skill_project_then_read(skills):
    s = skills()
    out = json.loads(
        s.expect_ok(
            "install_skill",
            {"name": "deploy-notes", "description": "How we deploy", "body": "Step 1: $ARGUMENTS"},
        )
    )
    assert out["path"] == ".agents/skills/deploy-notes/SKILL.md" and out["scope"] == "project"
    text = s.expect_ok("read_skill", {"name": "deploy-notes", "arguments": "staging"})
    assert "Step 1: staging" in text
    written = (s.workspace / ".agents/skills/deploy-notes/SKILL.md").read_text()
    assert written.startswith("---\nname: deploy-notes\ndescription: How we deploy\n---\n")


def test_install_skill_user_scope_writes_the_state_dir(skills):
    s = skills()
    out = json.loads(
        s.expect_ok(
            "install_skill",
            {
                "name": "everywhere",
                "description": "d",
                "body": "b",
                "scope": "user",
                "run_as": "subagent",
                "allowed_tools": ["read_file"],
                "read_only": True,
            },
        )
    )
    path = Path(callgate_skills.user_skills_dir()) / "everywhere/SKILL.md"
    assert out["path"] == str(path) and path.is_file()
    skill = s.session.extension(SKILLS).find("everywhere")
    assert skill.is_subagent and skill.read_only and skill.allowed_tools == ("read_file",)


def test_install_skill_never_overwrites_and_refuses_taken_names(skills):
    s = skills(
        {
            ".claude/skills/taken/SKILL.md": skill_md("taken"),
            ".agents/skills/folder-only/notes.txt": "mine\n",
        }
    )
    before = s.snapshot()
    err = s.expect_error(
        "install_skill",
        {"name": "taken", "description": "d", "body": "b"},
        kind="invalid_arguments",
    )
    assert "SKILL_NAME_TAKEN" in err.text
    s.expect_error(
        "install_skill",
        {"name": "folder-only", "description": "d", "body": "b"},
        kind="already_exists",
    )
    s.expect_error(
        "install_skill",
        {"name": "Bad Name", "description": "d", "body": "b"},
        kind="invalid_arguments",
    )
    s.assert_unchanged(before)


def test_skills_index_for_integrators_has_names_and_descriptions_only(skills):
    s = skills(
        {
            ".claude/skills/b-two/SKILL.md": skill_md("b-two", "second", "secret body"),
            ".claude/skills/a-one/SKILL.md": skill_md("a-one", "first"),
        }
    )
    assert s.session.extension(SKILLS).index() == [
        {"name": "a-one", "description": "first"},
        {"name": "b-two", "description": "second"},
    ]
    assert sys.modules["callgate_skills"] is callgate_skills


def test_without_inotify_the_stat_signature_refreshes(skills, monkeypatch):
    from callgate_skills import _catalog, _watch
    from callgate_toolkit.watch import DirectoryWatcher

    monkeypatch.setattr(_catalog, "WATCH", _watch.RootWatch(DirectoryWatcher(enabled=False)))
    s = skills({".claude/skills/a/SKILL.md": skill_md("a", "first")})
    first = s.session.extension(SKILLS).catalog()
    assert first.skills["a"] is s.session.extension(SKILLS).catalog().skills["a"]
    (s.workspace / ".claude/skills/a/SKILL.md").write_text(skill_md("a", "second one"))
    assert s.session.extension(SKILLS).find("a").description == "second one"
    (s.workspace / ".claude/skills/b").mkdir()
    (s.workspace / ".claude/skills/b/SKILL.md").write_text(skill_md("b"))
    assert s.session.extension(SKILLS).catalog().names() == ["a", "b"]


def test_a_symlinked_skill_file_is_checked_by_stat(skills, tmp_path):
    s = skills({"shared/SKILL.md": skill_md("linked", "v1"), ".claude/skills/linked/x": ""})
    (s.workspace / ".claude/skills/linked/x").unlink()
    os.symlink(s.workspace / "shared/SKILL.md", s.workspace / ".claude/skills/linked/SKILL.md")
    assert s.session.extension(SKILLS).find("linked").description == "v1"
    (s.workspace / "shared/SKILL.md").write_text(skill_md("linked", "version two"))
    assert s.session.extension(SKILLS).find("linked").description == "version two"
