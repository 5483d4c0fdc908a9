"""ListObjectVersions of local S3 that reads only the keys under its prefix, safely beside concurrent writes.

moto answers a ListObjectVersions by deep-copying every version of every key in the bucket (bytes included),
iterating the bucket's key store while it does, and only then keeping the names under the prefix. Arca lists the
versions of one content key before collecting it (the collection's fence), so in local mode every collection
copied the whole bucket, and a publish or a delete in another thread meanwhile changed the store under the
iteration: moto answered 500 ("dictionary changed size during iteration"), which AWS never does for a listing.

`install()` hands moto's listing a view of the bucket whose key store holds only the names under the prefix,
taken as one snapshot of the store's names (a C-level copy, atomic under the GIL). moto then filters, sorts,
pages and answers exactly as before: the keys outside the prefix were ones it skipped anyway.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from local.patching import once


class _Keys:
    """The bucket's key store, cut to the names under `prefix` at one instant."""

    def __init__(self, store: Any, prefix: str) -> None:
        names = [name for name in list(dict.keys(store)) if name.startswith(prefix)]
        self._lists = [(name, list(store.getlist(name, []))) for name in names]

    def iterlists(self) -> Iterator[tuple[str, list[Any]]]:
        return iter(self._lists)


class _Bucket:
    def __init__(self, bucket: Any, prefix: str) -> None:
        self._bucket = bucket
        self.keys = _Keys(bucket.keys, prefix)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._bucket, name)


class _Backend:
    """The backend as the listing sees it: `get_bucket` answers the cut bucket, everything else is the backend's."""

    def __init__(self, backend: Any, bucket: _Bucket) -> None:
        self._backend = backend
        self._bucket = bucket

    def get_bucket(self, _name: str) -> _Bucket:
        return self._bucket

    def __getattr__(self, name: str) -> Any:
        return getattr(self._backend, name)


def _cut(listing: Callable[..., Any]) -> Callable[..., Any]:
    def list_object_versions(
        self: Any,
        bucket_name: str,
        delimiter: str | None = None,
        key_marker: str | None = None,
        max_keys: int | None = 1000,
        prefix: str = "",
        version_id_marker: str | None = None,
    ) -> Any:
        view = _Backend(self, _Bucket(self.get_bucket(bucket_name), prefix or ""))
        return listing(view, bucket_name, delimiter, key_marker, max_keys, prefix, version_id_marker)

    list_object_versions.__wrapped__ = listing  # type: ignore[attr-defined]
    return list_object_versions


@once
def install() -> None:
    """List object versions of this process's moto S3 as the module docstring says. Idempotent."""
    from moto.s3.models import S3Backend

    S3Backend.list_object_versions = _cut(S3Backend.list_object_versions)  # type: ignore[method-assign]
