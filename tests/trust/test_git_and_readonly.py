"""Issue 30, items 2 and 3, as attacks through the front doors.

Git is data, not configuration: no write tool may plant a file git reads as a redirection of
its config or hooks (``.git/commondir`` and the rest), the sandbox shows the existing ones
read-only, and the git that ``review``/``security_review`` run for the change set runs no
program the repository's config names (filters, fsmonitor, textconv, external diff, hooks).

Read-only children are read-only by construction: the classifier is an allow-list of options
per program (every line below wrote or ran a program through a real strict child on
1aa6fe3), a strict child's commands see the workspace read-only in the sandbox, and
``continue_from`` continues a child only through the tool that made it, with its own profile.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from callgate.testing import run_replay
from callgate_commandline import readonly_command

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

PLUGINS = "tasks,files,shell,search,skills"


# --- helpers ----------------------------------------------------------------------------


def _git_env(home: Path) -> dict[str, str]:
    """A user's environment: their own HOME (no global git config), no system config."""
    return {**os.environ, "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1"}


def _git(ws: Path, home: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=ws, env=_git_env(home), check=True,
                          capture_output=True, text=True, timeout=60)
    return done.stdout


def _repo(tmp_path: Path) -> tuple[Path, Path]:
    """A committed repository ``ws`` (a.txt, big.txt) and the user's HOME."""
    home = tmp_path / "home"
    home.mkdir()
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("touch PWN_FROM_DATA\nb\na\n")
    # enough lines that sort spills to temporary files (and so runs a compress program)
    for name in ("big", "abbreviated", "piped", "found"):
        padding = "".join(f"# padding line {i}\n" for i in range(20000))
        (ws / f"{name}.txt").write_text(f"touch PWN_SORT_{name.upper()}\n{padding}")
    _git(ws, home, "init", "-q", "-b", "main")
    _git(ws, home, "add", ".")
    _git(ws, home, "-c", "user.email=t@e.invalid", "-c", "user.name=T", "commit", "-q", "-m",
         "one")
    return ws, home


def _kid(kids: Path, name: str, *lines: dict[str, Any]) -> None:
    kids.mkdir(exist_ok=True)
    (kids / name).write_text("".join(json.dumps(x) + "\n" for x in lines))


def _replay(ws: Path, home: Path, lines: list[Any], *extra: str,
            sandbox: bool = False) -> list[dict[str, Any]]:
    plugins = PLUGINS + (",sandbox" if sandbox else "")
    config = ws.parent / ("sandboxed.toml" if sandbox else "plain.toml")
    config.write_text("[sandbox]\nenabled = true\n" if sandbox else "")
    return run_replay(lines, ws, "--surface", "full", "--config", str(config), *extra,
                      env={"CALLGATE_LOAD_PLUGINS": plugins, "HOME": str(home),
                           "GIT_CONFIG_NOSYSTEM": "1"})


def _write(path: str, content: str) -> dict[str, Any]:
    return {"name": "write_file", "arguments": {"path": path, "content": content}}


def _bash(command: str) -> dict[str, Any]:
    return {"name": "bash", "arguments": {"command": command}}


def _pwned(*roots: Path) -> list[str]:
    """Every marker file an attack left (``PWN*`` anywhere under the roots)."""
    return sorted(str(p) for root in roots for p in root.rglob("PWN*"))


def _bwrap_works() -> bool:
    try:
        import callgate_sandbox
    except ImportError:
        return False
    return callgate_sandbox.BwrapBackend().probe().ok


needs_bwrap = pytest.mark.skipif(not _bwrap_works(),
                                 reason="bubblewrap cannot confine commands here")


# --- item 2: git is data, not configuration -----------------------------------------------


