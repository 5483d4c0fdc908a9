"""The `arca` command: argparse over the SDK. `main(argv)` returns the exit code (see EXIT_TABLE).

The commands live in `arca_client.commands`, one module per group, each adding its sub-parsers with
`register`; results are printed by `arca_client.output`. This module holds what every command shares: the
global options, the exit codes, and turning errors into messages.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import json
import logging
import os
import re
import sys
import textwrap
from collections.abc import Callable, Iterable, Sequence
from types import ModuleType
from typing import Any, NoReturn

from arca_client import output
from arca_client._version import __version__
from arca_client.commands import (
    aliases,
    attestations,
    completion,
    console,
    consumers,
    events,
    guards,
    links,
    listing,
    maintenance,
    proxy,
    resolving,
    retention,
    rollouts,
    settings,
    tags,
    transfer,
    versions,
)
from arca_client.commands.base import Commands, UsageError, split_ref, tag_set_arg
from arca_client.config import DEFAULT_ENDPOINT, ConfigError
from arca_client.errors import (
    AccessDeniedError,
    ArcaError,
    ConflictError,
    NotFoundError,
    PreconditionFailedError,
    ValidationError,
)
from arca_client.output import OUTPUTS, table
from arca_client.refs import RefKind, ref_kind
from arca_client.sdk import Client
from arca_client.verify import VerificationError

__all__ = [
    "EXIT_CODES",
    "EXIT_TABLE",
    "UsageError",
    "build_parser",
    "exit_code",
    "main",
    "parse_args",
    "split_ref",
    "table",
]

# The command groups, in the order `arca --help` lists them: each module's `register` adds its commands.
GROUPS: tuple[ModuleType, ...] = (
    transfer,
    listing,
    versions,
    maintenance,
    links,
    tags,
    consumers,
    resolving,
    events,
    attestations,
    aliases,
    guards,
    retention,
    rollouts,
    console,
    proxy,
    settings,
    completion,
)

EXIT_OK = output.EXIT_OK
EXIT_USAGE = 1
EXIT_NOT_FOUND = 2
EXIT_CONFLICT = 3
EXIT_ERROR = 4
EXIT_UNVERIFIED = 5
EXIT_REFUSED = 6
EXIT_NOT_COMPLETED = output.EXIT_NOT_COMPLETED
EXIT_INTERRUPTED = 130

# The one exit-code table: `arca --help` prints it, README.md and docs/cli.md carry it word for word (a test
# compares all three), and `exit_code` below follows it. An exit code follows the HTTP status of the API's answer,
# whatever the command: an alias set to a version that does not exist is the API's 409 (the alias is what the request
# addresses; the version is a value in its body), so it is a conflict, not "not found".
EXIT_TABLE: tuple[tuple[int, str], ...] = (
    (EXIT_OK, "success"),
    (
        EXIT_USAGE,
        "usage: bad arguments, options or config file, including input the API refuses as invalid (HTTP 400)",
    ),
    (EXIT_NOT_FOUND, "not found: no such artifact, version, alias or local file (HTTP 404)"),
    (
        EXIT_CONFLICT,
        "conflict or failed precondition: a version pinned by an alias, an alias set to a version that does not "
        "exist or is deleted, an alias moved meanwhile, aliases block a purge, a download would overwrite a file "
        "(HTTP 409, 412)",
    ),
    (
        EXIT_ERROR,
        "any other error: network, credentials, throttling after retries, server error, checksum mismatch",
    ),
    (
        EXIT_UNVERIFIED,
        "not verified (download --verify): the stage's signing key is not the one pinned, the signature does not "
        "verify, or the version is unsigned; nothing was written",
    ),
    (
        EXIT_REFUSED,
        "refused: an alias policy or IAM does not allow this caller to do it (HTTP 403); the policy's refusal "
        "lists every rule broken",
    ),
    (
        EXIT_NOT_COMPLETED,
        "not completed: the rollout that rollout status --watch followed ended rolled_back, aborted or superseded",
    ),
    (EXIT_INTERRUPTED, "interrupted (Ctrl-C); a transfer says how far it got, and the same command resumes it"),
)


def _exit_codes_help() -> str:
    rows = []
    for code, meaning in EXIT_TABLE:
        wrapped = textwrap.wrap(meaning, 88)
        rows.append(f"  {code:<4} {wrapped[0]}")
        rows += [f"       {line}" for line in wrapped[1:]]
    return "\n".join(["exit codes:", *rows])


EXIT_CODES = f"""\
{_exit_codes_help()}

