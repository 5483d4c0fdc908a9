"""SigV4 checked from the receiving side: a signature recomputed over a request as it arrived."""

from __future__ import annotations

import re
from typing import Any

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

CREDENTIALS = Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "session-token")
REGION = "eu-west-1"


def assert_signed_as_sent(request: dict[str, Any], origin: str) -> None:
    """`request` (method, path, headers, body as received at `origin`) carries a SigV4 signature for execute-api by
    CREDENTIALS: it matches only if the sender sent exactly what it signed."""
    authorization = request["headers"]["Authorization"]
    found = re.fullmatch(
        r"AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/(\d{8})/eu-west-1/execute-api/aws4_request, "
        r"SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})",
        authorization,
    )
    assert found, authorization
    signed = found.group(2).split(";")
    arrived = AWSRequest(
        method=request["method"],
        url=origin + request["path"],
        headers={name: request["headers"][name] for name in signed},
        data=request["body"],
    )
    arrived.context["timestamp"] = request["headers"]["X-Amz-Date"]
    auth = SigV4Auth(CREDENTIALS.get_frozen_credentials(), "execute-api", REGION)
    expected = auth.signature(auth.string_to_sign(arrived, auth.canonical_request(arrived)), arrived)
    assert found.group(3) == expected
    assert request["headers"]["X-Amz-Security-Token"] == "session-token"