def _evil_common_dir(ws: Path, tmp_path: Path, sha: str) -> list[dict[str, Any]]:
    """The write_file calls that build ``evil/``, a common dir whose config runs programs (it
    borrows the real objects through alternates, so ``git diff HEAD`` works there)."""
    config = (
        "[core]\n\trepositoryformatversion = 0\n"
        f'\tfsmonitor = "touch {tmp_path}/PWN_FSMONITOR; false"\n'
        f'[filter "x"]\n\tclean = "touch {tmp_path}/PWN_FILTER; cat"\n\tsmudge = cat\n'
    )
    return [
        _write("evil/config", config),
        _write("evil/objects/info/alternates", f"{ws}/.git/objects\n"),
        _write("evil/refs/heads/main", sha + "\n"),
        _write(".gitattributes", "* filter=x\n"),
    ]


def test_attack_commondir_planted_by_write_file_runs_nothing_in_review_or_the_users_git(
        tmp_path: Path) -> None:
    ws, home = _repo(tmp_path)
    sha = _git(ws, home, "rev-parse", "HEAD").strip()
    (ws / "a.txt").write_text("changed by the user, longer than before\n")
    _kid(tmp_path / "kids", "child-1.jsonl", {"answer": "looks fine"})
    lines = [*_evil_common_dir(ws, tmp_path, sha), _write(".git/commondir", "../evil\n"),
             {"name": "review", "arguments": {"task": "review the change"}}]
    results = _replay(ws, home, lines, "--subagents", str(tmp_path / "kids"))
    planted, review = results[-2], results[-1]
    assert planted["is_error"] and planted["error"]["signature"] == "FS_PROTECTED", planted
    assert not (ws / ".git" / "commondir").exists()
    assert not review["is_error"], review
    assert _pwned(tmp_path) == []
    # the user's next plain git status (their own git, no hardening) runs nothing either
    status = _git(ws, home, "status", "--porcelain")
    assert " M a.txt" in status
    assert _pwned(tmp_path) == []


def test_attack_a_commondir_already_on_disk_does_not_steer_reviews_git(tmp_path: Path) -> None:
    """Defense in depth: whatever planted ``.git/commondir`` (a sandboxed command may create
    a file that did not exist), review's git reads the repository's own common dir."""
    ws, home = _repo(tmp_path)
    sha = _git(ws, home, "rev-parse", "HEAD").strip()
    (ws / "a.txt").write_text("changed by the user, longer than before\n")
    _kid(tmp_path / "kids", "child-1.jsonl", {"answer": "looks fine"})
    setup = _replay(ws, home, _evil_common_dir(ws, tmp_path, sha))
    assert not any(r["is_error"] for r in setup), setup
    (ws / ".git" / "commondir").write_text("../evil\n")
    [review] = _replay(ws, home, [{"name": "review", "arguments": {"task": "review it"}}],
                       "--subagents", str(tmp_path / "kids"))
    assert not review["is_error"], review
    assert _pwned(tmp_path) == []


def test_attack_the_repositorys_own_config_runs_nothing_in_reviews_git(tmp_path: Path) -> None:
    """Filters, fsmonitor, textconv, external diff and hooks configured in ``.git/config``:
    the change set is still read, and none of them runs."""
    ws, home = _repo(tmp_path)
    (ws / "new.txt").write_text("new\n")
    _git(ws, home, "add", "new.txt")
    run = f"touch {tmp_path}/PWN_%s"
    for key, value in (("core.fsmonitor", f"{run % 'FSMONITOR'}; false"),
                       ("filter.x.clean", f"{run % 'CLEAN'}; cat"),
                       ("filter.x.process", run % "PROCESS"),
                       ("diff.x.textconv", f"{run % 'TEXTCONV'}; cat"),
                       ("diff.x.command", run % "DIFFCMD"),
                       ("diff.external", run % "EXTERNAL"),
                       ("core.pager", run % "PAGER"),
                       ("core.hooksPath", str(tmp_path / "hooks"))):
        _git(ws, home, "config", key, value)
    (tmp_path / "hooks").mkdir()
    for hook in ("post-index-change", "pre-commit"):
        (tmp_path / "hooks" / hook).write_text(f"#!/bin/sh\n{run % 'HOOK'}\n")
        (tmp_path / "hooks" / hook).chmod(0o755)
    (ws / ".gitattributes").write_text("* filter=x diff=x\n")
    (ws / "a.txt").write_text("changed by the user, longer than before\n")
    _kid(tmp_path / "kids", "child-1.jsonl", {"answer": "looks fine"})
    [review] = _replay(ws, home, [{"name": "security_review", "arguments": {"task": "audit"}}],
                       "--subagents", str(tmp_path / "kids"))
    assert not review["is_error"], review
    assert _pwned(tmp_path) == []
    # and the change set the child was given still holds the changes
    from callgate import sync
    from callgate_tasks._changes import change_set

    with sync.Host.boot(plugins=[]) as host, host.open_session(ws) as session:
        text = change_set(session.session)
    assert text is not None and "A  new.txt" in text and " M a.txt" in text, text
    assert "+changed by the user, longer than before" in text, text
    assert _pwned(tmp_path) == []


