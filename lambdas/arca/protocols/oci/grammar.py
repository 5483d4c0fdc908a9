"""The grammar of OCI's path parts: repository names, tags, references and digests.

A repository is an artifact name, so a name must satisfy both OCI's grammar (the specification's `<name>`) and
Arca's (arca.domain.names: segment length, depth, reserved words). A tag is an alias: OCI's tag grammar, never all
digits (that is a version number) and never `LATEST`. Only sha256 digests are served: Arca stores content by its
SHA-256.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from enum import Enum

from arca.domain.errors import ValidationError
from arca.domain.names import parse_version, validate_name
from arca.domain.versions import LATEST
from arca.protocols.oci.errors import OciError

# The specification's `<name>`, one path component at a time.
_COMPONENT = re.compile(r"[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*")
TAG_PATTERN = r"[A-Za-z0-9_][A-Za-z0-9._-]{0,127}"
_TAG = re.compile(TAG_PATTERN)
_DIGITS = re.compile(r"[0-9]+")
# The image specification's digest grammar; of its algorithms only sha256 is served.
_DIGEST = re.compile(r"(?P<algorithm>[a-z0-9]+(?:[+._-][a-z0-9]+)*):(?P<encoded>[a-zA-Z0-9=_-]+)")
_SHA256_HEX = re.compile(r"[a-f0-9]{64}")


def parse_name(name: str) -> str:
    """`name` if it is a repository name both OCI and Arca accept; NAME_INVALID (400) saying why otherwise."""
    for component in name.split("/"):
        if not _COMPONENT.fullmatch(component):
            raise OciError.of(
                "NAME_INVALID",
                f"repository name component {component!r} must match [a-z0-9]+((.|_|__|-+)[a-z0-9]+)*",
                {"name": name},
            )
    try:
        return validate_name(name, "name")
    except ValidationError as error:
        raise OciError.of("NAME_INVALID", f"repository {error.message}", {"name": name}) from None


def is_tag(value: str) -> bool:
    """Whether `value` is a tag Arca keeps as an alias (OCI's grammar, not all digits, not LATEST)."""
    return bool(_TAG.fullmatch(value)) and not _DIGITS.fullmatch(value) and value != LATEST


def parse_tag(value: str, field: str = "tag") -> str:
    if not _TAG.fullmatch(value):
        raise OciError.of("TAG_INVALID", f"{field} {value!r} must match {TAG_PATTERN}", {field: value})
    if _DIGITS.fullmatch(value) or value == LATEST:
        raise OciError.of(
            "TAG_INVALID",
            f"{field} {value!r} is a version reference, not a tag: tags are never all digits nor LATEST",
            {field: value},
        )
    return value


@dataclass(frozen=True, order=True)
class Digest:
    """A sha256 content digest: `sha256:<64 lower-case hex>`."""

    hex: str

    def __str__(self) -> str:
        return f"sha256:{self.hex}"

    @classmethod
    def of(cls, content: bytes) -> Digest:
        return cls(hashlib.sha256(content).hexdigest())


def parse_digest(value: str, field: str = "digest") -> Digest:
    """A digest Arca can serve, or DIGEST_INVALID (400) naming `field`: malformed, or of another algorithm."""
    match = _DIGEST.fullmatch(value)
    if not match:
        raise OciError.of("DIGEST_INVALID", f"{field} {value!r} is not a digest (algorithm:hex)", {field: value})
    if match["algorithm"] != "sha256":
        raise OciError.of(
            "DIGEST_INVALID",
            f"{field}: digest algorithm {match['algorithm']!r} is unsupported (sha256 only)",
            {field: value},
        )
    if not _SHA256_HEX.fullmatch(match["encoded"]):
        raise OciError.of("DIGEST_INVALID", f"{field}: a sha256 digest is 64 lower-case hex digits", {field: value})
    return Digest(match["encoded"])


class RefKind(Enum):
    TAG = "tag"
    DIGEST = "digest"
    VERSION = "version"  # a version number: Arca's own reference
    LATEST = "latest"  # the artifact's LATEST


@dataclass(frozen=True)
class Reference:
    """What `/manifests/<reference>` names: a tag, a digest, a version number or LATEST."""

    kind: RefKind
    tag: str | None = None
    digest: Digest | None = None
    version: int | None = None

    def __str__(self) -> str:
        if self.kind is RefKind.DIGEST:
            return str(self.digest)
        if self.kind is RefKind.VERSION:
            return str(self.version)
        return self.tag if self.kind is RefKind.TAG and self.tag else LATEST

    @classmethod
    def of_tag(cls, tag: str) -> Reference:
        return cls(RefKind.TAG, tag=parse_tag(tag))

    @classmethod
    def of_digest(cls, digest: Digest) -> Reference:
        return cls(RefKind.DIGEST, digest=digest)


def parse_reference(value: str) -> Reference:
    """A manifest reference: a digest if it has a `:`, LATEST, a version number if all digits, else a tag."""
    if ":" in value:
        return Reference.of_digest(parse_digest(value, "reference"))
    if value == LATEST:
        return Reference(RefKind.LATEST)
    if _DIGITS.fullmatch(value):
        try:
            return Reference(RefKind.VERSION, version=parse_version(value, "reference"))
        except ValidationError as error:
            raise OciError.of("TAG_INVALID", error.message, {"reference": value}) from None
    return Reference.of_tag(value) if _TAG.fullmatch(value) else _bad_reference(value)


def _bad_reference(value: str) -> Reference:
    raise OciError.of(
        "TAG_INVALID", f"reference {value!r} is neither a digest nor a tag ({TAG_PATTERN})", {"reference": value}
    )