environment:
  ARCA_ENDPOINT    API endpoint: a URL or a configured name (after --endpoint, before the config's current)
  ARCA_SIGN        1/0: force SigV4 signing on or off (default: sign unless the endpoint is localhost)
  AWS_*            the standard AWS credential chain and region, used when signing
  XDG_CONFIG_HOME  where arca/config.toml is kept (default ~/.config)
"""

ClientFactory = Callable[[argparse.Namespace], Client]


GLOBAL_OPTIONS = "global options"
# What a command's --help says instead of repeating the global options and the exit codes.
COMMAND_FOOTER = "Global options (--json, --output, --endpoint, -q, ...), exit codes and environment: arca --help"
# Positionals described once for every command that takes them (by their metavar), unless the command says more.
POSITIONALS = {
    "NAME": "artifact name: up to 8 segments joined by /, e.g. payments/api",
    "ALIAS": "alias name, e.g. prod",
    "VERSION": "version number",
    "NAME[@REF]": "NAME@REF: REF is a version number, LATEST (the default), an alias or sha256:<hex or prefix>",
    "NAME@VERSION": "NAME@VERSION: a version number",
    "ID": "promotion id (or a unique prefix of it, as tables print it)",
    "FILE": "a file",
    "PREFIX": "a name prefix",
}


class _Parser(argparse.ArgumentParser):
    """Usage errors raise instead of exiting with argparse's code 2 (which means "not found" here).

    A command's parser (`hide_globals`) accepts the global options but leaves them out of its usage and help:
    `arca --help` lists them once.
    """

    hide_globals = False

    def error(self, message: str) -> NoReturn:
        raise UsageError(_suggest_choice(message), self.format_usage())

    def _shown(self) -> tuple[list[argparse.Action], list[argparse._ArgumentGroup]]:
        groups = [g for g in self._action_groups if not (self.hide_globals and g.title == GLOBAL_OPTIONS)]
        hidden = {id(a) for g in self._action_groups if g not in groups for a in g._group_actions}
        return [a for a in self._actions if id(a) not in hidden], groups

    def format_usage(self) -> str:
        actions, _ = self._shown()
        formatter = self._get_formatter()
        formatter.add_usage(self.usage, actions, self._mutually_exclusive_groups)
        return formatter.format_help()

    def format_help(self) -> str:
        actions, groups = self._shown()
        formatter = self._get_formatter()
        formatter.add_usage(self.usage, actions, self._mutually_exclusive_groups)
        formatter.add_text(self.description)
        for group in groups:
            formatter.start_section(group.title)
            formatter.add_text(group.description)
            formatter.add_arguments(group._group_actions)
            formatter.end_section()
        formatter.add_text(self.epilog)
        return formatter.format_help()


def _suggest_choice(message: str) -> str:
    """argparse's "invalid choice: 'lss' (choose from …)", with the close matches named first."""
    found = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
    if not found:
        return message
    choices = re.findall(r"'([^']*)'", found.group(2))
    close = difflib.get_close_matches(found.group(1), choices, n=3, cutoff=0.6)
    if not close:
        return message
    return f"{message[: found.start()]}invalid choice: {found.group(1)!r}; did you mean {' or '.join(close)}?"


def _global_options() -> _Parser:
    """The options every command takes, before or after its name."""
    common = _Parser(add_help=False)
    options = common.add_argument_group(GLOBAL_OPTIONS)
    options.add_argument(
        "--endpoint",
        default=argparse.SUPPRESS,
        help="API endpoint: a URL or the name of a configured endpoint (default: $ARCA_ENDPOINT, then the config "
        f"file's current endpoint, then {DEFAULT_ENDPOINT})",
    )
    options.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="machine-readable JSON output")
    options.add_argument(
        "--output",
        choices=OUTPUTS,
        default=argparse.SUPPRESS,
        help="json (the same as --json), table (the default: aligned, with headers) or text (tab-separated "
        "cells, no headers: for cut, awk and read)",
    )
    options.add_argument(
        "-q", "--quiet", action="store_true", default=argparse.SUPPRESS, help="print nothing on success (errors still)"
    )
    options.add_argument(
        "--sign",
        action=argparse.BooleanOptionalAction,
        default=argparse.SUPPRESS,
        help="SigV4-sign requests (default: unless the endpoint is localhost; ARCA_SIGN=1/0)",
    )
    options.add_argument(
        "--region",
        default=argparse.SUPPRESS,
        help="region to sign for (default: the configured endpoint's, else from its host name or the AWS config)",
    )
    options.add_argument(
        "--profile", default=argparse.SUPPRESS, help="AWS profile for credentials (default: the configured endpoint's)"
    )
    options.add_argument(
        "--local-user",
        default=argparse.SUPPRESS,
        help="the user a local server records as the caller (default: $ARCA_LOCAL_USER, else the server's `local`)",
    )
    options.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=argparse.SUPPRESS,
        help="progress bar on stderr (default: when stderr is a terminal)",
    )
    options.add_argument(
        "-v", "--verbose", action="store_true", default=argparse.SUPPRESS, help="log retries and request ids"
    )

    return common


