"""What S3 refuses and moto stores anyway, on uploads: a body that does not match the SHA-256 checksum its
request names, and a presigned request that leaves out a header its URL signed.

S3 answers such a PutObject or UploadPart with 400 BadDigest (or 403 SignatureDoesNotMatch) and stores
nothing; moto stores the bytes. Local mode and the tests would then accept an upload that AWS refuses, and a
version could serve other bytes than its sha256. `install()` puts the checks in front of moto's S3 handlers
for PutObject and UploadPart, in this process: it covers moto's server (local mode) and the in-process
`mock_aws` of the tests alike, since both dispatch to the same handler class. moto itself already refuses a
PutObject or CompleteMultipartUpload with `If-None-Match: *` on an existing key (412 PreconditionFailed), as
S3 does.

Checked: the `x-amz-checksum-sha256` request header (what Arca's presigned URLs sign), that every header
named in a presigned URL's X-Amz-SignedHeaders is sent, and that each is sent with the value the URL signed: the
SigV4 query signature is computed again from the request as received (method, path, query, the signed headers'
values) with botocore's signer and compared, as S3 does, so a PUT whose checksum header differs from the signed
one is refused even when its body matches the header sent. The signature is checked when the URL was signed with
this process's credentials (the handlers' own, which local mode and the tests set); a URL signed with other
credentials is only checked for its signed headers' presence. Not checked: a URL's expiry, signature version 2
URLs, other checksum algorithms, and checksums sent in an aws-chunked trailer.

Multipart uploads, where moto falls short of S3 too: moto's ListParts lists no part checksums, and its
CompleteMultipartUpload ignores the checksums the request lists. Here each part's SHA-256 (as its UploadPart
named it) is remembered, ListParts answers it as S3 does (`ChecksumSHA256` of each part), and a
CompleteMultipartUpload that lists another checksum for a part is refused with 400 InvalidPart, as S3 refuses it.

Tags of a missing object: moto's DeleteObjectTagging of a key that is not there fails with a 500 (an
AttributeError inside moto), where S3 answers 404 NoSuchKey; here it answers NoSuchKey, so a blob collected by
retention while a publish keeps it is the conflict it is on AWS.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote
from xml.dom import minidom

from local.patching import once

CHECKSUM_HEADER = "x-amz-checksum-sha256"
BAD_DIGEST = "The SHA256 you specified did not match the calculated checksum."
# (upload id, part number) -> the SHA-256 (base64) its accepted UploadPart named.
_part_checksums: dict[tuple[str, int], str] = {}


def sha256_b64(body: bytes) -> str:
    return base64.b64encode(hashlib.sha256(body).digest()).decode()


def _secret_key(access_key: str) -> str | None:
    """The secret key of `access_key` when it is this process's (what the handlers sign with), else None."""
    from local.services import FAKE_CREDENTIALS

    known = {
        FAKE_CREDENTIALS["AWS_ACCESS_KEY_ID"]: FAKE_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        os.environ.get("AWS_ACCESS_KEY_ID", ""): os.environ.get("AWS_SECRET_ACCESS_KEY"),
    }
    return known.get(access_key)


def signature_matches(method: str, url: str, headers: Any) -> bool | None:
    """Whether a SigV4 presigned request, as received (`url` with its query as sent, `headers`), carries the
    signature its URL does: the signed headers' values are part of what is signed. None when it cannot be told: not
    a SigV4 presigned URL, or one signed with credentials this process does not hold."""
    from botocore.auth import S3SigV4QueryAuth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    base, _, query = url.partition("?")
    pairs = [pair.partition("=") for pair in query.split("&") if pair]
    fields = {unquote(key): unquote(value) for key, _, value in pairs}
    signature = fields.get("X-Amz-Signature")
    scope = fields.get("X-Amz-Credential", "").split("/")
    if fields.get("X-Amz-Algorithm") != "AWS4-HMAC-SHA256" or signature is None or len(scope) != 5:
        return None
    secret = _secret_key(scope[0])
    if secret is None:
        return None
    names = [name for name in fields.get("X-Amz-SignedHeaders", "").split(";") if name]
    unsigned = "&".join(f"{key}={value}" for key, _, value in pairs if key != "X-Amz-Signature")
    request = AWSRequest(
        method=method,
        url=f"{base}?{unsigned}",
        headers={name: headers.get(name, "") for name in names},
    )
    request.context["timestamp"] = fields.get("X-Amz-Date", "")
    signer = S3SigV4QueryAuth(Credentials(scope[0], secret), scope[3], scope[2])
    canonical = signer.canonical_request(request)
    expected = signer.signature(signer.string_to_sign(request, canonical), request)
    return hmac.compare_digest(expected, signature)