#: Files git reads as a redirection of its config, hooks or repository: each a write_file
#: target the host refuses (one attack each; 10 of the 13 were written on 1aa6fe3, where
#: only config.worktree and a submodule's config and hooks were protected).
REDIRECTS = [
    ".git/commondir",
    ".git/config.worktree",
    ".git/info/attributes",
    ".git/worktrees/w/commondir",
    ".git/worktrees/w/gitdir",
    ".git/worktrees/w/config.worktree",
    ".git/modules/m/config",
    ".git/modules/m/commondir",
    ".git/modules/m/info/attributes",
    ".git/modules/m/hooks/post-checkout",
    ".git/objects/info/alternates",
    "sub/.git",  # a gitdir file: "gitdir: ../evil" makes evil/ sub's repository
    "nested/HEAD",  # HEAD + objects/ + refs/ + config: a bare repository git discovers
]


def test_attack_every_git_redirection_is_refused_to_write_tools(tmp_path: Path) -> None:
    ws, home = _repo(tmp_path)
    lines = [_write(path, "gitdir: ../evil\n") for path in REDIRECTS]
    lines.append({"name": "read_file", "arguments": {"path": "a.txt"}})
    lines.append({"name": "move_file",
                  "arguments": {"source_path": "a.txt",
                                "destination_path": ".git/worktrees/v/commondir"}})
    results = _replay(ws, home, lines)
    del results[-2]  # the read
    for path, result in zip([*REDIRECTS, "move_file"], results, strict=True):
        assert result["is_error"] and result["error"]["signature"] == "FS_PROTECTED", \
            (path, result)
    for path in REDIRECTS:
        assert not (ws / path).exists(), path
    assert (ws / "a.txt").exists()


@needs_bwrap
def test_attack_existing_git_redirections_are_read_only_in_the_sandbox(tmp_path: Path) -> None:
    ws, home = _repo(tmp_path)
    info = ws / ".git" / "info"
    info.mkdir(exist_ok=True)
    (info / "exclude").write_text("# excludes\n")
    (ws / ".git" / "objects" / "info" / "alternates").write_text("")
    command = ("echo '* filter=x' >> .git/info/attributes; echo x >> .git/info/exclude; "
               "echo /elsewhere >> .git/objects/info/alternates; echo done")
    [result] = _replay(ws, home, [_bash(command)], sandbox=True)
    assert "Read-only file system" in result["content"], result
    assert not (info / "attributes").exists()
    assert (info / "exclude").read_text() == "# excludes\n"
    assert (ws / ".git" / "objects" / "info" / "alternates").read_text() == ""


# --- item 3: read-only children are read-only by construction -----------------------------

