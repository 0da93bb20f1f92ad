"""What the ask plugin needs from the integrator: someone to put the questions to.

Questions and answers are plain JSON-shaped data, so an integrator (a terminal
UI, ``callgate serve``'s MCP elicitation, ``callgate replay --answers``) needs
nothing from this package to answer.
"""

from __future__ import annotations

from callgate import hookspec


@hookspec(firstresult=True)
def callgate_ask_user(session, questions):
    """Put ``questions`` to the user of ``session`` and return the answers.

    ``questions`` is a list of dicts ``{"id": "q1", "header", "question", "options":
    [{"label", "description"}], "multiSelect"}`` (ids ``q1``..``qN`` in order).

    Return (or return an awaitable of):

    - ``None``: no one can be asked here (the next implementation is tried; with none,
      the model is told to assume and say so);
    - a mapping ``{question id: [str, ...]}``: the chosen option labels (one for a
      single-select question), or free text the user typed instead ("Other"). A
      question id left out was not answered; a question id mapped to ``None`` was
      dismissed. Every question dismissed means the user dismissed the whole form.
    """
