"""The CLI's commands, one module per feature: its command functions and a `register` adding their parsers."""
