"""The plugin's tools, one module each."""