def _checked(handler: Callable[[Any], Any]) -> Callable[[Any], Any]:
    from moto.s3.exceptions import S3ClientError, S3SignatureDoesNotMatchError

    def check_then_handle(response: Any) -> Any:
        signed = (response.querystring.get("X-Amz-SignedHeaders") or [""])[0]
        if any(header not in response.headers for header in signed.split(";") if header):
            raise S3SignatureDoesNotMatchError()
        if signature_matches(response.method, response.uri, response.headers) is False:
            raise S3SignatureDoesNotMatchError()
        claimed = response.headers.get(CHECKSUM_HEADER)
        if claimed is not None:
            body = response.body or b""
            if sha256_b64(body if isinstance(body, bytes) else body.encode()) != claimed:
                raise S3ClientError("BadDigest", BAD_DIGEST)
        answer = handler(response)
        upload = (response.querystring.get("uploadId") or [None])[0]
        number = (response.querystring.get("partNumber") or [None])[0]
        if upload and number and claimed is not None:
            _part_checksums[(upload, int(number))] = claimed
        return answer

    check_then_handle.__wrapped__ = handler  # type: ignore[attr-defined]
    return check_then_handle


def _listed_with_checksums(handler: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """ListParts with each part's `ChecksumSHA256`, as S3 answers for an upload made with SHA-256 checksums."""

    def list_parts(response: Any) -> Any:
        status, headers, body = handler(response)
        upload = response._get_param("uploadId")
        text = body.decode() if isinstance(body, bytes) else body

        def add(found: re.Match[str]) -> str:
            checksum = _part_checksums.get((upload, int(found.group(1))))
            return found.group(0) + (f"<ChecksumSHA256>{checksum}</ChecksumSHA256>" if checksum else "")

        return status, headers, re.sub(r"<PartNumber>(\d+)</PartNumber>", add, text)

    list_parts.__wrapped__ = handler  # type: ignore[attr-defined]
    return list_parts


def _completion_checked(parse: Callable[[Any, bytes], Any]) -> Callable[[Any, bytes], Any]:
    """CompleteMultipartUpload refuses a part listed with another checksum than its UploadPart's (InvalidPart)."""
    from moto.s3.exceptions import S3ClientError

    def parse_checked(response: Any, body: bytes) -> Any:
        upload = response._get_param("uploadId")
        for part in minidom.parseString(body).getElementsByTagName("Part"):
            number = int(part.getElementsByTagName("PartNumber")[0].firstChild.wholeText)
            listed = part.getElementsByTagName("ChecksumSHA256")
            stored = _part_checksums.get((upload, number))
            if listed and stored is not None and listed[0].firstChild.wholeText != stored:
                raise S3ClientError("InvalidPart", f"part {number} was uploaded with another checksum")
        return parse(response, body)

    parse_checked.__wrapped__ = parse  # type: ignore[attr-defined]
    return parse_checked


def _tags_of_missing_key(handler: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """DeleteObjectTagging of a missing key: S3's 404 NoSuchKey instead of moto's 500."""

    def delete_object_tagging(response: Any) -> Any:
        from moto.s3.exceptions import MissingKey

        key_name = response.parse_key_name()
        if response.backend.get_object(response.bucket_name, key_name) is None:
            raise MissingKey(key=key_name)
        return handler(response)

    delete_object_tagging.__wrapped__ = handler  # type: ignore[attr-defined]
    return delete_object_tagging


@once
def install() -> None:
    """Refuse, in this process's moto, a PutObject or UploadPart whose body does not match its SHA-256 header, and
    check multipart uploads as the module docstring says. Idempotent."""
    from moto.s3.responses import S3Response

    for name in ("put_object", "upload_part"):
        setattr(S3Response, name, _checked(getattr(S3Response, name)))
    S3Response.list_parts = _listed_with_checksums(S3Response.list_parts)  # type: ignore[method-assign]
    S3Response.delete_object_tagging = _tags_of_missing_key(  # type: ignore[method-assign]
        S3Response.delete_object_tagging
    )
    S3Response._complete_multipart_body = _completion_checked(  # type: ignore[method-assign]
        S3Response._complete_multipart_body
    )
