"""The `/hf/…` path family, read the way `huggingface_hub` 2.4 writes it.

`huggingface_hub` sends, below its endpoint (`HF_ENDPOINT`, which may carry a path):

- `GET api/models/{repo}` and `GET api/models/{repo}/revision/{revision}`: model info;
- `GET api/models/{repo}/tree/{revision}[/{path}]`: a tree listing (`?recursive=&expand=&cursor=`);
- `HEAD|GET {repo}/resolve/{revision}/{filename}`: one file.

`repo` is one or two segments, as raw as the client sends it; the revision and a tree's path are each one segment,
percent-encoded with no safe character (`main`, `refs%2Fpr%2F1`, `a%2Fb`), and a filename keeps its slashes. A path
whose slashes a proxy decoded still reads: the rest of the path is the revision (or path). Where a path reads two
ways, a two-segment repo wins (`api/models/a/tree/tree/main` is the repo `a/tree` at `main`); Arca's names never
hold the segment `resolve`, so a resolve path reads one way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote

MAX_PATH_BYTES = 1024
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True)
class ModelInfo:
    repo: str
    revision: str


@dataclass(frozen=True)
class Tree:
    repo: str
    revision: str
    path: str  # "" for the root


@dataclass(frozen=True)
class Resolve:
    repo: str
    revision: str
    path: str


Route = ModelInfo | Tree | Resolve


def parse(path: str) -> Route | None:
    """The route of a path below the Hub endpoint (percent-encoded, as received), or None if it is not one."""
    raw = path.removeprefix("/").split("/")
    segments = [unquote(s) for s in raw]
    if segments[:2] == ["api", "models"]:
        found = _api(segments[2:])
        if found is not None:
            return found
    return _resolve(segments)


def _api(rest: list[str]) -> Route | None:
    for width in (2, 1):  # a two-segment repo first
        if len(rest) > width + 1 and rest[width] == "revision":
            return ModelInfo(_join(rest[:width]), _join(rest[width + 1 :]))
        if len(rest) > width + 1 and rest[width] == "tree":
            return Tree(_join(rest[:width]), rest[width + 1], _join(rest[width + 2 :]))
    if 1 <= len(rest) <= 2:
        return ModelInfo(_join(rest), "main")
    return None


def _resolve(segments: list[str]) -> Route | None:
    for width in (1, 2):
        if len(segments) > width + 1 and segments[width] == "resolve":
            return Resolve(_join(segments[:width]), segments[width + 1], _join(segments[width + 2 :]))
    return None


def _join(segments: list[str]) -> str:
    return "/".join(segments)


def is_file_path(path: str) -> bool:
    """Whether `path` could name a file of a tree: 1 to 1,024 bytes of UTF-8, `/`-separated segments, none empty, `.`
    or `..`, no control character (the grammar of a tree's paths, so a path outside it is simply not found)."""
    try:
        size = len(path.encode())
    except UnicodeEncodeError:
        return False
    if not 1 <= size <= MAX_PATH_BYTES or _CONTROL.search(path):
        return False
    return all(segment not in ("", ".", "..") for segment in path.split("/"))
