"""The commands of `arca`, one module per command group.

Each module has its `cmd_*(args, client)` functions and a `register(commands)` that adds their sub-parsers
through `commands.add(...)` (or a group of sub-commands through `commands.group(...)`); `arca_client.cli`
calls every module's `register` once, in the order `arca --help` lists them. A command returns a
`arca_client.output.Result` (what --json prints and what a person reads), and raises `UsageError` or an
`ArcaError` to fail. Modules import their helpers from `arca_client.output` and `arca_client.commands.base`,
never from `arca_client.cli`.
"""