#: Lines a strict read-only child ran on 1aa6fe3 that wrote a file or ran a program; each
#: leaves a PWN marker when it runs. The evil/ repository and the --output file are planted
#: by `_plant` (the workspace is the attacker's).
WRITERS = [
    "sort -S 64K --compress-program=sh big.txt",
    "sort -S 64K --compress-p=sh abbreviated.txt",
    "sort --outp=PWN_OUTP a.txt",
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor "
    "GIT_CONFIG_VALUE_0='touch PWN_CONFIG_COUNT; false' git status",
    "GIT_EXTERNAL_DIFF='touch PWN_EXTERNAL_DIFF; true' git diff",
    "GIT_DIR=evil1 git status",
    "git --git-dir=evil2 --work-tree=. status",
    "env GIT_DIR=evil3 git status",
    "git cat-file --textconv HEAD:a.txt",
    "uniq a.txt PWN_UNIQ",
    "echo --compress-program=sh | xargs sort -S 64K piped.txt",
    "sort *.txt",
    "find . -name found.txt -exec sort -S 64K --compress-program=sh {} +",
]

#: Lines that would change the machine if they ran, judged without running them.
MACHINE_WRITERS = ["date --se='2001-01-01'", "date 010100002030", "hostname -Fname.txt",
                   "date -s now", "hostname newname"]


def _plant(ws: Path, home: Path) -> None:
    for n in (1, 2, 3):
        evil = ws / f"evil{n}"
        (evil / "objects").mkdir(parents=True)
        (evil / "refs").mkdir()
        (evil / "HEAD").write_text("ref: refs/heads/main\n")
        (evil / "config").write_text(f'[core]\n\tfsmonitor = "touch PWN_GIT_DIR_{n}; false"\n'
                                     "\tworktree = ..\n")
    (ws / "--output=PWN_GLOB.txt").write_text("")
    _git(ws, home, "config", "diff.x.textconv", "sh -c 'touch PWN_TEXTCONV; cat \"$0\"'")
    (ws / ".gitattributes").write_text("a.txt diff=x\n")
    with (ws / "a.txt").open("a") as fh:
        fh.write("a change\n")


def test_attack_writing_lines_through_a_real_read_only_review_child(tmp_path: Path) -> None:
    ws, home = _repo(tmp_path)
    _plant(ws, home)
    _kid(tmp_path / "kids", "child-1.jsonl", *(_bash(line) for line in WRITERS))
    [review] = _replay(ws, home, [{"name": "review", "arguments": {"task": "look"}}],
                       "--subagents", str(tmp_path / "kids"))
    text = review["content"]
    assert text.count("bash (error): blocked: bash is not allowed in this review subagent: "
                      "the command is not read-only") == len(WRITERS), text
    assert _pwned(ws) == []


@pytest.mark.parametrize("line", MACHINE_WRITERS)
def test_attack_lines_that_change_the_machine_are_not_read_only(line: str) -> None:
    assert readonly_command(line) is not None


def test_attack_the_probe_every_writing_line_is_refused_and_every_reading_one_passes() -> None:
    """The 153-line probe (tests/trust/readonly_probe.py): 27 of its 77 writing lines were
    accepted on 1aa6fe3."""
    from .readonly_probe import READS, WRITES

    assert [line for line in WRITES if readonly_command(line) is None] == []
    assert [(line, readonly_command(line)) for line in READS
            if readonly_command(line) is not None] == []


def test_attack_a_fleet_reader_and_a_plan_mode_read_only_skill_cannot_write(
        tmp_path: Path) -> None:
    ws, home = _repo(tmp_path)
    skill = ws / ".claude" / "skills" / "audit" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: audit\ndescription: Audit\nrun-as: subagent\n---\n\nAudit.\n")
    kids = tmp_path / "kids"
    writes = (_bash("sort -S 64K --compress-program=sh big.txt"), _bash("uniq a.txt PWN_UNIQ"))
    _kid(kids, "scan.jsonl", *writes)
    _kid(kids, "other.jsonl", {"answer": "fine"})
    _kid(kids, "skill-audit-check.jsonl", *writes)
    fleet = {"tasks": [{"id": "scan", "description": "scan", "prompt": "scan", "read_only": True},
                       {"id": "other", "description": "other", "prompt": "o", "read_only": True}]}
    [by_fleet] = _replay(ws, home, [{"name": "fleet", "arguments": fleet}],
                         "--subagents", str(kids))
    [by_skill] = _replay(ws, home, [{"name": "read_only_skill",
                                     "arguments": {"name": "audit", "arguments": "check"}}],
                         "--subagents", str(kids), "--mode", "plan")
    assert not by_fleet["is_error"] and not by_skill["is_error"], (by_fleet, by_skill)
    assert by_skill["content"].count("the command is not read-only") == 2, by_skill
    assert _pwned(ws) == []


