"""The version page's Signature and Attestations cards, in a real browser (WebCrypto verifies the signature)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import boto3
from playwright.sync_api import Page, expect

from arca.adapters import keys
from local.services import FAKE_AWS_ENV
from tests.console.conftest import open_console, publish
from tests.e2e.conftest import ArcaHttp

Screenshot = Callable[..., Path]


def test_version_page_verifies_the_signature_and_lists_attestations(
    page: Page, arca_url: str, arca: ArcaHttp, unique: str, screenshot: Screenshot
) -> None:
    # Given a version with two attestations
    name = f"{unique}/signed"
    publish(arca, name, b"signed build\n")
    for kind, content in (("slsa-provenance", {"builder": {"id": "ci"}}), ("test-report", {"passed": 12})):
        reply = arca.post(f"/artifacts/{name}/versions/1/attestations", json={"type": kind, "content": content})
        assert reply.status_code == 201, reply.text
    # When its page is opened
    open_console(page, arca_url, f"/a/{name}/versions/1")
    # Then the browser verified the signature, and the attestations are listed
    signature = page.get_by_role("region", name="Signature")
    expect(signature).to_contain_text("signature verified")
    attestations = page.get_by_role("region", name="Attestations")
    expect(attestations.get_by_role("row")).to_have_count(3)
    expect(attestations).to_contain_text("slsa-provenance")
    expect(attestations).to_contain_text("test-report")
    screenshot(page, "version-signature")


def test_version_page_says_when_a_signature_does_not_verify(
    page: Page, arca_url: str, arca: ArcaHttp, unique: str
) -> None:
    # Given a version whose size was changed in the table behind the API
    name = f"{unique}/tampered"
    publish(arca, name, b"real bytes\n")
    dynamodb = boto3.client(
        "dynamodb",
        endpoint_url=os.environ["AWS_ENDPOINT_URL_DYNAMODB"],
        region_name="us-east-1",
        aws_access_key_id=FAKE_AWS_ENV["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=FAKE_AWS_ENV["AWS_SECRET_ACCESS_KEY"],
    )
    dynamodb.update_item(
        TableName=os.environ["ARCA_TABLE_NAME"],
        Key={k: {"S": v} for k, v in keys.version_key(name, 1).items()},
        UpdateExpression="SET #size = :n",
        ExpressionAttributeNames={"#size": "size"},
        ExpressionAttributeValues={":n": {"N": "99"}},
    )
    # When its page is opened
    open_console(page, arca_url, f"/a/{name}/versions/1")
    # Then
    expect(page.get_by_role("region", name="Signature")).to_contain_text("signature does not verify")
    expect(page.get_by_role("region", name="Attestations")).to_contain_text("No attestations.")
