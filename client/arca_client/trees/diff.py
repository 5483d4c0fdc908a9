"""The files added, removed and changed between two trees, as data (`arca diff` renders it)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from arca_client.trees.manifest import TreeEntry, path_order


@dataclass(frozen=True)
class Changed:
    """A path both trees hold with different content."""

    path: str
    before: TreeEntry
    after: TreeEntry

    @property
    def size_change(self) -> int:
        return self.after.size - self.before.size


@dataclass(frozen=True)
class TreeDiff:
    """Paths only in the second tree (`added`), only in the first (`removed`), in both with another sha256 or size
    (`changed`), each in path order; `unchanged` counts the rest. A content type alone is no change: it is not part of
    the tree's digest."""

    added: list[TreeEntry]
    removed: list[TreeEntry]
    changed: list[Changed]
    unchanged: int

    @property
    def same(self) -> bool:
        return not (self.added or self.removed or self.changed)

    @property
    def size_change(self) -> int:
        """Bytes the second tree has more (negative: fewer) than the first."""
        return (
            sum(e.size for e in self.added)
            - sum(e.size for e in self.removed)
            + sum(c.size_change for c in self.changed)
        )

    def as_json(self) -> dict[str, Any]:
        """The diff as `arca diff --json` prints it."""

        def file(entry: TreeEntry) -> dict[str, Any]:
            return {"path": entry.path, "sha256": entry.sha256, "size": entry.size}

        return {
            "added": [file(e) for e in self.added],
            "removed": [file(e) for e in self.removed],
            "changed": [
                {
                    "path": c.path,
                    "from": {"sha256": c.before.sha256, "size": c.before.size},
                    "to": {"sha256": c.after.sha256, "size": c.after.size},
                    "size_change": c.size_change,
                }
                for c in self.changed
            ],
            "unchanged": self.unchanged,
            "size_change": self.size_change,
        }


def tree_diff(before: Iterable[TreeEntry], after: Iterable[TreeEntry]) -> TreeDiff:
    """What changed from the tree `before` to the tree `after` (entries in any order)."""
    old = {entry.path: entry for entry in before}
    new = {entry.path: entry for entry in after}
    added = path_order(entry for path, entry in new.items() if path not in old)
    removed = path_order(entry for path, entry in old.items() if path not in new)
    both = sorted(old.keys() & new.keys())
    changed = [Changed(p, old[p], new[p]) for p in both if (old[p].sha256, old[p].size) != (new[p].sha256, new[p].size)]
    return TreeDiff(added, removed, changed, len(both) - len(changed))
