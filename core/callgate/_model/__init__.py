"""The model layer: the values that flow through callgate (calls, results, errors,
decisions, `ToolSpec`, `Target`, execution facts, canonical schemas). Imports nothing of
callgate's.
"""

#: callgate's version (`callgate.__version__`; the tracer names it too)
VERSION = "0.1.0"
