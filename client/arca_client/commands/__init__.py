"""CLI commands of one feature each: the command functions and a `register` that adds their sub-parsers."""
