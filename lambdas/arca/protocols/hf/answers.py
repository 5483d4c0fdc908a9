"""The Hub's answers, field by field as `huggingface_hub` reads them.

Every file is answered as a Git LFS file, as the Hub answers its large files: Arca knows each file's SHA-256, not
the Git blob id of its bytes (that would need the bytes), and an LFS entry is exactly a SHA-256 and a size. Its
`oid` is then the Git blob id of the LFS pointer, which those two determine, as the Hub's is; `lfs.oid` (tree) or
`lfs.sha256` (model info) is the SHA-256 that `verify_repo_checksums` compares; the resolve answer's ETag is that
SHA-256, the name under which the client caches the bytes.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC
from typing import Any

from arca.domain.moments import from_iso, to_iso
from arca.protocols.hf.backend import FileEntry, Target

_POINTER = "version https://git-lfs.github.com/spec/v1\noid sha256:{sha256}\nsize {size}\n"
HubJson = dict[str, Any]


def lfs_pointer(entry: FileEntry) -> bytes:
    """The Git LFS pointer of a file: what Git would store in place of its bytes."""
    return _POINTER.format(sha256=entry.sha256, size=entry.size).encode()


def git_blob_id(data: bytes) -> str:
    """Git's object id of a blob holding `data` (SHA-1 of `blob <size>\\0<data>`)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def file_entry(entry: FileEntry) -> HubJson:
    """A tree listing's entry of a file (`RepoFile`): `type path size oid`, and `lfs` `{oid, size, pointerSize}`."""
    pointer = lfs_pointer(entry)
    return {
        "type": "file",
        "oid": git_blob_id(pointer),
        "size": entry.size,
        "path": entry.path,
        "lfs": {"oid": entry.sha256, "size": entry.size, "pointerSize": len(pointer)},
    }


def folder_entry(path: str, commit: str) -> HubJson:
    """A tree listing's entry of a folder (`RepoFolder`). Its `oid` is stable per commit and folder, not a Git tree
    id (which would need every file's Git blob id); no client compares it with anything."""
    oid = hashlib.sha1(f"{commit}\0{path}".encode(), usedforsecurity=False).hexdigest()
    return {"type": "directory", "oid": oid, "size": 0, "path": path}


def sibling(entry: FileEntry, blobs: bool) -> HubJson:
    """A model info's `siblings` item: `rfilename`, and with `?blobs=true` `size`, `blobId` and `lfs`."""
    if not blobs:
        return {"rfilename": entry.path}
    pointer = lfs_pointer(entry)
    return {
        "rfilename": entry.path,
        "size": entry.size,
        "blobId": git_blob_id(pointer),
        "lfs": {"sha256": entry.sha256, "size": entry.size, "pointerSize": len(pointer)},
    }


def model_info(repo: str, target: Target, commit: str, siblings: list[HubJson] | None) -> HubJson:
    """The model info (`ModelInfo`): `id` and `sha` are what the client needs; the rest is what a Hub answers for
    a public model no one has liked yet. `siblings` is None when the list did not fit (the client reads the tree)."""
    answer: HubJson = {
        "_id": commit[:24],
        "id": repo,
        "modelId": repo,
        "author": repo.split("/")[0] if "/" in repo else None,
        "sha": commit,
        "lastModified": hub_time(target.updated_at or target.created_at),
        "createdAt": hub_time(target.created_at),
        "private": False,
        "gated": False,
        "disabled": False,
        "downloads": 0,
        "likes": 0,
        "tags": [],
        "usedStorage": target.size,
    }
    if siblings is not None:
        answer["siblings"] = siblings
    return {key: value for key, value in answer.items() if value is not None}


def hub_time(moment: str | None) -> str | None:
    """An ISO 8601 time as the Hub writes it (`2024-05-01T12:00:00.000Z`, which the client's strict parser takes),
    or None when there is none or it cannot be read."""
    if not moment:
        return None
    try:
        parsed = from_iso(moment)
    except ValueError:
        return None
    aware = parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    return to_iso(aware)


def dumps(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()
