"""callgate's workflow tools: ``todo_write``, ``present`` and ``compress``.

- ``todo_write`` replaces the model's task list (``session.extension(TODOS)``, kept in
  ``todos.json``), with stable ids and a warning when unfinished items vanish.
- ``present`` records 1-8 existing files as deliverables
  (``session.extension(PRESENTED_FILES)``, kept in ``presented.json``): paths and
  descriptions only, all or nothing.
- ``compress`` summarizes part of the conversation when the integrator provides
  one: implement ``callgate_session_conversation`` and
  ``callgate_session_summarizer`` (see `callgate_workflow.hookspecs`)::

      class MyIntegration:
          @callgate.hookimpl
          def callgate_session_conversation(self, session):
              return my_conversation_for(session)      # messages(), active_turn, record_compression

          @callgate.hookimpl
          def callgate_session_summarizer(self, session):
              return my_summarizer                      # async summarize(messages, focus)

Entry point: ``[project.entry-points.callgate] workflow = "callgate_workflow"``.
"""

from . import hookspecs
from ._conversation import CompressionRecord, Conversation, Message, Summarizer
from .plugin import callgate_register_tools
from .tools.present import PRESENTED_FILES, PresentedFiles
from .tools.todo_write import TODOS, Todo, TodoList

__all__ = [
    "PRESENTED_FILES",
    "TODOS",
    "CompressionRecord",
    "Conversation",
    "Message",
    "PresentedFiles",
    "Summarizer",
    "Todo",
    "TodoList",
    "callgate_register_tools",
    "hookspecs",
]
