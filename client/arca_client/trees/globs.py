"""`--include` / `--exclude`: which files of a directory a tree holds.

Patterns are matched against each file's path relative to the directory, with `/` between folders, as in a
`.gitignore` (without its `!` negation, since order-dependent rules on a command line surprise):
- `*` is any run of characters but `/`, `?` one character but `/`, `[abc]` / `[!abc]` / `[a-z]` one of a class;
  `\\` makes the next character literal.
- `**` as a whole segment is any number of folders, none included: `**/test`, `docs/**`, `a/**/b`.
- A pattern without a `/` (but a trailing one) matches a name at any depth: `*.pyc`, `__pycache__`.
- A pattern with a `/` is anchored at the directory: `docs/*.md`, `/build` (a leading `/` only anchors).
- A trailing `/` matches folders only: `build/`.
- A pattern that matches a folder matches everything in it.

A file is in the tree when it matches an `--include` (or none was given) and no `--exclude`. Excludes are
applied while walking, so an excluded folder is never read.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from arca_client.trees.manifest import TreeError


@dataclass(frozen=True)
class Pattern:
    text: str
    regex: re.Pattern[str]
    folders_only: bool

    @classmethod
    def compile(cls, text: str) -> Pattern:
        folders_only = text.endswith("/")
        body = text[:-1] if folders_only else text
        anchored = "/" in body
        body = body.removeprefix("/")
        if not body or body.startswith("/"):
            raise TreeError(f"{text!r} is not a pattern of paths", code="InvalidPattern", details={"pattern": text})
        segments = body.split("/")
        parts: list[str] = []
        for index, segment in enumerate(segments):
            last = index == len(segments) - 1
            if segment == "**":
                parts.append(".*" if last else "(?:[^/]+/)*")
            else:
                parts.append(_segment(segment, text) + ("" if last else "/"))
        regex = "".join(parts)
        return cls(text, re.compile(regex if anchored else f"(?:.*/)?{regex}", re.DOTALL), folders_only)

    def matches(self, path: str, *, folder: bool) -> bool:
        """Whether the pattern matches this path itself (a file, or a folder with `folder`)."""
        return (folder or not self.folders_only) and self.regex.fullmatch(path) is not None


def _segment(segment: str, pattern: str) -> str:
    out: list[str] = []
    index = 0
    while index < len(segment):
        char = segment[index]
        index += 1
        if char == "\\":
            if index == len(segment):
                raise TreeError(
                    f"{pattern!r}: a '\\' escapes nothing", code="InvalidPattern", details={"pattern": pattern}
                )
            out.append(re.escape(segment[index]))
            index += 1
        elif char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[" and (end := _class_end(segment, index)) is not None:
            inner = segment[index:end]
            negate = inner[:1] in ("!", "^")
            inner = inner[1:] if negate else inner
            escaped = "".join("\\" + c if c in "\\^[]" else c for c in inner)
            out.append(f"[{'^/' if negate else ''}{escaped}]")
            index = end + 1
        else:
            out.append(re.escape(char))
    return "".join(out)


def _class_end(segment: str, start: int) -> int | None:
    """Where the class opened before `start` closes (a `]` first in it is literal), or None: `[` is literal."""
    index = start + (1 if segment[start : start + 1] in ("!", "^") else 0)
    index += 1 if segment[index : index + 1] == "]" else 0
    end = segment.find("]", index)
    return None if end < 0 else end


class Selector:
    """The include and exclude patterns of one walk."""

    def __init__(self, include: Sequence[str] = (), exclude: Sequence[str] = ()) -> None:
        self.include = [Pattern.compile(p) for p in include]
        self.exclude = [Pattern.compile(p) for p in exclude]

    def enters(self, folder: str) -> bool:
        """Whether a walk goes into this folder (relative path): no exclude matches it."""
        return not any(p.matches(folder, folder=True) for p in self.exclude)

    def keeps(self, path: str) -> bool:
        """Whether a file (relative path, its folders entered) is in the tree."""
        if any(p.matches(path, folder=False) for p in self.exclude):
            return False
        if not self.include:
            return True
        folders = path.split("/")[:-1]
        ancestors = ["/".join(folders[: depth + 1]) for depth in range(len(folders))]
        return any(
            p.matches(path, folder=False) or any(p.matches(a, folder=True) for a in ancestors) for p in self.include
        )
