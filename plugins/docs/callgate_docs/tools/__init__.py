"""The docs plugin's tool: ``docs`` (`docs`)."""
