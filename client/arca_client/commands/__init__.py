"""CLI commands by feature: each module adds its sub-parsers or options to the parser that arca_client.cli builds."""
