"""The hook the shell plugin needs from others: a command wrapper (shell.md §1.8).

``contrib/sandbox`` implements it to confine every command. The spec is added
while the shell plugin registers its tools, which is after pluggy's
``check_pending()``; an implementation therefore marks itself optional::

    from callgate import hookimpl

    @hookimpl(optionalhook=True)
    def callgate_wrap_command(argv, env, cwd, session, call):
        return ["bwrap", ..., *argv], env, cwd, note
"""

from __future__ import annotations

from callgate import hookspec


@hookspec(firstresult=True)
def callgate_wrap_command(argv, env, cwd, session, call):
    """Wrap one foreground command or background job before it starts.

    Return ``None`` (run it unchanged) or ``(argv, env, cwd, note)``, where
    ``note(output, exit_code)`` returns ``None`` or one line that is shown as
    ``[note: <line>]`` before the status line (foreground) or among the job's
    ``job_output`` notes (background; ``output`` is then the job's last 64 KiB).
    The first implementation that returns a value wins.
    """
