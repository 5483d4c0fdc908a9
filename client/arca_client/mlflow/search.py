"""MLflow's registry search over Arca's listings.

MLflow's own filter and sort (`SearchModelUtils`, `SearchModelVersionUtils`) decide what matches and in which
order, on entities built from Arca's answers, so a filter means exactly what it means to MLflow. What Arca can
narrow is asked of it first: a name (`=`, `IN`) reads only those artifacts, a name prefix (`LIKE 'abc%'`) lists
only that prefix, a tag (`tags.k = 'v'`) asks Arca's tag search; anything else reads every artifact. Pages are
MLflow's offset tokens over the sorted matches, as its FileStore pages.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from mlflow.store.entities.paged_list import PagedList
from mlflow.utils.search_utils import SearchUtils

from arca_client.mlflow.errors import invalid

T = TypeVar("T")
_TAG_KEY = re.compile(r"[a-z0-9][a-z0-9_.:/-]{0,127}")
_NAME = re.compile(r"[a-z0-9]([a-z0-9._-]{0,62}[a-z0-9])?(/[a-z0-9]([a-z0-9._-]{0,62}[a-z0-9])?){0,7}")


@dataclass(frozen=True)
class Narrowing:
    """What Arca can be asked instead of everything: exact names, a name prefix, or one tag."""

    names: frozenset[str] | None = None
    prefix: str | None = None
    tag: tuple[str, str] | None = None

    @classmethod
    def of(cls, comparisons: Iterable[dict[str, Any]]) -> Narrowing:
        names: frozenset[str] | None = None
        prefix = tag = None
        for c in comparisons:
            key, comparator, value = c.get("key"), c.get("comparator"), c.get("value") or ""
            if c.get("type") == "attribute" and key == "name":
                if comparator in ("=", "IN"):
                    found = frozenset({str(value)} if comparator == "=" else (str(v) for v in value))
                    names = found if names is None else names & found  # conditions are joined by AND
                elif comparator == "LIKE":
                    prefix = re.split(r"[%_]", str(value), maxsplit=1)[0] or prefix
            elif c.get("type") == "tag" and comparator == "=" and tag is None:
                tag = (str(key), str(value))
        return cls(names, prefix, tag)

    def arca_names(self) -> list[str] | None:
        """The exact names that can exist in Arca (a name outside its grammar never does)."""
        return None if self.names is None else sorted(n for n in self.names if _NAME.fullmatch(n))

    def arca_tag(self) -> tuple[str, str] | bool | None:
        """The tag to search by; False when its key cannot exist in Arca (so nothing matches)."""
        if self.tag is None:
            return None
        return self.tag if _TAG_KEY.fullmatch(self.tag[0]) else False


def check_max_results(max_results: object, limit: int) -> int:
    """MLflow's bounds of `max_results` (its FileStore's messages)."""
    if not isinstance(max_results, int) or isinstance(max_results, bool) or max_results < 1:
        invalid(f"Invalid value for max_results. It must be a positive integer, but got {max_results}")
    if max_results > limit:
        invalid(
            f"Invalid value for request parameter max_results. It must be at most {limit}, but got value {max_results}"
        )
    return max_results


def page(items: list[T], max_results: int, page_token: str | None, finish: Callable[[T], T]) -> PagedList[T]:
    """The page of sorted `items` that `page_token` starts, each passed through `finish` (enrich only what is
    answered)."""
    start = SearchUtils.parse_start_offset_from_page_token(page_token)
    end = start + max_results
    token = SearchUtils.create_page_token(end) if end < len(items) else None
    return PagedList([finish(item) for item in items[start:end]], token)


def unique(names: Iterator[str]) -> Iterator[str]:
    seen: set[str] = set()
    for name in names:
        if name not in seen:
            seen.add(name)
            yield name
