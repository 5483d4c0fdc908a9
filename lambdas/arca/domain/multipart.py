"""Multipart content: S3's part rules, and what identifies a layout of parts. Pure: no boto3.

A layout is a content's cut into parts: every part `part_size` bytes but the last, each with its SHA-256. S3
checks each part against its signed checksum, so equal part hashes (and sizes, which follow from them) mean
equal bytes. A layout is named by `parts_sha256`, the SHA-256 of its part digests concatenated: the digest S3
itself reports as the object's composite checksum (base64, with a `-<part count>` suffix).
"""

from __future__ import annotations

import base64
import hashlib

from arca.domain.errors import PayloadTooLargeError, ValidationError

MIB = 1024**2
# S3's limits: parts of 5 MiB to 5 GiB (the last may be smaller), at most 10,000 parts, objects up to 5 TiB.
MIN_PART_SIZE = 5 * MIB
MAX_PART_SIZE = 5 * 1024**3
MAX_PARTS = 10_000
MAX_MULTIPART_SIZE = 5 * 1024**4


def part_count(size: int, part_size: int) -> int:
    return -(-size // part_size)


def part_length(size: int, part_size: int, number: int) -> int:
    """The byte length of part `number` (1-based)."""
    return min(part_size, size - (number - 1) * part_size)


def check_layout(size: int, part_size: int, parts: list[str]) -> None:
    """Refuse a layout S3 would refuse, naming the field: PayloadTooLargeError(size) over 5 TiB,
    ValidationError(part_size|parts) otherwise. The part hashes' form is the request model's."""
    if size > MAX_MULTIPART_SIZE:
        raise PayloadTooLargeError(f"size {size} is over the {MAX_MULTIPART_SIZE}-byte limit of S3", field="size")
    if size < 1:
        raise ValidationError("size: multipart content has at least one byte", field="size")
    if part_size > MAX_PART_SIZE:
        raise ValidationError(f"part_size: at most {MAX_PART_SIZE} bytes (5 GiB)", field="part_size")
    expected = part_count(size, part_size)
    if expected > 1 and part_size < MIN_PART_SIZE:
        raise ValidationError(
            f"part_size: at least {MIN_PART_SIZE} bytes (5 MiB) when there is more than one part", field="part_size"
        )
    if expected > MAX_PARTS:
        raise ValidationError(
            f"parts: {expected} parts of {part_size} bytes; at most {MAX_PARTS}: choose a larger part_size",
            field="parts",
        )
    if len(parts) != expected:
        raise ValidationError(
            f"parts: {len(parts)} hashes given, but {size} bytes in parts of {part_size} make {expected}",
            field="parts",
        )


def parts_sha256(parts: list[str]) -> str:
    """The layout's name: the SHA-256 (hex) of its part digests, concatenated in order."""
    return hashlib.sha256(b"".join(bytes.fromhex(p) for p in parts)).hexdigest()


def composite_b64(parts_digest: str) -> str:
    """S3's composite checksum of a layout, without its `-<count>` suffix."""
    return base64.b64encode(bytes.fromhex(parts_digest)).decode()


def pack(parts: list[str]) -> bytes:
    """Part hashes as stored: 32 bytes each (10,000 of them fit in a DynamoDB item; hex would not)."""
    return b"".join(bytes.fromhex(p) for p in parts)


def unpack(packed: bytes) -> list[str]:
    return [packed[i : i + 32].hex() for i in range(0, len(packed), 32)]
