"""The S3 adapter: presigned upload/download URLs, blob checks, and prefix deletion.

AWS errors from S3 are translated here and only here: a missing object is `None`, throttling
(SlowDown) is a ThrottledError, anything else is re-raised.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from arca.adapters.faults import THROTTLING, aws_code, reraise
from arca.domain.downloads import content_disposition
from arca.domain.errors import ConflictError, ThrottledError, ValidationError

if TYPE_CHECKING:  # the answer of a write: the resolve function's cold start imports no model
    from arca.domain.entities import UploadTarget

UPLOAD_CONTENT_TYPE = "application/octet-stream"
# Signed into every presigned PUT and removed when the blob is published: the bucket's lifecycle expires
# objects that still carry it after UPLOAD_EXPIRY_DAYS, so uploads nobody published do not stay billed forever.
UPLOAD_TAG_KEY = "arca:state"
UPLOAD_TAG = f"{UPLOAD_TAG_KEY}=uploaded"
UPLOAD_EXPIRY_DAYS = 7
# Publishing removes the tag only from an upload younger than this: one that was never old enough for the
# lifecycle rule while tagged (a day of margin for clocks). An older upload is rewritten instead, and one past
# its expiry is never published (S3 may already have queued it for removal).
_UNTAG_BEFORE = timedelta(days=UPLOAD_EXPIRY_DAYS - 1)
_EXPIRES_AFTER = timedelta(days=UPLOAD_EXPIRY_DAYS)
# Signed into every presigned PUT: S3 refuses (412) a PUT to a key that holds an object, so no URL ever
# replaces stored bytes, published or not.
CREATE_ONLY = "*"
# Download answers: served as stored (never decoded by the client), and never kept by a shared cache, since
# the URL that fetched them is a bearer token.
DOWNLOAD_CACHE_CONTROL = "private, no-store"
DOWNLOAD_CONTENT_ENCODING = "identity"
# What S3 would serve with an object beside its bytes, none of it covered by the upload's signature: an
# uploader could make another team's published blob decode (Content-Encoding), cache or redirect otherwise.
_UNSIGNED_ATTRIBUTES = {
    "ContentEncoding": "Content-Encoding",
    "CacheControl": "Cache-Control",
    "ContentDisposition": "Content-Disposition",
    "ContentLanguage": "Content-Language",
    "ExpiresString": "Expires",
    "WebsiteRedirectLocation": "x-amz-website-redirect-location",
}
_MISSING = frozenset({"404", "NoSuchKey", "NotFound"})
NOT_UPLOADED = "no blob with this sha256 was uploaded for this artifact; POST …/uploads first"
OTHER_BYTES = (
    "the object stored under this sha256 holds other bytes; uploads never replace a stored object, so it must be "
    "removed from the bucket by an operator"
)
_CHANGED = frozenset({"412", "PreconditionFailed"})
_CHUNK = 1024 * 1024
# The version id S3 gives the objects of a bucket that was never versioned; DeleteObjects takes 1,000 keys a call.
NULL_VERSION = "null"
_DELETE_PAGE = 1000


def hex_to_b64(sha256_hex: str) -> str:
    return base64.b64encode(bytes.fromhex(sha256_hex)).decode()


@dataclass(frozen=True)
class BlobStat:
    size: int
    sha256_b64: str | None  # None where S3 kept no SHA-256 checksum (moto; objects put without one)
    unsigned: tuple[str, ...] = ()  # headers set on the object that Arca's signature did not cover
    etag: str = ""
    modified: datetime | None = None


class Blobs:
    """Content-addressed blobs in one bucket through an injected S3 client (SigV4 for presigning)."""

    def __init__(
        self,
        client: Any,
        bucket: str,
        *,
        clock: Callable[[], datetime],
        upload_ttl: int = 900,
        download_ttl: int = 900,
    ) -> None:
        self.client = client
        self.bucket = bucket
        self.clock = clock
        self.upload_ttl = upload_ttl
        self.download_ttl = download_ttl

    def presign_upload(self, key: str, sha256_hex: str) -> UploadTarget:
        """A PUT URL whose signature covers the checksum: S3 refuses a body that does not match it.

        The Content-Type is signed too, and must be sent: some S3 implementations drop the body of a PUT
        sent as form-urlencoded (curl's default). So is the upload tag (UPLOAD_TAG), which publishing clears,
        and `If-None-Match: *`: the URL can only create the object, never replace one already stored.
        """
        checksum = hex_to_b64(sha256_hex)
        url = self.client.generate_presigned_url(
            "put_object",
            Params={
                "Bucket": self.bucket,
                "Key": key,
                "ChecksumSHA256": checksum,
                "ContentType": UPLOAD_CONTENT_TYPE,
                "Tagging": UPLOAD_TAG,
                "IfNoneMatch": CREATE_ONLY,
            },
            ExpiresIn=self.upload_ttl,
        )
        from arca.domain.entities import UploadTarget

        return UploadTarget(
            url=url,
            method="PUT",
            headers={
                "Content-Type": UPLOAD_CONTENT_TYPE,
                "x-amz-checksum-sha256": checksum,
                "x-amz-tagging": UPLOAD_TAG,
                "If-None-Match": CREATE_ONLY,
            },
            expires_at=_iso(self.clock() + timedelta(seconds=self.upload_ttl)),
        )

    def presign_download(self, key: str, *, content_type: str, filename: str) -> tuple[str, str]:
        """A GET URL serving the blob with its content type and a download filename; (url, expires_at).

        Every response header a client acts on is pinned by the signed URL, whatever is stored with the object.
        """
        url = self.client.generate_presigned_url(
            "get_object",
            Params={
                "Bucket": self.bucket,
                "Key": key,
                "ResponseContentType": content_type,
                "ResponseContentDisposition": content_disposition(filename),
                "ResponseContentEncoding": DOWNLOAD_CONTENT_ENCODING,
                "ResponseCacheControl": DOWNLOAD_CACHE_CONTROL,
            },
            ExpiresIn=self.download_ttl,
        )
        return url, _iso(self.clock() + timedelta(seconds=self.download_ttl))

    def stat(self, key: str) -> BlobStat | None:
        try:
            head = self.client.head_object(Bucket=self.bucket, Key=key, ChecksumMode="ENABLED")
        except ClientError as error:
            if aws_code(error) in _MISSING:
                return None
            reraise(error, "S3")
        unsigned = tuple(header for field, header in _UNSIGNED_ATTRIBUTES.items() if head.get(field))
        unsigned += tuple(f"x-amz-meta-{key}" for key in head.get("Metadata") or {})
        return BlobStat(
            size=int(head["ContentLength"]),
            sha256_b64=head.get("ChecksumSHA256"),
            unsigned=unsigned,
            etag=str(head.get("ETag", "")),
            modified=head.get("LastModified"),
        )

    def verify(self, key: str, sha256_hex: str, size: int, *, stat: BlobStat | None = None) -> BlobStat:
        """Check that the blob is stored with this size and these bytes; never changes the object.

        On AWS, S3 stored the signed SHA-256 checksum and HeadObject returns it: one call (none when its `stat` was
        read already). Where no checksum was kept (moto, or an object put by other means) the bytes are streamed
        and hashed. Raises ConflictError when nothing is stored; ValidationError(size|sha256) on a mismatch.
        """
        stat = stat or self.stat(key)
        if stat is None:
            raise ConflictError(NOT_UPLOADED, field="sha256")
        if stat.size != size:
            raise ValidationError(f"size is {size} but the uploaded blob has {stat.size} bytes", field="size")
        if not self._same_bytes(key, stat, sha256_hex):
            raise ValidationError("sha256 does not match the bytes of the uploaded blob", field="sha256")
        return stat

    def stored(self, key: str, sha256_hex: str, size: int) -> bool:
        """Whether these bytes are stored at `key`, so that the upload is skipped (published or not: publishing
        keeps them). Unsigned headers do not matter: publishing rewrites the object without them.

        Raises ConflictError when the object holds other bytes (no upload URL could replace it), or when it is
        an upload past its expiry, which S3 may remove at any moment; ValidationError(size) when the declared
        size is not the stored blob's.
        """
        stat = self.stat(key)
        if stat is None:
            return False
        if not self._same_bytes(key, stat, sha256_hex):
            raise ConflictError(OTHER_BYTES, field="sha256")
        if stat.size != size:
            raise ValidationError(f"size is {size} but the blob with this sha256 has {stat.size} bytes", field="size")
        self._untaggable(key, stat)
        return True

    def keep(self, key: str, stat: BlobStat, *, in_parts: bool = False) -> None:
        """Make the verified blob `stat` permanent: no upload tag (the lifecycle rule never expires it), no
        unsigned header. Never deletes.

        A young upload loses its tag (one DeleteObjectTagging, idempotent). An object with unsigned headers,
        or an upload old enough to be near its expiry, is rewritten in place (a server-side copy of the same
        bytes, conditioned on its ETag, with a fresh date and neither tag nor headers). Multipart content
        (`in_parts`) is never copied: a copy would replace S3's composite checksum of its parts, the layout's
        identity (and CopyObject stops at 5 GB), so it loses its tag in place whatever its age under 7 days
        (Arca creates its upload, so it carries no unsigned header). Called before the write that references
        the blob: a crash in between leaves a kept blob nothing references, never a referenced blob that
        expires. Raises ConflictError when the object is gone, changed since `stat`, or an upload past its
        expiry.
        """
        tagged = self._untaggable(key, stat)
        if not in_parts and (stat.unsigned or tagged):
            self._rewrite(key, stat)
        elif tagged is None or tagged:
            # S3 expires an object no sooner than 7 days after its creation (it rounds up to the next midnight
            # UTC), and `_untaggable` refused one that old: the tag goes before the rule can apply to it.
            self._call(self.client.delete_object_tagging, Bucket=self.bucket, Key=key)

    def _untaggable(self, key: str, stat: BlobStat) -> bool | None:
        """None when the object is young enough to have its upload tag removed; else whether it carries the
        tag. ConflictError when it is an upload past its expiry."""
        if stat.modified is None or self.clock() - stat.modified < _UNTAG_BEFORE:
            return None
        tags = self._call(self.client.get_object_tagging, Bucket=self.bucket, Key=key)["TagSet"]
        tagged = {"Key": UPLOAD_TAG_KEY, "Value": UPLOAD_TAG.split("=", 1)[1]} in tags
        if tagged and self.clock() - stat.modified >= _EXPIRES_AFTER:
            raise ConflictError(
                f"this content was uploaded on {_iso(stat.modified)} and never published; the upload has expired "
                "and S3 removes it shortly: POST …/uploads again later",
                field="sha256",
            )
        return tagged

    def _rewrite(self, key: str, stat: BlobStat) -> None:
        """Copy the object onto itself: the same bytes (only if still the ETag verified), no tag, no header
        nobody signed, a SHA-256 checksum kept by S3, and a new modification date."""
        self.copy(key, stat, key, content_type=UPLOAD_CONTENT_TYPE)

    def put(self, key: str, body: bytes, *, content_type: str) -> None:
        """Store bytes the service itself holds (an inline attestation), with their SHA-256 checksum."""
        try:
            self.client.put_object(
                Bucket=self.bucket,
                Key=key,
                Body=body,
                ContentType=content_type,
                ChecksumSHA256=hex_to_b64(hashlib.sha256(body).hexdigest()),
            )
        except ClientError as error:
            reraise(error, "S3")

    def put_upload(self, key: str, body: bytes) -> None:
        """Store uploaded bytes as an upload would (an OCI client's blob, a session's staging object): with their
        SHA-256 checksum (S3 verifies it) and the upload tag, so the lifecycle rule removes them unless a publish
        keeps them."""
        try:
            self.client.put_object(
                Bucket=self.bucket,
                Key=key,
                Body=body,
                ContentType=UPLOAD_CONTENT_TYPE,
                ChecksumSHA256=hex_to_b64(hashlib.sha256(body).hexdigest()),
                Tagging=UPLOAD_TAG,
            )
        except ClientError as error:
            reraise(error, "S3")

    def copy(self, source: str, stat: BlobStat, key: str, *, content_type: str) -> None:
        """A server-side copy of the verified blob `stat` (only if still that ETag) to `key`, without the upload
        tag (the copy never expires as an upload) and with its own content type. ConflictError(sha256) when the
        source is gone or changed since it was verified."""
        self._call(
            self.client.copy_object,
            Bucket=self.bucket,
            Key=key,
            CopySource={"Bucket": self.bucket, "Key": source},
            CopySourceIfMatch=stat.etag,
            MetadataDirective="REPLACE",
            ContentType=content_type,
            TaggingDirective="REPLACE",
            Tagging="",
            ChecksumAlgorithm="SHA256",
        )

    def _call(self, operation: Callable[..., Any], **params: Any) -> Any:
        """One S3 call on an object: gone (or changed) since it was verified is ConflictError(sha256)."""
        try:
            return operation(**params)
        except ClientError as error:
            code = aws_code(error)
            if code in _MISSING or code in _CHANGED:  # deleted or replaced since it was verified
                raise ConflictError(NOT_UPLOADED, field="sha256") from None
            reraise(error, "S3")

    def _same_bytes(self, key: str, stat: BlobStat, sha256_hex: str) -> bool:
        if stat.sha256_b64 is not None:
            return stat.sha256_b64 == hex_to_b64(sha256_hex)
        return self._hash(key) == sha256_hex

    def read(self, key: str) -> bytes:
        """The whole object (small content the service reads itself: a tree manifest). ConflictError(sha256) when
        it is gone."""
        body = self._call(self.client.get_object, Bucket=self.bucket, Key=key)["Body"]
        return bytes(body.read())

    def _hash(self, key: str) -> str:
        digest = hashlib.sha256()
        # Gone since its HeadObject (retention collected it meanwhile): ConflictError, as if never uploaded.
        body = self._call(self.client.get_object, Bucket=self.bucket, Key=key)["Body"]
        for chunk in iter(lambda: body.read(_CHUNK), b""):
            digest.update(chunk)
        return digest.hexdigest()

    def delete(self, key: str) -> None:
        """Delete one object; deleting a missing one succeeds (safe to repeat)."""
        try:
            self.client.delete_object(Bucket=self.bucket, Key=key)
        except ClientError as error:
            reraise(error, "S3")

    def current_versions(self, prefix: str) -> list[tuple[str, str]]:
        """(key, version id) of every current object under `prefix` (ListObjectVersions; an unversioned bucket's
        objects have the version id `null`)."""
        found: list[tuple[str, str]] = []
        try:
            for page in self.client.get_paginator("list_object_versions").paginate(Bucket=self.bucket, Prefix=prefix):
                found += [
                    (str(v["Key"]), str(v.get("VersionId") or NULL_VERSION))
                    for v in page.get("Versions", [])
                    if v.get("IsLatest")
                ]
        except ClientError as error:
            reraise(error, "S3")
        return found

    def delete_versions(self, objects: list[tuple[str, str]]) -> None:
        """Delete exactly these object versions (key, version id), 1,000 a call; safe to repeat. On a versioned
        bucket a version written since (a new upload of the same key) is left alone; an unversioned bucket's
        objects (`null`) are deleted by key."""
        for start in range(0, len(objects), _DELETE_PAGE):
            listed = [
                {"Key": key} if version == NULL_VERSION else {"Key": key, "VersionId": version}
                for key, version in objects[start : start + _DELETE_PAGE]
            ]
            try:
                answer = self.client.delete_objects(Bucket=self.bucket, Delete={"Objects": listed, "Quiet": True})
            except ClientError as error:
                reraise(error, "S3")
            _refuse_errors([e for e in answer.get("Errors") or [] if str(e.get("Code")) != "NoSuchVersion"])

    def delete_prefix(self, prefix: str, *, spend: Callable[[], bool] = lambda: True) -> bool:
        """Delete every object under `prefix`, 1,000 per DeleteObjects call; safe to repeat.

        `spend` is asked before each page; False stops early and this returns False (call again).
        """
        paginator = self.client.get_paginator("list_objects_v2")
        try:
            for page in paginator.paginate(Bucket=self.bucket, Prefix=prefix):
                objects = [{"Key": o["Key"]} for o in page.get("Contents", [])]
                if objects:
                    if not spend():
                        return False
                    answer = self.client.delete_objects(Bucket=self.bucket, Delete={"Objects": objects, "Quiet": True})
                    _refuse_errors(answer.get("Errors") or [])
        except ClientError as error:
            reraise(error, "S3")
        return True


def _refuse_errors(errors: list[dict[str, Any]]) -> None:
    """DeleteObjects answers 200 even when some keys were not deleted: each one is an entry of `Errors`.
    Throttled keys are a ThrottledError (retry); any other failure is raised as the ClientError it is."""
    if not errors:
        return
    codes = sorted({str(e.get("Code", "")) for e in errors})
    failed = ClientError(
        {"Error": {"Code": codes[0], "Message": f"{len(errors)} objects not deleted ({', '.join(codes)})"}},
        "DeleteObjects",
    )
    if all(code in THROTTLING["S3"] or code == "InternalError" for code in codes):
        raise ThrottledError(
            f"S3 did not delete {len(errors)} objects; retry later", details={"aws_code": codes[0]}
        ) from failed
    raise failed


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")