def test_read_only_lines_still_pass_through_a_real_child(tmp_path: Path) -> None:
    """Usability: what a reviewer runs is still accepted (and works)."""
    ws, home = _repo(tmp_path)
    (ws / "a.txt").write_text("alpha\nbeta\n")
    readers = ["git status", "git log --oneline -3", "git diff", "git diff --stat HEAD",
               "git show --stat HEAD", "rg -n alpha", "grep -rn beta .", "ls -la",
               "cat a.txt", "head -n 1 a.txt", "wc -l a.txt", "find . -name '*.txt'",
               "git log -p -1 -- a.txt | head -20", "git blame a.txt",
               "rg --files | sort | uniq -c | sort -rn | head"]
    _kid(tmp_path / "kids", "child-1.jsonl", *(_bash(line) for line in readers))
    [review] = _replay(ws, home, [{"name": "review", "arguments": {"task": "look"}}],
                       "--subagents", str(tmp_path / "kids"))
    assert "(error)" not in review["content"], review["content"]
    assert "alpha" in review["content"]


@needs_bwrap
def test_attack_a_strict_child_sees_the_workspace_read_only_in_the_sandbox(
        tmp_path: Path) -> None:
    """The boundary, not the classifier: even ``git status``, which the allow-list accepts,
    cannot write (it would refresh the index); the parent still can."""
    ws, home = _repo(tmp_path)
    index = ws / ".git" / "index"
    stat = (ws / "a.txt").stat()  # touched, same content: git status would refresh the index
    os.utime(ws / "a.txt", (stat.st_atime + 100, stat.st_mtime + 100))
    before = index.read_bytes()
    _kid(tmp_path / "kids", "status.jsonl", _bash("git status"))
    _kid(tmp_path / "kids", "other.jsonl", {"answer": "fine"})
    fleet = {"tasks": [{"id": "s", "description": "status", "prompt": "s", "read_only": True},
                       {"id": "o", "description": "other", "prompt": "o", "read_only": True}]}
    [result] = _replay(ws, home, [{"name": "fleet", "arguments": fleet}],
                       "--subagents", str(tmp_path / "kids"), sandbox=True)
    assert "On branch main" in json.dumps(result), result
    assert index.read_bytes() == before
    [touch] = _replay(ws, home, [_bash("touch parent.txt && echo made")], sandbox=True)
    assert "made" in touch["content"] and (ws / "parent.txt").exists()
    assert _pwned(ws) == []


