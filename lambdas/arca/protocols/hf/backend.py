"""What the Hub protocol asks of Arca: resolve a ref, list a tree's files, one file's URL.

The services implement `Backend` over the trees of files (reading.resolve, trees.files, trees.file); the tests
implement it in memory. Every method raises one of the three `HubNotFound` errors below for what does not exist,
and the protocol turns each into the 404 and `X-Error-Code` that makes `huggingface_hub` raise its own error.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

LATEST = "LATEST"


@dataclass(frozen=True)
class Target:
    """What a ref resolved to: one version's tree (or LATEST's, when no version holds that content).

    `version` is None only for LATEST content that no version holds; a backend that finds LATEST's content in its
    newest version answers that version, so `main` (falling back to LATEST) has a stable commit id.
    `sha256` is the digest of the tree manifest (the version's sha256), `size` the sum of its files' sizes.
    """

    version: int | None
    sha256: str
    size: int
    created_at: str | None = None
    updated_at: str | None = None
    # The backend's own record of what it resolved, handed back to its `files` and `file`; the protocol never
    # reads it (nor compares it).
    source: Any = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class FileEntry:
    """One file of a tree: its path (1 to 1,024 bytes of UTF-8, `/`-separated), content digest and size."""

    path: str
    sha256: str
    size: int


class HubNotFound(Exception):
    """Base of the three misses the Hub tells apart; `code` is the `X-Error-Code` the client reads."""

    code = "NotFound"

    def __init__(self, message: str, *, commit: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.commit = commit  # the commit the miss was found at, when the revision resolved


class RepoNotFound(HubNotFound):
    """No artifact of that name (or a name outside the grammar): the client raises RepositoryNotFoundError."""

    code = "RepoNotFound"


class RevisionNotFound(HubNotFound):
    """The artifact exists but the ref does not (or no longer names that content): RevisionNotFoundError."""

    code = "RevisionNotFound"


class EntryNotFound(HubNotFound):
    """The revision exists but holds no such file or folder: the client raises EntryNotFoundError."""

    code = "EntryNotFound"


class Backend(Protocol):
    """Arca's reads as the Hub protocol needs them. Each call is a read; none writes."""

    def resolve(self, repo: str, ref: int | str, routing_key: str | None) -> Target:
        """`ref` is a version number, an alias name or LATEST; an alias with a canary picks by `routing_key`.

        Raises RepoNotFound (no artifact `repo`) or RevisionNotFound (no such live version or alias; a
        soft-deleted or expired version is not found). A version that is one blob, not a tree, is a tree of one
        file (named by its `filename` metadata) for `files` and `file`.
        """
        ...

    def files(
        self, repo: str, target: Target, prefix: str, limit: int, token: str | None
    ) -> tuple[list[FileEntry], str | None]:
        """At most `limit` files of the target's tree whose path starts with `prefix`, in path order (the byte
        order of the UTF-8 paths), and the token of the next page (None on the last)."""
        ...

    def file(self, repo: str, target: Target, path: str) -> tuple[FileEntry, str]:
        """The file at `path` and a short-lived URL of its bytes on another origin (a presigned S3 GET).

        Raises EntryNotFound when the tree holds no file at `path`.
        """
        ...
