"""What a tree publish sends: the distinct contents to upload, and the publish body (inline or by reference).

Every file's bytes are content of the artifact, stored once per sha256, so a content held by several paths is
uploaded once, and a content the registry already holds (listed in the artifact's newest tree, or answered
`exists: true` by `POST …/uploads`) not at all.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arca_client.trees.directory import LocalFile
from arca_client.trees.manifest import (
    TREE_MEDIA_TYPE,
    TreeEntry,
    canonical_manifest,
    check_tree,
    tree_digest,
    types_document,
)

# A publish body carries its `files` inline while its JSON, written as a string inside Lambda's event (as API
# Gateway puts it there), stays under this: Lambda takes 6 MB of event in all, headers and request context
# included. Above it the CLI uploads the tree manifest and publishes `{tree: <sha256>}`.
INLINE_EVENT_BYTES = 5 * 1000**2


@dataclass(frozen=True)
class Upload:
    """One content to upload: read from `source` (the first of `paths` to hold it)."""

    sha256: str
    size: int
    source: Path
    paths: tuple[str, ...]


@dataclass(frozen=True)
class UploadPlan:
    """The contents to upload (largest first, so parallel uploads end together) and what is already held."""

    uploads: list[Upload]
    held: int
    bytes_to_send: int
    bytes_held: int

    @property
    def files_to_send(self) -> int:
        return len(self.uploads)


def plan_upload(files: Sequence[LocalFile], held: Collection[str] = ()) -> UploadPlan:
    """The distinct contents of `files` that the registry lacks, given the sha256 it is known to hold."""
    by_content: dict[str, list[LocalFile]] = {}
    for file in files:
        by_content.setdefault(file.sha256, []).append(file)
    uploads = [
        Upload(sha256, same[0].size, same[0].source, tuple(f.path for f in same))
        for sha256, same in by_content.items()
        if sha256 not in held
    ]
    uploads.sort(key=lambda u: (-u.size, u.sha256))
    sent = sum(u.size for u in uploads)
    held_here = {sha256: same[0].size for sha256, same in by_content.items() if sha256 in held}
    return UploadPlan(uploads, len(held_here), sent, sum(held_here.values()))


@dataclass(frozen=True)
class PublishForm:
    """The body of `POST …/versions` (or `PUT …/latest`) for a tree; with `manifest`, those bytes must be uploaded
    first (as content of sha256 `digest`, content type TREE_MEDIA_TYPE) since the body names them, and so must
    `types` (the files' content types, which the body names as `file_types`) when it is given."""

    body: dict[str, Any]
    digest: str
    manifest: bytes | None = None
    types: bytes | None = None
    content_type: str = TREE_MEDIA_TYPE

    @property
    def by_reference(self) -> bool:
        return self.manifest is not None


def publish_form(
    entries: Sequence[TreeEntry],
    *,
    metadata: dict[str, str] | None = None,
    force: bool = False,
    inline_event_bytes: int = INLINE_EVENT_BYTES,
) -> PublishForm:
    """`{files: […], metadata?, force?}` when it fits one request, else `{tree: <sha256>, …}` with the manifest
    to upload first, and `{…, file_types: <sha256>}` with the files' content types to upload too when any file
    has one. Either way `digest` is the version's `sha256` to expect."""
    check_tree(entries)
    extra: dict[str, Any] = {}
    if metadata:
        extra["metadata"] = metadata
    if force:
        extra["force"] = True
    digest = tree_digest(entries)
    inline = {"files": [entry.as_json() for entry in entries], **extra}
    # requests sends ASCII JSON; inside the event it is a JSON string again, each `"` and `\` escaped.
    if len(json.dumps(json.dumps(inline))) <= inline_event_bytes:
        return PublishForm(inline, digest)
    types = types_document(entries)
    if types is not None:
        extra["file_types"] = hashlib.sha256(types).hexdigest()
    return PublishForm({"tree": digest, **extra}, digest, manifest=canonical_manifest(entries), types=types)
