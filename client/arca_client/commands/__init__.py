"""CLI commands, one module per feature, each with a `register` that adds its sub-parsers."""
