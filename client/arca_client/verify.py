"""Verifying signed versions: the stage's public key pinned on first use, and each manifest checked against it.

A stage signs every version it publishes: the `manifest` (canonical JSON of `{name, version, sha256, size,
created_at}`, and for multipart content `part_size` and `parts_sha256`, the SHA-256 of its part digests) with ECDSA
SHA-256 by its own key, the `signature` base64 of DER. The first verified download from
an endpoint pins that endpoint's public key in $XDG_CONFIG_HOME/arca/signing-keys.json (as SSH's known_hosts
does); from then on a different key is refused, never silently accepted. A manifest that verifies and names the
bytes (sha256 and size) proves they are what the stage published, whatever was changed in its table or bucket.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from arca_client.config import canonical_endpoint, config_path
from arca_client.errors import ArcaError

ALGORITHM = "ECDSA_SHA_256"


class VerificationError(ArcaError):
    """A download could not be verified; nothing was written."""


class SigningKeyChangedError(VerificationError):
    """The endpoint's signing key is not the one pinned for it. Trust the new one (`arca config trust-key`,
    `trust`) only if the stage's key was really replaced."""


class SignatureError(VerificationError):
    """The signature does not verify, or the signed manifest does not describe what the registry served."""


class UnsignedVersionError(VerificationError):
    """The version was published before its stage signed versions: there is nothing to verify."""


def pins_path(environ: Mapping[str, str] | None = None) -> Path:
    return config_path(environ).with_name("signing-keys.json")


def load_pins(path: Path | None = None) -> dict[str, str]:
    path = path or pins_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as error:
        raise VerificationError(f"{path}: {error}", code="PinsUnreadable") from None
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def pinned_key(endpoint: str, path: Path | None = None) -> str | None:
    """The key pinned for `endpoint`, whatever spelling of it pinned the key (`canonical_endpoint`); None if none."""
    key = canonical_endpoint(endpoint)
    pins = load_pins(path or pins_path())
    if key in pins:
        return pins[key]
    return next((pem for spelled, pem in sorted(pins.items()) if canonical_endpoint(spelled) == key), None)


def pin(endpoint: str, public_key_pem: str, path: Path | None = None) -> str:
    """The key pinned for `endpoint`: the one pinned before, else `public_key_pem`, pinned now (first use). Pins are
    kept by the endpoint's canonical form: `http://localhost:3000` and `HTTP://127.0.0.1:3000/` are one pin.

    Raises SigningKeyChangedError when another key is pinned for the endpoint.
    """
    path = path or pins_path()
    pinned = pinned_key(endpoint, path)
    if pinned is None:
        trust(endpoint, public_key_pem, path)
        return public_key_pem
    if pinned.strip() != public_key_pem.strip():
        raise SigningKeyChangedError(
            f"the signing key of {endpoint} ({fingerprint(public_key_pem)}) is not the one pinned in {path} "
            f"({fingerprint(pinned)}): refusing to trust it. If the stage's key was replaced on purpose, `arca config "
            f"trust-key {canonical_endpoint(endpoint)}` shows the new key's fingerprint and pins it",
            code="SigningKeyChanged",
        )
    return pinned


def trust(endpoint: str, public_key_pem: str, path: Path | None = None) -> None:
    """Pin `public_key_pem` for `endpoint` (under its canonical form), replacing any key pinned for any spelling
    of it. Only a person who checked the key's fingerprint should call this for a key that changed."""
    path = path or pins_path()
    key = canonical_endpoint(endpoint)
    pins = {spelled: pem for spelled, pem in load_pins(path).items() if canonical_endpoint(spelled) != key}
    pins[key] = public_key_pem
    _save(pins, path)


def fingerprint(public_key_pem: str) -> str:
    """`SHA256:<base64>` of the key's DER SubjectPublicKeyInfo, as `ssh-keygen -l` shows a key's."""
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat, load_pem_public_key

    der = load_pem_public_key(public_key_pem.encode()).public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
    return "SHA256:" + base64.b64encode(hashlib.sha256(der).digest()).decode().rstrip("=")


def check(resolution: Mapping[str, Any], public_key_pem: str) -> dict[str, Any]:
    """The manifest of a version or resolve answer, once its signature verifies with the key and it names the
    answer's name, version (a number), sha256 and size. Raises UnsignedVersionError or SignatureError."""
    manifest, signature = resolution.get("manifest"), resolution.get("signature")
    where = f"{resolution.get('name')} version {resolution.get('version')}"
    if not manifest or not signature:
        raise UnsignedVersionError(
            f"{where} has no signature (published before its stage signed versions): it cannot be verified",
            code="UnsignedVersion",
        )
    if not _verifies(public_key_pem, str(manifest).encode(), str(signature)):
        raise SignatureError(f"the signature of {where} does not verify with the pinned key", code="BadSignature")
    fields: dict[str, Any] = json.loads(manifest)
    expected = {"name": resolution.get("name"), "sha256": resolution.get("sha256"), "size": resolution.get("size")}
    if isinstance(resolution.get("version"), int):
        expected["version"] = resolution["version"]
    if "parts_sha256" in fields:  # multipart content: its layout is signed too
        expected["part_size"] = resolution.get("part_size")
    differing = sorted(k for k, v in expected.items() if fields.get(k) != v)
    if differing:
        raise SignatureError(
            f"the signed manifest of {where} does not match what the registry answered ({', '.join(differing)})",
            code="ManifestMismatch",
        )
    return fields


def check_parts(resolution: Mapping[str, Any], part_size: int, parts: list[str]) -> None:
    """The part hashes a download checks its ranges against are the ones the signed manifest names (when it names
    them: multipart content published since manifests carry layouts). SignatureError otherwise. Meaningful once
    the manifest itself was verified (`check`)."""
    manifest = resolution.get("manifest")
    signed: dict[str, Any] = json.loads(manifest) if manifest else {}
    if "parts_sha256" not in signed:
        return
    digest = hashlib.sha256(b"".join(bytes.fromhex(p) for p in parts)).hexdigest()
    if (signed.get("part_size"), signed["parts_sha256"]) != (part_size, digest):
        where = f"{resolution.get('name')} version {resolution.get('version')}"
        raise SignatureError(
            f"the part hashes of {where} are not the ones its signed manifest names", code="ManifestMismatch"
        )


def _verifies(public_key_pem: str, message: bytes, signature: str) -> bool:
    # Imported here: only verification needs it, and it is the client's heaviest import.
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import load_pem_public_key

    key = load_pem_public_key(public_key_pem.encode())
    if not isinstance(key, ec.EllipticCurvePublicKey):
        raise VerificationError("the stage's signing key is not an elliptic-curve key", code="BadSigningKey")
    try:
        key.verify(base64.b64decode(signature, validate=True), message, ec.ECDSA(hashes.SHA256()))
    except (InvalidSignature, binascii.Error, ValueError):
        return False
    return True


def _save(pins: dict[str, str], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".signing-keys.", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(pins, out, indent=2, sort_keys=True)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
