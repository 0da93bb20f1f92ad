"""The lsp tools: one group (`lsp`) sharing one implementation."""
