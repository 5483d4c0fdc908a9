"""Blobs, descriptors, manifests and indexes for the OCI tests, built as clients build them."""

from __future__ import annotations

import hashlib
import json
from typing import Any

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"
EMPTY = "application/vnd.oci.empty.v1+json"
LAYER = "application/vnd.oci.image.layer.v1.tar"
TITLE = "org.opencontainers.image.title"


def digest(content: bytes) -> str:
    return "sha256:" + hashlib.sha256(content).hexdigest()


def descriptor(content: bytes, media_type: str = LAYER, title: str | None = None, **extra: Any) -> dict[str, Any]:
    found: dict[str, Any] = {"mediaType": media_type, "digest": digest(content), "size": len(content)}
    if title is not None:
        found["annotations"] = {TITLE: title}
    return found | extra


def image(
    layers: list[dict[str, Any]], config: bytes = b"{}", config_type: str = EMPTY, **extra: Any
) -> dict[str, Any]:
    return {
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST,
        "config": descriptor(config, config_type),
        "layers": layers,
    } | extra


def index(manifests: list[bytes], **extra: Any) -> dict[str, Any]:
    entries = [
        descriptor(m, OCI_MANIFEST, platform={"os": "linux", "architecture": f"arch{i}"})
        for i, m in enumerate(manifests)
    ]
    return {"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": entries} | extra


def encode(document: dict[str, Any]) -> bytes:
    """As oras-py sends a manifest (json.dumps with its default separators): the bytes are what gets digested."""
    return json.dumps(document).encode()


def subject_of(manifest: bytes, media_type: str = OCI_MANIFEST) -> dict[str, Any]:
    return descriptor(manifest, media_type)
