"""Issue 30, item 7: deny and ask rules look through git's global options, its aliases and
common launchers.

``deny = ["Bash(git push:*)"]`` (the docs' own example) let each line below push on
1aa6fe3. The workspace has a real remote, so a line that slipped through pushes a commit
there; every line is tried against a deny rule and against an ask rule (no approver: an ask
is refused too), through ``callgate replay``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from callgate.testing import run_replay
from callgate_commandline import analyze_command

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

RULE = "Bash(git push:*)"

#: Each pushes main to the remote when it runs (one attack per line and rule list).
BYPASSES = [
    "git -C . push origin main",
    "git --no-pager push origin main",
    "git -P push origin main",
    "git --git-dir=.git push origin main",
    "git --git-dir .git --work-tree . push origin main",
    "git --namespace=x --no-optional-locks push origin main",
    "git -c color.ui=false push origin main",
    "git -c alias.p=push p origin main",
    "git --config-env=alias.p=ALIAS p origin main",
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.p GIT_CONFIG_VALUE_0=push git p origin main",
    "git send-pack ../remote.git main",
    "echo push origin main | xargs git",
    "printf 'push origin main' | xargs -I{} sh -c 'git {}'",
    "echo origin main | xargs git push",
    "echo push | xargs -I{} git {} origin main",
    "timeout 60 git -C . push origin main",
    "uv run --no-project git push origin main",
]

#: Lines no push rule should stop (a rule must not turn git into an undecidable program).
NOT_PUSHES = ["git status", "git -C . status", "git --no-pager log --oneline -1",
              "echo hello | xargs echo", "git -c color.ui=false log -1 --oneline"]


def _env(home: Path) -> dict[str, str]:
    return {**os.environ, "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1", "ALIAS": "push"}


def _git(cwd: Path, home: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=_env(home), check=True,
                          capture_output=True, text=True, timeout=60).stdout


def _setup(tmp_path: Path) -> tuple[Path, Path, Path]:
    home = tmp_path / "home"
    home.mkdir()
    remote = tmp_path / "remote.git"
    _git(tmp_path, home, "init", "-q", "--bare", "-b", "main", str(remote))
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    _git(ws, home, "init", "-q", "-b", "main")
    _git(ws, home, "add", "a.txt")
    _git(ws, home, "-c", "user.email=t@e.invalid", "-c", "user.name=T", "commit", "-q", "-m",
         "one")
    _git(ws, home, "remote", "add", "origin", str(remote))
    return ws, remote, home


def _replay(ws: Path, home: Path, action: str, lines: list[str]) -> list[dict[str, Any]]:
    config = ws.parent / f"{action}.toml"
    config.write_text(f'[permissions]\n{action} = ["{RULE}"]\n')
    calls = [{"name": "bash", "arguments": {"command": line}} for line in lines]
    return run_replay(calls, ws, "--config", str(config),
                      env={"CALLGATE_LOAD_PLUGINS": "shell", "HOME": str(home),
                           "GIT_CONFIG_NOSYSTEM": "1", "ALIAS": "push"})


def _pushed(remote: Path, home: Path) -> str:
    return _git(remote, home, "for-each-ref")


@pytest.mark.parametrize("action", ["deny", "ask"])
def test_attack_a_push_rule_stops_every_spelling_of_push(tmp_path: Path, action: str) -> None:
    ws, remote, home = _setup(tmp_path)
    results = _replay(ws, home, action, BYPASSES)
    slipped = [(line, r["content"][:200]) for line, r in zip(BYPASSES, results, strict=True)
               if not (r["is_error"] and r["error"]["signature"] == f"{action}:{RULE}")]
    assert slipped == []
    assert _pushed(remote, home) == ""  # nothing reached the remote


@pytest.mark.parametrize("action", ["deny", "ask"])
def test_a_push_rule_leaves_other_git_commands_alone(tmp_path: Path, action: str) -> None:
    ws, _remote, home = _setup(tmp_path)
    results = _replay(ws, home, action, NOT_PUSHES)
    assert [r["is_error"] for r in results] == [False] * len(NOT_PUSHES), results


def test_a_push_rule_still_matches_the_plain_spelling(tmp_path: Path) -> None:
    ws, remote, home = _setup(tmp_path)
    [result] = _replay(ws, home, "deny", ["git push origin main"])
    assert result["error"]["signature"] == f"deny:{RULE}"
    assert _pushed(remote, home) == ""


@pytest.mark.parametrize("line", [
    "git -c alias.p=push p",
    "git -c include.path=../evil.cfg p",
    "git -c core.hooksPath=evil commit",
    "git --exec-path=./evil push",
    "git --config-env=core.pager=PAGER_CMD log",
    "GIT_CONFIG_PARAMETERS=\"'alias.p'='push'\" git p",
    "GIT_CONFIG_KEY_0=alias.p git p",
    "GIT_EXEC_PATH=./evil git push",
])
def test_git_lines_that_define_commands_at_run_time_are_undecidable(line: str) -> None:
    assert analyze_command(line).undecidable, line


@pytest.mark.parametrize("line", [
    "git -c core.pager=rm log",
    "git -c core.sshCommand='rm -rf x' fetch",
    "git -c filter.x.clean='rm x' add .",
    "GIT_EXTERNAL_DIFF='rm x' git diff",
    "GIT_SSH_COMMAND='rm x' git fetch",
    "env GIT_PAGER=rm git log",
    "GIT_PAGER=rm; git log",
])
def test_a_rule_sees_the_program_git_is_told_to_run(line: str) -> None:
    line_ = analyze_command(line)
    assert not line_.undecidable, line_
    assert "rm" in [c.program for c in line_.commands], line_.commands


@pytest.mark.parametrize(("allow", "runs"), [
    # an exact rule does not cover the words xargs appends
    (["Bash(echo:*)", "Bash(xargs:*)", "Bash(ls)"], False),
    (["Bash(echo:*)", "Bash(xargs:*)", "Bash(ls:*)"], True),
])
def test_an_open_ended_command_is_allowed_only_by_a_prefix_rule(
        tmp_path: Path, allow: list[str], runs: bool) -> None:
    ws, _remote, home = _setup(tmp_path)
    config = tmp_path / "allow.toml"
    config.write_text("[permissions]\nmode = \"deny\"\nallow = [" +
                      ", ".join(f'"{rule}"' for rule in allow) + "]\n")
    [result] = run_replay([{"name": "bash", "arguments": {"command": "echo . | xargs ls"}}],
                          ws, "--config", str(config),
                          env={"CALLGATE_LOAD_PLUGINS": "shell", "HOME": str(home)})
    assert (not result["is_error"]) is runs, result
