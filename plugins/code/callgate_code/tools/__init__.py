"""The code plugin's tools: ``code_index`` and ``delete_symbol``, one module each."""
