"""The commands plugin's tool: ``slash_command`` (`slash_command`)."""
