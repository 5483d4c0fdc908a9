"""Attestations: documents about a version (provenance, SBOMs, test reports), kept with it.

Content-addressed and immutable: an attestation's id is the sha256 of its type and its content's sha256 together
(`attestation_id`), so the same document of the same type twice is one attestation (the second answer is 200 and
writes nothing), and the same document under another type is another attestation, never the first one answered
for a type it does not have. Attestations made when the id was the content's sha256 alone keep their ids; a
document posted again with the type of such an attestation is that attestation. The bytes are stored under the
version's own prefix (keys.attestation_blob_key) before the transaction that records the attestation: a crash in
between leaves bytes nothing references, which the version's expiry removes with the rest of its prefix.
"""

from __future__ import annotations

import hashlib
import json

from arca.adapters import keys
from arca.adapters.s3 import Blobs
from arca.adapters.store.attestations import AttestationStore, AttestationTaken
from arca.adapters.store.change import Change
from arca.domain.entities import Attestation, AttestationPage
from arca.domain.errors import ConflictError, NotFoundError, PayloadTooLargeError, ValidationError
from arca.domain.models import DEFAULT_CONTENT_TYPE, MAX_INLINE_ATTESTATION, AttestationBody
from arca.services.reading import Reading
from arca.services.retry import Policy

INLINE_MEDIA_TYPE = "application/json"


def attestation_id(type_: str, sha256: str) -> str:
    """An attestation's identity: the sha256 of `<type>` and the content's sha256 (hex), joined by a newline."""
    return hashlib.sha256(f"{type_}\n{sha256}".encode()).hexdigest()


def canonical(content: dict[str, object]) -> bytes:
    """The stored bytes of inline content: sorted keys, no spaces, UTF-8, so the same document has one sha256.

    Raises ValidationError(content) for text that is not Unicode (a lone surrogate escaped in the JSON body), and
    for a number that is not JSON (NaN, Infinity; the request model refuses them first).
    """
    try:
        text = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except ValueError:
        raise ValidationError("content is not strict JSON: NaN and Infinity have no JSON", field="content") from None
    try:
        return text.encode()
    except UnicodeEncodeError:
        raise ValidationError(
            "content holds text that is not valid Unicode (a lone surrogate)", field="content"
        ) from None


class Attesting:
    def __init__(self, store: AttestationStore, blobs: Blobs, reading: Reading, policy: Policy) -> None:
        self.store = store
        self.blobs = blobs
        self.reading = reading
        self.policy = policy

    def attest(
        self, name: str, version: int, body: AttestationBody, *, identity: str | None = None
    ) -> tuple[Attestation, bool]:
        """Add an attestation to a live version; (the attestation, True when it was made now).

        Raises NotFoundError, ConflictError (deleted version; the referenced blob not uploaded),
        AttestationLimitError, PayloadTooLargeError (inline content over MAX_INLINE_ATTESTATION bytes),
        ValidationError (a referenced blob of another size or content).
        """
        found = self.reading.version(name, version)
        if found.deleted:
            raise ConflictError(f"version {version} of {name!r} is deleted; restore it first", field="version")
        data: bytes | None = None
        if body.content is not None:
            data = canonical(body.content)
            if len(data) > MAX_INLINE_ATTESTATION:
                raise PayloadTooLargeError(
                    f"content is {len(data)} bytes as JSON; at most {MAX_INLINE_ATTESTATION}", field="content"
                )
            sha256, size, media_type = hashlib.sha256(data).hexdigest(), len(data), INLINE_MEDIA_TYPE
        else:
            assert body.sha256 is not None and body.size is not None  # the body model requires both
            sha256, size, media_type = body.sha256, body.size, body.media_type or DEFAULT_CONTENT_TYPE
        made = attestation_id(body.type, sha256)
        existing = self.store.get(name, version, made) or self._legacy(name, version, body.type, sha256)
        if existing is not None:
            return existing, False
        key = keys.attestation_blob_key(name, version, made)
        if data is not None:
            self.blobs.put(key, data, content_type=media_type)
        else:
            source = keys.blob_key(name, sha256)
            self.blobs.copy(source, self.blobs.verify(source, sha256, size), key, content_type=media_type)
        now = self.policy.now()
        attestation = Attestation(
            id=made,
            type=body.type,
            sha256=sha256,
            size=size,
            media_type=media_type,
            created_at=now,
            created_by=identity,
        )
        change = Change(name, by=attestation.created_by, now=now)
        self.store.stage_add(change, version, attestation)
        try:
            self.store.commit(change)
        except AttestationTaken:  # made by a concurrent request
            existing = self.store.get(name, version, made)
            if existing is None:  # and gone with its version since: nothing to show
                raise NotFoundError(f"artifact {name!r} has no version {version}") from None
            return existing, False
        return attestation, True

    def _legacy(self, name: str, version: int, type_: str, sha256: str) -> Attestation | None:
        """The attestation of this document and type made when an id was the content's sha256 alone, if any."""
        found = self.store.get(name, version, sha256)
        return found if found is not None and found.type == type_ else None

    def page(self, name: str, version: int, *, kind: str | None, limit: int, token: str | None) -> AttestationPage:
        self.reading.version(name, version)
        found, next_token = self.store.page(name, version, kind=kind, limit=limit, token=token)
        return AttestationPage(attestations=found, next_token=next_token)

    def get(self, name: str, version: int, attestation_id: str) -> Attestation:
        """One attestation with a presigned `download_url` of its content."""
        found = self.store.get(name, version, attestation_id)
        if found is None:
            self.reading.version(name, version)
            raise NotFoundError(f"version {version} of {name!r} has no attestation {attestation_id}")
        url, expires_at = self.blobs.presign_download(
            keys.attestation_blob_key(name, version, found.id),
            content_type=found.media_type,
            filename=f"{found.type}-{found.id[:12]}",
        )
        return found.model_copy(update={"download_url": url, "expires_at": expires_at})
