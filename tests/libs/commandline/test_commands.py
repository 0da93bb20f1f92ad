"""`analyze_command`: what a command line would run, and what cannot be decided (issue 16)."""

from __future__ import annotations

import shlex

import pytest
from callgate_commandline._analyze import analyze_command


def programs(text: str, flavor: str = "posix") -> list[str | None]:
    return [c.program for c in analyze_command(text, flavor).commands]


@pytest.mark.parametrize(("text", "expected"), [
    ("git status && rm -rf x", ["git", "rm"]),
    ("ls | wc -l; echo $(whoami) `id`", ["ls", "wc", "echo", "whoami", "id"]),
    ('git commit -m "a && b"', ["git"]),
    ("if true; then rm x; fi", ["true", "rm"]),
    ("timeout -s KILL 5 nice -n 3 make test", ["make"]),
    ("env -i -u HOME A=1 make", ["make"]),
    ("sudo -u root rm x", ["rm"]),
    ("bash -ec 'make; rm x'", ["bash", "make", "rm"]),
    ("find . -name '*.o' -exec rm {} + -execdir touch y \\;", ["find", "rm", "touch"]),
    ("xargs -0 -n1 rm", ["xargs", "rm"]),
    ("cat <<'EOF'\n$(rm x)\nEOF", ["cat"]),
    ("cat <<EOF\n$(rm x)\nEOF", ["cat", "rm"]),
    ("f() { rm x; }; f", ["rm", "f"]),
])
def test_the_commands_a_line_runs(text, expected) -> None:
    line = analyze_command(text)
    assert line.undecidable == ()
    assert programs(text) == expected


def test_governing_wrappers_keep_their_line_for_allow_rules() -> None:
    [command] = analyze_command("sudo timeout 5 rm -rf x").commands
    assert command.allow_forms == ("sudo timeout 5 rm -rf x",)
    assert "rm -rf x" in command.forms and command.argv == ("rm", "-rf", "x")


@pytest.mark.parametrize("text", [
    "eval ls", "source x.sh", ". x.sh", "$cmd", "${c} x", "$(echo ls)", "`echo ls`",
    "$'ls'", "\\ls", "l?", "{ls,-l}", "~/bin/x", "echo x | sh", "sh <<< ls",
    "bash -c \"$x\"", "PATH=/tmp ls", "export PATH=/tmp", "LD_PRELOAD=x.so ls",
    "x=$(cat f); echo $((x))", "read n; [[ $n -eq 1 ]]", "alias l=ls", "trap 'rm x' EXIT",
    "ls (", "env -S 'rm x'",
])
def test_what_cannot_be_decided(text) -> None:
    assert analyze_command(text).undecidable, text


def test_redirections_are_reported_with_their_targets() -> None:
    line = analyze_command("echo a > out.txt 2>&1 >> log 2>/dev/null < in; cat > $f")
    writes = [(r.operator, r.target) for r in line.writes]
    assert writes == [(">", "out.txt"), (">>", "log"), (">", None)]
    assert ("<", "in") in [(r.operator, r.target) for r in line.redirections]


def test_a_deep_or_huge_line_is_undecidable_not_a_crash() -> None:
    deep = "echo " + "$(" * 3000 + "ls" + ")" * 3000
    assert analyze_command(deep).commands  # parsed or judged undecidable, never raised
    nested = "ls"
    for _ in range(12):
        nested = "bash -c " + shlex.quote(nested)
    assert analyze_command(nested).undecidable


@pytest.mark.parametrize(("text", "decided"), [
    ("git status; npm test", True),
    ("Get-ChildItem | Select-Object Name", True),
    ("iex $code", False),
    ("Invoke-Expression 'rm x'", False),
    ("& $tool", False),
    (". ./profile.ps1", False),
    ("pwsh -Command 'rm x'", False),
    ("Remove-Item x > out.txt", False),
])
def test_powershell_lines(text, decided) -> None:
    line = analyze_command(text, "pwsh")
    assert (line.undecidable == () and all(r.target for r in line.writes)) is decided or (
        not decided and line.writes), text


@pytest.mark.parametrize("text", [
    "ls -la && echo done", "git status; npm test | tee log.txt & make -j4", "A=1 B=2 make x",
    "timeout 5 nice make test", "xargs -n1 rm", "echo if then fi", "a | b |& c",
    "sudo -u x make", "env -i A=1 rm x", "\nls\n\nls;\n",
])
def test_the_plain_fast_path_agrees_with_the_grammar(text) -> None:
    from callgate_commandline._analyze import _analyze_plain, _Collector, _parse, _Walker

    fast = _Collector()
    assert _analyze_plain(text, fast, 0)
    slow = _Collector()
    _Walker(slow, 0).walk(_parse(text))
    assert fast.commands == slow.commands
