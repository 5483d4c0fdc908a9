"""Signed versions: publishing signs each version's manifest with the stage's KMS key, before its transaction."""

from __future__ import annotations

import base64
import json
from types import SimpleNamespace
from typing import Any

import pytest
from botocore.stub import Stubber
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import load_pem_public_key

from arca import wiring
from tests.helpers import HandlerApi, sha256
from tests.integration.conftest import snapshot


def verifies(pem: str, manifest: str, signature: str) -> bool:
    key = load_pem_public_key(pem.encode())
    assert isinstance(key, ec.EllipticCurvePublicKey)
    try:
        key.verify(base64.b64decode(signature), manifest.encode(), ec.ECDSA(hashes.SHA256()))
    except Exception:
        return False
    return True


def signing_key(api: HandlerApi) -> str:
    reply = api.call("GET", "/signing-key")
    assert reply.status == 200, reply.body
    assert reply.body["algorithm"] == "ECDSA_SHA_256"
    return str(reply.body["public_key_pem"])


def test_publish_signs_the_canonical_manifest_of_the_version(api: HandlerApi) -> None:
    # Given
    data = b"signed bytes"
    # When
    published = api.publish("team/app", data)
    # Then
    assert published.status == 201, published.body
    body = published.body
    manifest = body["manifest"]
    expected = {"name": "team/app", "version": 1, "sha256": sha256(data), "size": len(data)}
    assert json.loads(manifest) == {**expected, "created_at": body["created_at"]}
    assert manifest == json.dumps(json.loads(manifest), sort_keys=True, separators=(",", ":"))
    assert verifies(signing_key(api), manifest, body["signature"])
    assert not verifies(signing_key(api), manifest.replace('"size":12', '"size":13'), body["signature"])


def test_every_version_and_resolve_answer_carries_the_signature(api: HandlerApi) -> None:
    # Given
    published = api.publish("app", b"one").body
    assert api.call("PUT", "/artifacts/app/aliases/prod", {"version": 1}).status in (200, 201)
    signed = {"manifest": published["manifest"], "signature": published["signature"]}
    # When
    answers = [
        api.call("GET", "/artifacts/app/versions/1").body,
        api.call("GET", "/artifacts/app/versions").body["versions"][0],
        api.call("GET", "/artifacts/app/resolve/1").body,
        api.call("GET", "/artifacts/app/resolve/prod").body,
        api.call("GET", "/artifacts/app/resolve/LATEST").body,
        api.call("GET", f"/artifacts/app/resolve/sha256:{published['sha256']}").body,
    ]
    # Then
    for answer in answers:
        assert {k: answer.get(k) for k in signed} == signed, answer


def test_latest_with_other_bytes_resolves_unsigned(api: HandlerApi) -> None:
    # Given: LATEST moved to bytes no version holds
    api.publish("app", b"one")
    api.set_latest("app", b"two")
    # When
    resolved = api.call("GET", "/artifacts/app/resolve/LATEST")
    # Then
    assert resolved.status == 200
    assert resolved.body["manifest"] is None and resolved.body["signature"] is None
    # and publishing it signs it again
    again = api.publish("app")
    assert again.status == 201
    assert api.call("GET", "/artifacts/app/resolve/LATEST").body["signature"] == again.body["signature"]


def test_a_kms_refusal_publishes_nothing(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given
    api.upload("app", b"bytes")
    before = snapshot(aws)
    signer: Any = wiring.signer()
    kms = signer._kms()
    # When: KMS throttles the signature
    with Stubber(kms) as stub:
        stub.add_client_error("sign", service_error_code="ThrottlingException", http_status_code=400)
        reply = api.call("POST", "/artifacts/app/versions", {"sha256": sha256(b"bytes"), "size": 5})
    # Then
    assert reply.status == 503, reply.body
    assert reply.body["error"]["code"] == "ThrottledError"
    assert snapshot(aws)["items"] == before["items"]


def test_publish_without_a_signing_key_refuses(api: HandlerApi, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given: a function with no key configured
    monkeypatch.delenv("ARCA_SIGNING_KEY_ARN")
    wiring.reset()
    # When
    reply = api.publish("app", b"bytes")
    # Then: never an unsigned version
    assert reply.status == 500
    assert api.call("GET", "/artifacts/app/versions/1").status == 404
    assert api.call("GET", "/signing-key").status == 404


def test_only_publish_can_sign(aws: SimpleNamespace) -> None:
    # Given
    from local import iam

    signer: Any = wiring.signer()
    # When / Then: resolve reads the public key but cannot sign; the alias function can do neither
    with iam.acting_as("resolve"):
        assert signer.public_key_pem().startswith("-----BEGIN PUBLIC KEY-----")
        with pytest.raises(Exception, match="AccessDenied"):
            signer.sign(b"x")
    signer._pem = None
    with iam.acting_as("alias"), pytest.raises(Exception, match="AccessDenied"):
        signer.public_key_pem()