@needs_bwrap
def test_a_classifier_mistake_still_cannot_write_in_the_sandbox(
        callgate_session: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Simulate a hole in the allow-list: the read-only mount still refuses the write."""
    import callgate_commandline._readonly
    import callgate_files
    import callgate_sandbox
    import callgate_shell
    from callgate import ChildProfile

    monkeypatch.setattr(callgate_commandline._readonly, "readonly_command",
                        lambda text, dialect="posix": None)
    parent = callgate_session(plugins=[callgate_files, callgate_shell, callgate_sandbox],
                              config={"sandbox": {"enabled": True}}, files={"a.txt": "a\n"})
    child = parent.child(ChildProfile(name="explore", read_only=True))
    result = child.call("bash", {"command": "touch PWN_HOLE; echo x > a.txt"})
    assert "Read-only file system" in result.text, result.text
    assert (parent.workspace / "a.txt").read_text() == "a\n"
    assert _pwned(parent.workspace) == []
    assert "ok" in parent.expect_ok("bash", {"command": "touch made && echo ok"})


# --- continuation is bound to the tool and profile that made the child ---------------------


def test_attack_a_strict_child_continued_through_task_cannot_write(tmp_path: Path) -> None:
    ws, home = _repo(tmp_path)
    kids = tmp_path / "kids"
    _kid(kids, "research-look-around.jsonl",
         {"outcome": {"status": "partial", "answer": "half", "retryable": True}})
    _kid(kids, "escalate.jsonl", _write("PWN_TASK.txt", "written\n"), {"answer": "done"})
    _kid(kids, "explore-again.jsonl", _write("PWN_EXPLORE.txt", "x\n"), {"answer": "no"})
    session = tmp_path / "session"
    [first] = _replay(ws, home, [{"name": "research", "arguments": {"task": "look around"}}],
                      "--subagents", str(kids), "--session-dir", str(session))
    ref = first["meta"]["subagents"][0]["ref"]
    assert "retryable=true" in first["content"], first
    escalate, wrong_profile_tool = _replay(ws, home, [
        {"name": "task", "arguments": {"description": "escalate", "prompt": "go on",
                                       "continue_from": ref}},
        {"name": "explore", "arguments": {"task": "again", "continue_from": ref}},
    ], "--subagents", str(kids), "--session-dir", str(session))
    assert escalate["is_error"] and "research" in escalate["content"], escalate
    assert wrong_profile_tool["is_error"], wrong_profile_tool
    assert _pwned(ws) == []


def test_a_continued_strict_child_keeps_its_own_profile(tmp_path: Path) -> None:
    ws, home = _repo(tmp_path)
    kids = tmp_path / "kids"
    _kid(kids, "research-look-around.jsonl",
         {"outcome": {"status": "partial", "answer": "half", "retryable": True}})
    _kid(kids, "research-go-on.jsonl", _write("PWN_RESEARCH.txt", "x\n"),
         {"name": "read_file", "arguments": {"path": "a.txt"}})
    session = tmp_path / "session"
    [first] = _replay(ws, home, [{"name": "research", "arguments": {"task": "look around"}}],
                      "--subagents", str(kids), "--session-dir", str(session))
    ref = first["meta"]["subagents"][0]["ref"]
    [again] = _replay(ws, home, [{"name": "research",
                                  "arguments": {"task": "go on", "continue_from": ref}}],
                      "--subagents", str(kids), "--session-dir", str(session))
    assert not again["is_error"] and again["meta"]["subagents"][0]["ref"] == ref, again
    assert "write_file (error): blocked" in again["content"]
    assert "touch PWN_FROM_DATA" in again["content"]  # the read ran
    assert _pwned(ws) == []


def test_attack_a_read_only_skill_child_continued_through_run_skill_cannot_write(
        tmp_path: Path) -> None:
    ws, home = _repo(tmp_path)
    skill = ws / ".claude" / "skills" / "fixer" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: fixer\ndescription: Fix\nrun-as: subagent\n---\n\nFix it.\n")
    kids = tmp_path / "kids"
    _kid(kids, "skill-fixer-look.jsonl",
         {"outcome": {"status": "partial", "answer": "half", "retryable": True}})
    _kid(kids, "skill-fixer-write.jsonl", _write("PWN_SKILL.txt", "x\n"), {"answer": "done"})
    session = tmp_path / "session"
    [first] = _replay(ws, home, [{"name": "read_only_skill",
                                  "arguments": {"name": "fixer", "arguments": "look"}}],
                      "--subagents", str(kids), "--session-dir", str(session))
    ref = first["meta"]["subagents"][0]["ref"]
    [again] = _replay(ws, home, [{"name": "run_skill", "arguments": {
        "name": "fixer", "arguments": "write", "continue_from": ref}}],
        "--subagents", str(kids), "--session-dir", str(session))
    assert again["is_error"] and "read_only_skill" in again["content"], again
    assert _pwned(ws) == []
