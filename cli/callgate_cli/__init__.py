"""The ``callgate`` command (``callgate-cli``): replay, call, tools, contract, plugins, demo
and worker, plus what packages add through the ``callgate.commands`` entry points
(``callgate sessions``, ``callgate serve``, ``callgate rules``). It uses only the public API
of ``callgate`` and the provider renderings it finds installed; ``python -m callgate_cli``
runs it too.
"""
