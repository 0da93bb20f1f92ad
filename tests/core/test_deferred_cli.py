"""A tool registered as declared data whose code is missing or broken still fails where it
should, naming its plugin, through the ``callgate`` command (issue 38): a module that is not
installed fails boot (so ``callgate tools`` and every other command), one that fails to
import fails the calls, while listing the tools imports none of them."""

from __future__ import annotations

import json
from pathlib import Path

from .plugin_dist import callgate, make_plugin

SOURCE = '''
from callgate import ToolSpec, deferred, hookimpl

SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}


class Plugin:
    @hookimpl
    def callgate_register_tools(self, registry):
        registry.add(ToolSpec(name="shout", description="Shout the text.", schema=SCHEMA,
                              read_only=True, visibility="surface",
                              execute=deferred("%s:execute")))


plugin = Plugin()
'''


def test_a_missing_module_fails_callgate_tools_naming_the_plugin(tmp_path: Path) -> None:
    env = make_plugin(tmp_path, "shouty", SOURCE % "shouty_code_nowhere")
    done = callgate("tools", env=env, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert ("plugin shouty: tool shout: execute names shouty_code_nowhere:execute, whose "
            "module shouty_code_nowhere is not installed") in done.stderr
    assert done.stdout == ""


def test_a_broken_module_is_listed_and_fails_its_calls_naming_the_plugin(
        tmp_path: Path) -> None:
    env = make_plugin(tmp_path, "shouty", SOURCE % "shouty_code")
    (tmp_path / "shouty_code.py").write_text(
        "raise RuntimeError('half installed')\n"
        "def execute(ctx, args):\n    return args['text'].upper()\n", encoding="utf-8")
    listed = callgate("tools", env=env, cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.split()[0] == "shout"  # listing imported nothing of its code
    called = callgate("call", "shout", '{"text": "hi"}', "--workspace", str(tmp_path),
                      env=env, cwd=tmp_path)
    assert called.returncode == 1, called.stdout + called.stderr
    result = json.loads(called.stdout)
    assert result["is_error"]
    text = json.dumps(result)
    assert "shout (plugin shouty) cannot run: shouty_code:execute could not be loaded: " \
           "RuntimeError: half installed" in text
    # repaired, the same installation works: nothing was cached across processes
    (tmp_path / "shouty_code.py").write_text(
        "def execute(ctx, args):\n    return args['text'].upper()\n", encoding="utf-8")
    fixed = callgate("call", "shout", '{"text": "hi"}', "--workspace", str(tmp_path),
                     env=env, cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "HI" in fixed.stdout
