"""The model layer: the values that flow through callgate (calls, results, errors,
decisions, `ToolSpec`, `Target`, execution facts, canonical schemas). Imports nothing of
callgate's.
"""
