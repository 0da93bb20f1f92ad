"""callgate's ``ask`` tool: the model asks the user 1-4 multiple-choice questions.

The arguments have the shape of Claude Code's AskUserQuestion (``questions``: 1-4, each
``header`` of at most 12 characters, ``question``, 2-4 ``options`` of ``label`` and
``description``, ``multiSelect``). Who answers is the integrator's business: implement
``callgate_ask_user`` (see `hookspecs`)::

    from callgate import hookimpl

    class MyFrontend:
        @hookimpl
        def callgate_ask_user(self, session, questions):
            return my_ui.ask(questions)   # {"q1": ["Postgres"]}, or an awaitable of it

``callgate serve`` answers through MCP elicitation and ``callgate replay --answers
FILE`` from a file (docs/ask.md). With no one to ask, or no answer within ``[ask]
timeout_seconds``, the result tells the model to assume and say so; it never hangs.

Entry point: ``[project.entry-points.callgate] ask = "callgate_ask"``.
"""

from . import hookspecs
from .plugin import callgate_register_tools
from .tools.specs import ASK_SCHEMA

__all__ = ["ASK_SCHEMA", "callgate_register_tools", "hookspecs"]
