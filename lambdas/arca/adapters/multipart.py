"""S3 multipart uploads of content-addressed blobs: part URLs that sign each part's checksum, the parts S3 has,
assembly and abort. Errors are translated as in arca.adapters.s3 (and only there and here)."""

from __future__ import annotations

from dataclasses import dataclass

from botocore.exceptions import ClientError

from arca.adapters.faults import aws_code, reraise
from arca.adapters.s3 import (
    UPLOAD_CONTENT_TYPE,
    UPLOAD_TAG,
    Blobs,
    BlobStat,
    hex_to_b64,
)
from arca.domain import multipart
from arca.domain.entities import PartTarget
from arca.domain.errors import ConflictError, ValidationError

_NO_UPLOAD = frozenset({"NoSuchUpload", "404"})
_EXISTS = frozenset({"412", "PreconditionFailed"})
# ListParts answers at most 1,000 parts a call.
_LIST_PAGE = 1000


@dataclass(frozen=True)
class StoredPart:
    number: int
    size: int
    etag: str
    sha256_b64: str | None  # None where S3 does not list part checksums (moto)


class Multipart:
    """Multipart uploads in the bucket of `blobs`, through its client (SigV4: the checksum header is signed)."""

    def __init__(self, blobs: Blobs) -> None:
        self.blobs = blobs
        self.client = blobs.client
        self.bucket = blobs.bucket

    def start(self, key: str) -> str:
        """A new multipart upload of `key` (SHA-256 part checksums, composite); its UploadId. The object is
        tagged as an upload until published, as a single PUT is (arca.adapters.s3.UPLOAD_TAG)."""
        try:
            answer = self.client.create_multipart_upload(
                Bucket=self.bucket,
                Key=key,
                ChecksumAlgorithm="SHA256",
                ContentType=UPLOAD_CONTENT_TYPE,
                Tagging=UPLOAD_TAG,
            )
        except ClientError as error:
            reraise(error, "S3")
        return str(answer["UploadId"])

    def presign_part(self, key: str, upload: str, number: int, sha256_hex: str) -> PartTarget:
        """A PUT URL for part `number` whose signature covers the part's SHA-256: S3 refuses other bytes."""
        checksum = hex_to_b64(sha256_hex)
        url = self.client.generate_presigned_url(
            "upload_part",
            Params={
                "Bucket": self.bucket,
                "Key": key,
                "UploadId": upload,
                "PartNumber": number,
                "ChecksumSHA256": checksum,
            },
            ExpiresIn=self.blobs.upload_ttl,
        )
        # Content-Type is not signed, but sent: some S3 implementations drop a body sent as form-urlencoded.
        headers = {"Content-Type": UPLOAD_CONTENT_TYPE, "x-amz-checksum-sha256": checksum}
        return PartTarget(number=number, url=url, method="PUT", headers=headers)

    def parts(self, key: str, upload: str) -> dict[int, StoredPart] | None:
        """The parts S3 holds for `upload` by number (ListParts, 1,000 a call); None when S3 has no such upload
        (completed, aborted, or expired by the lifecycle rule)."""
        found: dict[int, StoredPart] = {}
        marker = 0
        while True:
            try:
                page = self.client.list_parts(
                    Bucket=self.bucket, Key=key, UploadId=upload, MaxParts=_LIST_PAGE, PartNumberMarker=marker
                )
            except ClientError as error:
                if aws_code(error) in _NO_UPLOAD:
                    return None
                reraise(error, "S3")
            for part in page.get("Parts", []):
                number = int(part["PartNumber"])
                found[number] = StoredPart(number, int(part["Size"]), str(part["ETag"]), part.get("ChecksumSHA256"))
            if not page.get("IsTruncated"):
                return found
            marker = int(page["NextPartNumberMarker"])

    def complete(self, key: str, upload: str, parts: list[tuple[StoredPart, str]]) -> bool:
        """Assemble `upload` from `parts` (each with its declared SHA-256, hex), create-only. S3 checks every
        part's checksum against the one it stored. False when S3 has no such upload (already completed or
        aborted) or the key already holds an object: the caller then looks at the object."""
        listed = [{"PartNumber": p.number, "ETag": p.etag, "ChecksumSHA256": hex_to_b64(h)} for p, h in parts]
        try:
            self.client.complete_multipart_upload(
                Bucket=self.bucket, Key=key, UploadId=upload, IfNoneMatch="*", MultipartUpload={"Parts": listed}
            )
        except ClientError as error:
            code = aws_code(error)
            if code in _NO_UPLOAD or code in _EXISTS:
                return False
            if code in ("InvalidPart", "InvalidPartOrder", "EntityTooSmall", "BadDigest"):
                raise ValidationError(f"S3 refused the parts: {code}", field="parts") from error
            reraise(error, "S3")
        return True

    def read(self, key: str, start: int, end: int) -> bytes:
        """Bytes `start` to `end` (exclusive) of the object at `key` (a ranged GetObject). ConflictError when the
        object is gone (collected, or expired as an unpublished upload)."""
        try:
            answer = self.client.get_object(Bucket=self.bucket, Key=key, Range=f"bytes={start}-{end - 1}")
        except ClientError as error:
            if aws_code(error) in ("NoSuchKey", "404"):
                raise ConflictError("the assembled object is gone; POST …/uploads again", field="sha256") from None
            reraise(error, "S3")
        data: bytes = answer["Body"].read()
        if len(data) != end - start:
            raise ConflictError(f"S3 answered {len(data)} bytes of a range of {end - start}", field="sha256")
        return data

    def abort(self, key: str, upload: str) -> None:
        """Abort `upload` and free its parts; an upload S3 no longer has is already gone."""
        try:
            self.client.abort_multipart_upload(Bucket=self.bucket, Key=key, UploadId=upload)
        except ClientError as error:
            if aws_code(error) not in _NO_UPLOAD:
                reraise(error, "S3")

    def verify(self, key: str, size: int, parts_sha256: str) -> BlobStat:
        """The assembled object is stored with this size and S3's composite checksum of these parts (S3 computed
        it from the bytes it checked part by part). ConflictError when nothing (or other bytes) is stored there,
        ValidationError(size) on another size."""
        stat = self.blobs.stat(key)
        if stat is None:
            raise ConflictError("this multipart upload is not completed; POST …/uploads/{id}/complete", field="sha256")
        if stat.size != size:
            raise ValidationError(f"size is {size} but the assembled content has {stat.size} bytes", field="size")
        # AWS answers `<base64>-<part count>`; moto leaves the suffix out.
        stored = (stat.sha256_b64 or "").split("-", 1)[0]
        if stored != multipart.composite_b64(parts_sha256):
            raise ConflictError("the assembled object does not hold these parts", field="sha256")
        return stat
