"""What S3 refuses and moto stores anyway, on uploads: a body that does not match the SHA-256 checksum its
request names, and a presigned request that leaves out a header its URL signed.

S3 answers such a PutObject or UploadPart with 400 BadDigest (or 403 SignatureDoesNotMatch) and stores
nothing; moto stores the bytes. Local mode and the tests would then accept an upload that AWS refuses, and a
version could serve other bytes than its sha256. `install()` puts the checks in front of moto's S3 handlers
for PutObject and UploadPart, in this process: it covers moto's server (local mode) and the in-process
`mock_aws` of the tests alike, since both dispatch to the same handler class. moto itself already refuses a
PutObject or CompleteMultipartUpload with `If-None-Match: *` on an existing key (412 PreconditionFailed), as
S3 does.

Checked: the `x-amz-checksum-sha256` request header (what Arca's presigned URLs sign), and that every header
named in a presigned URL's X-Amz-SignedHeaders is sent. Not checked: the signature itself (its values and
expiry), other checksum algorithms, and checksums sent in an aws-chunked trailer.
"""

from __future__ import annotations

import base64
import hashlib
import threading
from collections.abc import Callable
from typing import Any

CHECKSUM_HEADER = "x-amz-checksum-sha256"
BAD_DIGEST = "The SHA256 you specified did not match the calculated checksum."
_lock = threading.Lock()
_installed = False


def sha256_b64(body: bytes) -> str:
    return base64.b64encode(hashlib.sha256(body).digest()).decode()


def _checked(handler: Callable[[Any], Any]) -> Callable[[Any], Any]:
    from moto.s3.exceptions import S3ClientError, S3SignatureDoesNotMatchError

    def check_then_handle(response: Any) -> Any:
        signed = (response.querystring.get("X-Amz-SignedHeaders") or [""])[0]
        if any(header not in response.headers for header in signed.split(";") if header):
            raise S3SignatureDoesNotMatchError()
        claimed = response.headers.get(CHECKSUM_HEADER)
        if claimed is not None:
            body = response.body or b""
            if sha256_b64(body if isinstance(body, bytes) else body.encode()) != claimed:
                raise S3ClientError("BadDigest", BAD_DIGEST)
        return handler(response)

    check_then_handle.__wrapped__ = handler  # type: ignore[attr-defined]
    return check_then_handle


def install() -> None:
    """Refuse, in this process's moto, a PutObject or UploadPart whose body does not match its SHA-256 header.
    Idempotent."""
    global _installed
    from moto.s3.responses import S3Response

    with _lock:
        if _installed:
            return
        for name in ("put_object", "upload_part"):
            setattr(S3Response, name, _checked(getattr(S3Response, name)))
        _installed = True
