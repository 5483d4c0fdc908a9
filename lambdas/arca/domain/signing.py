"""What a stage signs when it publishes a version: its manifest, a canonical JSON text.

The manifest names the version and its bytes (`{name, version, sha256, size, created_at}`, sorted keys, no
spaces), so a client that checks the signature against its pinned key and the bytes against the manifest knows
the registry published exactly these bytes as this version, whatever was changed in the table or the bucket since.
Multipart content's manifest also names its layout (`part_size` and `parts_sha256`, the SHA-256 of the part
digests in order), so a client checks every range it downloads against part hashes the stage vouched for.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Protocol

ALGORITHM = "ECDSA_SHA_256"


def manifest(
    name: str,
    version: int,
    sha256: str,
    size: int,
    created_at: str,
    *,
    part_size: int | None = None,
    parts_sha256: str | None = None,
) -> str:
    fields: dict[str, object] = {"name": name, "version": version, "sha256": sha256, "size": size}
    fields["created_at"] = created_at
    if parts_sha256 is not None:
        fields.update(part_size=part_size, parts_sha256=parts_sha256)
    return json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class Signed:
    """A manifest and its signature (base64 of the DER-encoded ECDSA signature)."""

    manifest: str
    signature: str


class Signer(Protocol):
    """The stage's signing key: signs with ECDSA SHA-256, shows its public key (PEM)."""

    def sign(self, message: bytes) -> str:
        """The base64 of the DER signature of `message`."""
        ...

    def public_key_pem(self) -> str: ...
