"""A plain ``callgate tools``/``plugins`` is answered without building the parser (issue 38:
argparse, gettext, locale and shutil with its compressors are ~11 modules of a cold start),
and the answer is exactly what the parser makes of the same ``argv``."""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import subprocess
import sys
from typing import Any

import pytest
from callgate_cli import cli

FLAGS = {"tools": ["--json", "-v", "--verbose"], "plugins": ["-v", "--verbose"]}


def _plain_argvs() -> list[list[str]]:
    out = []
    for command, flags in FLAGS.items():
        for before in ([], ["-v"], ["--verbose"]):
            for n in range(len(flags) + 1):
                for after in itertools.permutations(flags, n):
                    out.append([*before, command, *after])
        out.append([command, "--json", "--json"] if command == "tools" else [command, "-v", "-v"])
    return out


@pytest.mark.parametrize("argv", _plain_argvs(), ids=" ".join)
def test_a_plain_argv_is_answered_as_the_parser_answers_it(argv: list[str]) -> None:
    fast = cli.plain_args(argv)
    assert fast is not None
    assert vars(fast) == vars(cli.build_parser(argv).parse_args(argv))


@pytest.mark.parametrize("argv", [
    [], ["-h"], ["tools", "-h"], ["tools", "--help"], ["tools", "--provider", "anthropic"],
    ["tools", "--provider=anthropic"], ["tools", "--os", "windows"], ["tools", "--os=posix"],
    ["tools", "--surface", "full"], ["tools", "--config", "x.toml"], ["tools", "--js"],
    ["tools", "-vv"], ["--json", "tools"], ["plugins", "--json"], ["tools", "extra"],
    ["tools", "--"], ["contract"], ["replay", "t.jsonl"], ["tool"], ["serve"],
])
def test_any_other_argv_goes_to_the_parser(argv: list[str]) -> None:
    assert cli.plain_args(argv) is None


def test_a_plain_callgate_tools_builds_no_parser_and_imports_no_argparse(tmp_path: Any) -> None:
    code = (
        "import contextlib, io, json, sys\n"
        "from callgate_cli import cli\n"
        "built = []\n"
        "real = cli.build_parser\n"
        "cli.build_parser = lambda *a, **k: built.append(a) or real(*a, **k)\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    code = cli.main(sys.argv[1:])\n"
        "print(json.dumps([code, len(built), 'argparse' in sys.modules]))\n"
    )

    def run(*argv: str) -> list[Any]:
        done = subprocess.run([sys.executable, "-c", code, *argv], cwd=tmp_path,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        return json.loads(done.stdout.splitlines()[-1])

    assert run("tools")[:2] == [0, 0]  # records the plugin manifest (the plugins import)
    assert run("tools") == [0, 0, False]
    assert run("tools", "--json") == [0, 0, False]
    assert run("tools", "--surface", "full") == [0, 1, True]  # the parser reads it


def test_the_parser_still_answers_help_and_errors() -> None:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
            pytest.raises(SystemExit) as exit_:
        cli.main(["tools", "--bogus"])
    assert exit_.value.code == 2
    assert "unrecognized arguments: --bogus" in err.getvalue()
