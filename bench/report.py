"""Plain-text (markdown-style) tables of the results."""

from __future__ import annotations

from collections.abc import Sequence

from bench.harness import Measurement, Result

DASH = "-"


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(str(cell)) for cell in column) for column in zip(headers, *rows, strict=False)]
    numeric = [all(_is_number(row[i]) for row in rows) and bool(rows) for i in range(len(headers))]

    def line(cells: Sequence[str]) -> str:
        padded = [c.rjust(w) if num else c.ljust(w) for c, w, num in zip(cells, widths, numeric, strict=True)]
        return "| " + " | ".join(padded) + " |"

    rule = "|" + "|".join(
        ("-" * (w + 1) + ":") if num else ("-" * (w + 2)) for w, num in zip(widths, numeric, strict=True)
    )
    return "\n".join([line(headers), rule + "|", *(line([str(c) for c in row]) for row in rows)])


def _is_number(cell: str) -> bool:
    try:
        float(cell.rstrip("x"))
    except ValueError:
        return cell == DASH
    return True


def ms(value: float) -> str:
    return f"{value:.2f}" if value < 100 else f"{value:.0f}"


def ratio(big: float, small: float) -> str:
    return f"{big / small:.2f}x" if small > 0 else DASH


def _side(m: Measurement | None) -> list[str]:
    if m is None:
        return [DASH, DASH, DASH]
    return [m.describe_calls(), ms(m.median_ms), ms(m.p90_ms)]


def group_table(results: Sequence[Result]) -> str:
    headers = [
        "operation",
        "n",
        "Arca calls",
        "Arca median ms",
        "Arca p90 ms",
        "versioned calls",
        "versioned median ms",
        "versioned p90 ms",
    ]
    rows = []
    for result in results:
        n = (result.arca or result.versioned).n if (result.arca or result.versioned) else 0
        rows.append([result.case.label, str(n), *_side(result.arca), *_side(result.versioned)])
    return table(headers, rows)


def notes(results: Sequence[Result]) -> list[str]:
    return [f"  - {r.case.label}: {r.case.note}" for r in results if r.case.note]
