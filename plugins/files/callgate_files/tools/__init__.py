"""The file tools, one module each (``edit_file`` also holds ``multi_edit``, which shares
its implementation)."""
