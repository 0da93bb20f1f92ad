"""The capability plugin's tool: ``use_capability`` (`use_capability`)."""
