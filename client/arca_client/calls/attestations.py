"""Attestations: documents about a version (provenance, SBOMs, test reports)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import IO, Any, ClassVar
from urllib.parse import quote

from arca_client.calls.transfers import TransferCalls, guess_content_type
from arca_client.decoding import Decoded
from arca_client.models import Page


@dataclass(frozen=True)
class Attestation(Decoded):
    SCHEMA: ClassVar[tuple[str, ...]] = ("Attestation",)
    id: str
    type: str
    sha256: str
    size: int
    media_type: str
    created_at: str
    created_by: str | None = None
    download_url: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


def _path(name: str, version: int, *suffix: str) -> str:
    return "/".join([f"/artifacts/{quote(name, safe='/')}/versions/{int(version)}/attestations", *suffix])


class AttestationCalls(TransferCalls):
    """Attestations of a version: added inline or as an uploaded file, listed, read one by one."""

    def attest(
        self,
        name: str,
        version: int,
        type: str,
        *,
        content: Mapping[str, Any] | None = None,
        file: str | os.PathLike[str] | IO[bytes] | None = None,
        media_type: str | None = None,
    ) -> Attestation:
        """Attach a document to a version: `content` (a JSON object, stored by the registry) or `file` (uploaded
        as a blob first, then referenced). Idempotent: the same document again is the same attestation."""
        if (content is None) == (file is None):
            raise ValueError("give content or file, not both")
        body: dict[str, Any] = {"type": type}
        if content is not None:
            body["content"] = dict(content)
        else:
            assert file is not None
            blob, _ = self.upload(name, file)
            body.update(sha256=blob.sha256, size=blob.size, media_type=media_type or _guess(file))
        data, _ = self._write("POST", _path(name, version), body=body)
        return Attestation.from_dict(data)

    def list_attestations(
        self,
        name: str,
        version: int,
        *,
        type: str | None = None,
        limit: int | None = None,
        next_token: str | None = None,
    ) -> Page[Attestation]:
        data = self._get(_path(name, version), {"type": type, "limit": limit, "next_token": next_token})
        return Page([Attestation.from_dict(a) for a in data["attestations"]], data.get("next_token"))

    def iter_attestations(
        self, name: str, version: int, *, type: str | None = None, page_size: int | None = None
    ) -> Iterator[Attestation]:
        return self._pages(
            _path(name, version), "attestations", Attestation.from_dict, {"type": type, "limit": page_size}
        )

    def get_attestation(self, name: str, version: int, attestation_id: str) -> Attestation:
        """One attestation with a short-lived `download_url` of its content."""
        return Attestation.from_dict(self._get(_path(name, version, attestation_id)))


def _guess(file: Any) -> str:
    if isinstance(file, str | os.PathLike):
        return guess_content_type(file) or "application/octet-stream"
    return "application/octet-stream"
