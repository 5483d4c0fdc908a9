"""How the `arca` command prints: the one place that chooses JSON or human output.

A command returns a `Result`: the JSON it answers with (`--json`, `--output json`) and how to show it to a
person (`--output table`, the default, or `--output text`: tab-separated cells without headers). `render`
prints one or the other; `-q` prints nothing on success. Commands that print as they go (a followed feed, a
watched rollout) print through `out()` and `line()` so that `-q` and redirection apply to them too.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from arca_client.models import Alias, AliasRevision, VersionConsumers
from arca_client.progress import human_size

EXIT_OK = 0
# A watched rollout that ended without completing (see cli.EXIT_TABLE): a result, not an error, so it has its code
# here, where results are rendered.
EXIT_NOT_COMPLETED = 7
OUTPUTS = ("json", "table", "text")


class _Mode:
    """How results are printed, set once per command from --output / --json / --quiet."""

    json = False
    text = False  # --output text: tab-separated cells, no header row, no padding (for cut, awk, read)
    quiet = False  # -q: nothing on stdout on success


MODE = _Mode()


def configure(*, as_json: bool, output: str | None, quiet: bool) -> None:
    MODE.json, MODE.text, MODE.quiet = as_json, output == "text", quiet


def reset() -> None:
    MODE.json = MODE.text = MODE.quiet = False


@dataclass(frozen=True)
class Result:
    """What a command answers: `data` for --json, `human` (text; None prints nothing) otherwise. Either may
    be a function making it, when making it takes requests that only one of the formats needs."""

    data: Any | Callable[[], Any]
    human: str | Callable[[], str | None] | None = None
    code: int = EXIT_OK  # the exit code once it is printed (a watched rollout that did not complete: 7)


def render(result: Result | int | None) -> int:
    """Print a command's result in the chosen format; the exit code (a command may return one itself)."""
    if result is None:
        return EXIT_OK
    if isinstance(result, int):
        return result
    if MODE.json:
        print_json(result.data() if callable(result.data) else result.data)
        return result.code
    text = result.human() if callable(result.human) else result.human
    if text is not None:
        print(text, file=out())
    return result.code


def note(text: str) -> None:
    """A remark beside the result, on stderr whatever the format (a listing cut by --limit says there is more);
    -q silences it."""
    if not MODE.quiet:
        print(f"arca: {text}", file=sys.stderr)


class _Discard:
    encoding = "utf-8"

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass


def out() -> TextIO:
    # Looked up at each call so that redirection (pytest's capsys, contextlib.redirect_stdout) applies.
    if MODE.quiet:
        return _Discard()  # type: ignore[return-value]
    return sys.stdout


def print_json(data: Any) -> None:
    print(json.dumps(data, indent=2, default=str), file=out())


def line(data: Any, text: str) -> None:
    """One line of a stream, printed at once: `data` as compact JSON with --json, else `text`."""
    print(json.dumps(data) if MODE.json else text, file=out(), flush=True)


def table(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """Columns aligned; a column whose values are all numbers is right-aligned. With --output text: the rows
    only, their cells separated by tabs."""
    text = [[("" if cell is None else str(cell)) for cell in row] for row in rows]
    if MODE.text:
        return "\n".join("\t".join(row) for row in text)
    widths = [len(h) for h in headers]
    for row in text:
        widths = [max(w, len(c)) for w, c in zip(widths, row, strict=True)]
    numeric = [all(r[i].isdigit() or r[i] in ("", "-") for r in text) and text != [] for i in range(len(headers))]

    def aligned(cells: Sequence[str]) -> str:
        parts = [c.rjust(w) if num else c.ljust(w) for c, w, num in zip(cells, widths, numeric, strict=True)]
        return "  ".join(parts).rstrip()

    return "\n".join([aligned(list(headers)), *(aligned(r) for r in text)])


def fields(pairs: Iterable[tuple[str, object]]) -> str:
    """`key   value` lines, keys padded to one width; None values are left out."""
    kept = [(k, v) for k, v in pairs if v is not None and v != ""]
    if MODE.text:
        return "\n".join(f"{k}\t{v}" for k, v in kept)
    width = max((len(k) for k, _ in kept), default=0)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in kept)


def when(timestamp: str | None) -> str:
    """ISO 8601 UTC from the API, shortened for a table: 2024-05-01 12:00:00."""
    return (timestamp or "")[:19].replace("T", " ")


def stamp(timestamp: str | None) -> str | None:
    """A time shown on its own (a field of `show`): as tables print it, then UTC; None when there is none."""
    return f"{when(timestamp)} UTC" if timestamp else None


def short(sha256: str | None) -> str:
    return (sha256 or "")[:12]


def target(value: int | str | None) -> str:
    return "-" if value is None else str(value)


def canary(alias: Alias | AliasRevision) -> str:
    if alias.secondary_version is None:
        return ""
    return f", canary {alias.secondary_version} at {alias.secondary_version_weight or 0}%"


def size(value: int | None) -> str:
    return "" if value is None else human_size(value)


def tags_text(tags: dict[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(tags.items()))


def indent(text: str) -> str:
    return "\n".join(f"  {row}" for row in text.splitlines())


def consumers_text(count: int, consumers: Sequence[str], where: str = "") -> str:
    """`3 consumers (a, b, c)`, `3 consumers still on v7 (a, b, c)` with `where`; `25 consumers (a, …, t and 5
    more)` when fewer are named than counted."""
    more = count - len(consumers)
    named = ", ".join(consumers) + (f" and {more} more" if more > 0 else "")
    return f"{count} consumer{'' if count == 1 else 's'}{where}" + (f" ({named})" if consumers else "")


def still_on(name: str, found: Iterable[VersionConsumers]) -> list[str]:
    """`team/app: 3 consumers still on v7 (a, b, c)` for each version some consumer is still on."""
    return [f"{name}: {consumers_text(on.count, on.consumers, f' still on v{on.version}')}" for on in found if on.count]