def build_parser() -> argparse.ArgumentParser:
    # Global options work before or after the command: each is declared on the root and on every
    # command with default=SUPPRESS, so the command's copy never overwrites a value given at the root.
    common = _global_options()

    parser = _Parser(
        prog="arca",
        description="Arca: publish, alias, resolve and download versioned artifacts.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"arca {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    commands = Commands(subparsers, parents=[common], epilog=COMMAND_FOOTER, root=parser)
    for group in GROUPS:
        group.register(commands)
    _describe_positionals(parser)
    return parser


def _describe_positionals(parser: argparse.ArgumentParser) -> None:
    """Every command's positionals get a description (POSITIONALS, by metavar) where the command gave none."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                _describe_positionals(sub)
        elif not action.option_strings and action.help is None and isinstance(action.metavar, str):
            action.help = POSITIONALS.get(action.metavar)


_GLOBAL_DEFAULTS: dict[str, Any] = {
    "endpoint": None,
    "json": False,
    "output": None,
    "quiet": False,
    "sign": None,
    "region": None,
    "profile": None,
    "local_user": None,
    "progress": None,
    "verbose": False,
}


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """Parse `argv`; raises UsageError (exit 1). Global options absent everywhere get their defaults."""
    parser = build_parser()
    args, extra = parser.parse_known_args(list(argv))
    if extra:
        # argparse ends a `*` positional at the first option: `tag NAME --remove K A=B` leaves A=B over.
        if getattr(args, "command", None) == "tag" and all(e.partition("=")[0] and "=" in e for e in extra):
            args.tags = [*(args.tags or []), *(tag_set_arg(e) for e in extra)]
        else:
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
    for key, value in _GLOBAL_DEFAULTS.items():
        if not hasattr(args, key):
            setattr(args, key, value)
    if getattr(args, "endpoint_arg", None):  # a command naming its endpoint (`config trust-key ENDPOINT`)
        args.endpoint = args.endpoint_arg
    if args.output == "json":
        args.json = True
    elif args.output is not None and args.json:
        parser.error(f"--json and --output {args.output} disagree: give one")
    return args


def default_client(args: argparse.Namespace) -> Client:
    return Client(
        endpoint=args.endpoint, sign=args.sign, region=args.region, profile=args.profile, local_user=args.local_user
    )


def exit_code(error: ArcaError) -> int:
    """The exit code of an error, as EXIT_TABLE states it: by HTTP status (the error's class)."""
    if isinstance(error, VerificationError):
        return EXIT_UNVERIFIED
    if isinstance(error, ValidationError | ConfigError):
        return EXIT_USAGE
    if isinstance(error, NotFoundError):
        return EXIT_NOT_FOUND
    if isinstance(error, ConflictError | PreconditionFailedError):
        return EXIT_CONFLICT
    if isinstance(error, AccessDeniedError) and error.status == 403:
        return EXIT_REFUSED
    return EXIT_ERROR


# The API's messages name request fields and headers; the CLI's name the flags that set them. Tokens of the
# first table cannot be prose, so they are replaced wherever they appear; the plain words of the second only
# as the leading "field:" of a validation message. Either only where the command has that flag.
_API_TOKENS: tuple[tuple[str, str], ...] = (
    ("If-None-Match: *", "--create-only"),
    ("If-None-Match", "--create-only"),
    ("If-Match", "--if-revision"),
    ("force=true", "--force"),
    ("secondary_version_weight", "--weight"),
    ("secondary_version", "--canary"),
    ("expected_version", "--expect-version"),
    ("to_revision", "--to-revision"),
    ("keep_last", "--keep-last"),
    ("older_than_days", "--older-than-days"),
    ("dry_run", "--dry-run"),
    ("routing_key", "--key"),
    ("content_type", "--content-type"),
    ("region=", "--region"),
)
_API_FIELDS = {"metadata": "--metadata", "description": "--description", "reason": "--reason", "at": "--at"}


def in_flags(message: str, flags: Iterable[str]) -> str:
    """`message` with the API's field names replaced by the command's flags (see _API_TOKENS)."""
    available = set(flags)
    for token, flag in _API_TOKENS:
        if flag in available:
            message = re.sub(rf"(?<![\w-]){re.escape(token)}(?![\w-])", flag, message)
    leading = re.match(r"[a-z_]+(?=[:.])", message)
    if leading and _API_FIELDS.get(leading.group()) in available:
        message = _API_FIELDS[leading.group()] + message[leading.end() :]
    return message


def _flags(args: argparse.Namespace | None) -> list[str]:
    parser = getattr(args, "parser", None)
    if parser is None:
        return []
    return [flag for action in parser._actions for flag in action.option_strings]


def _fail(
    as_json: bool,
    code: str,
    message: str,
    error: ArcaError | None = None,
    *,
    verbose: bool = False,
    args: argparse.Namespace | None = None,
) -> None:
    """The error on stderr: `arca: error: CODE: MESSAGE`, or with --json the API's error shape on one line."""
    request_id = error.request_id if error else None
    if as_json:
        # `status` is the HTTP status of the API's answer; null for an error of the client's own (no answer,
        # bad arguments, a local file).
        body: dict[str, Any] = {"code": code, "message": message, "request_id": request_id, "status": None}
        if error is not None:
            body.update({"status": error.status, **error.details})
        print(json.dumps({"error": body}), file=sys.stderr)
        return
    print(f"arca: error: {code}: {message}", file=sys.stderr)
    where = [getattr(args, key, None) for key in ("name", "alias", "version")]
    for violation in (error.details.get("violations") or []) if error else []:  # an alias policy's refusal
        print(f"arca:   - {violation['rule']}: {guards.violation_hint(violation, *where)}", file=sys.stderr)
    if verbose and request_id:
        print(f"arca: request id {request_id}", file=sys.stderr)


def main(argv: Sequence[str] | None = None, *, client_factory: ClientFactory = default_client) -> int:
    """Run one command; returns the exit code (see EXIT_TABLE)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        return _main(argv, client_factory)
    except BrokenPipeError:
        # The reader went away (`arca events NAME | head -1`): it has what it wanted. Nothing more is written,
        # and stdout is pointed at /dev/null so that the interpreter's final flush cannot fail either.
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    finally:
        output.reset()


def _main(argv: list[str], client_factory: ClientFactory) -> int:
    try:
        args = parse_args(argv)
    except UsageError as error:
        as_json = "--json" in argv or "--output=json" in argv or _after(argv, "--output") == "json"
        if not as_json:
            sys.stderr.write(error.args[1] if len(error.args) > 1 else "")
        _fail(as_json, "UsageError", str(error.args[0]))
        return EXIT_USAGE
    except SystemExit as done:  # --help and --version
        return done.code if isinstance(done.code, int) else EXIT_OK
    output.configure(as_json=args.json, output=args.output, quiet=args.quiet)
    if args.verbose:
        logging.basicConfig(level=logging.INFO, format="arca: %(message)s", stream=sys.stderr)
    flags = _flags(args)
    try:
        client = None if args.offline else client_factory(args)
        try:
            code = output.render(args.handler(args, client))
            sys.stdout.flush()  # inside the try: a closed pipe shows here, not at exit
            return code
        except NotFoundError as error:
            _suggest_alias(client, args, error)
            raise
        finally:
            if client is not None:
                client.close()
    except BrokenPipeError:
        raise
    except UsageError as error:
        _fail(args.json, "UsageError", in_flags(str(error.args[0]), flags))
        return EXIT_USAGE
    except ArcaError as error:
        _fail(args.json, error.code, in_flags(error.message, flags), error, verbose=args.verbose, args=args)
        return exit_code(error)
    except FileNotFoundError as error:
        _fail(args.json, "FileNotFound", f"{error.filename}: {error.strerror}")
        return EXIT_NOT_FOUND
    except FileExistsError as error:
        hint = "; --force overwrites it" if "--force" in flags else ""
        _fail(args.json, "FileExists", f"{error.filename} exists{hint}")
        return EXIT_CONFLICT
    except OSError as error:
        _fail(args.json, type(error).__name__, str(error))
        return EXIT_ERROR
    except KeyboardInterrupt as stopped:
        # A transfer says how far it got (arca_client.transfer.Interrupted); anything else just stopped.
        print("", file=sys.stderr)
        message = str(stopped) or "interrupted"
        if args.json:
            _fail(True, "Interrupted", message)
        else:
            print(f"arca: {message}", file=sys.stderr)
        return EXIT_INTERRUPTED


def _after(argv: list[str], flag: str) -> str | None:
    return argv[argv.index(flag) + 1] if flag in argv[:-1] else None


# Commands whose NAME and ALIAS arguments name an alias (a NotFoundError there may be a misspelt alias).
_ALIAS_ARGUMENT_COMMANDS = ("alias_show", "alias_history", "alias_rollback", "alias_rm", "rollout_status")


def _suggest_alias(client: Client | None, args: argparse.Namespace, error: NotFoundError) -> None:
    """Add "did you mean NAME@prod?" to a not-found alias, when one of the artifact's aliases is close."""
    if client is None or "alias" not in error.message:
        return
    name, alias, shown = None, None, "{}"
    target = getattr(args, "target", None)
    if isinstance(target, str) and "@" in target:
        with contextlib.suppress(UsageError):
            name, ref = split_ref(target)
            if ref is not None and ref_kind(ref) is RefKind.ALIAS:
                alias, shown = ref, f"{name}@{{}}"
    elif args.handler.__name__.removeprefix("cmd_") in _ALIAS_ARGUMENT_COMMANDS:
        name, alias = getattr(args, "name", None), getattr(args, "alias", None)
    if not name or not alias:
        return
    try:
        known = [a.alias for a in client.iter_aliases(name)]
    except ArcaError:
        return
    close = difflib.get_close_matches(alias, known, n=3, cutoff=0.6)
    if close:
        error.message += f"; did you mean {' or '.join(shown.format(c) for c in close)}?"


if __name__ == "__main__":
    sys.exit(main())
