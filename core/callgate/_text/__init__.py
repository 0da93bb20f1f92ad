"""The text layer: file bytes as text and back (codecs, BOMs, line endings, display
forms). Imports only `_model`.
"""
