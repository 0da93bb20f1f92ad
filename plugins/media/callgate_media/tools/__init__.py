"""The media plugin's tool: ``view_image`` (`view_image`)."""
