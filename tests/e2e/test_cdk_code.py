"""`arca_client.cdk.ArcaLambdaCode`: a small CDK stack synthesized against the local server, its function's code the
content of the version an alias serves, and the function's lease on that version taken at synth."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_lambda
from aws_cdk.assertions import Template

from arca_client import Client
from arca_client.cdk import ArcaLambdaCode
from arca_client.errors import ConflictError

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]

CONSUMER = "lambda:eu-west-1:checkout"


def a_zip(text: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("index.py", f"def handler(event, context):\n    return {text!r}\n")
    return buffer.getvalue()


def synthesize(arca_url: str, name: str, outdir: Path, cache: Path) -> tuple[dict[str, Any], cdk.Stack]:
    app = cdk.App(outdir=str(outdir))
    stack = cdk.Stack(app, "Checkout", env=cdk.Environment(account="111111111111", region="eu-west-1"))
    # The five lines a platform engineer copies (README.md):
    aws_lambda.Function(
        stack,
        "Checkout",
        runtime=aws_lambda.Runtime.PYTHON_3_12,
        handler="index.handler",
        code=ArcaLambdaCode.from_alias(stack, arca_url, name, "prod", consumer=CONSUMER, cache_dir=cache),
    )
    template = Template.from_stack(stack).to_json()
    return template, stack


def function_code(template: dict[str, Any]) -> dict[str, Any]:
    (function,) = [r for r in template["Resources"].values() if r["Type"] == "AWS::Lambda::Function"]
    return function["Properties"]["Code"]  # type: ignore[no-any-return]


def deployed_sha256(template: dict[str, Any], outdir: Path) -> str:
    """The sha256 of the bytes the function's Code points at: the file asset uploaded to its S3Key."""
    key = function_code(template)["S3Key"]
    manifest = json.loads((outdir / "Checkout.assets.json").read_text())
    (source,) = [
        entry["source"]
        for entry in manifest["files"].values()
        if any(d["objectKey"] == key for d in entry["destinations"].values())
    ]
    assert source["packaging"] == "file"  # the zip as it is, not a folder zipped again
    return hashlib.sha256((outdir / source["path"]).read_bytes()).hexdigest()


def test_a_function_built_from_an_alias_runs_its_version_and_leases_it(
    arca_url: str, unique: str, tmp_path: Path
) -> None:
    # Given an artifact of two zips, prod on the first
    client = Client(arca_url, sign=False)
    name = f"{unique}/checkout-fn"
    one, two = a_zip("one"), a_zip("two")
    first = client.publish(name, io.BytesIO(one), content_type="application/zip").version
    client.publish(name, io.BytesIO(two), content_type="application/zip")
    client.set_alias(name, "prod", 1)
    cache = tmp_path / "cache"

    # When a stack with a function whose code is prod's is synthesized
    template, stack = synthesize(arca_url, name, tmp_path / "out1", cache)

    # Then the function's code is an asset whose bytes are the version's
    assert deployed_sha256(template, tmp_path / "out1") == first.sha256 == hashlib.sha256(one).hexdigest()
    # And the function holds its lease on version 1, for 30 days
    (lease,) = list(client.iter_consumers(name))
    assert (lease.consumer, lease.version) == (CONSUMER, 1)
    # And the stack records what it resolved
    (entry,) = [m.data for m in stack.node.metadata if m.type == "arca:code"]
    assert (entry["version"], entry["sha256"], entry["consumer"]) == (1, first.sha256, CONSUMER)

    # When prod moves and the stack is synthesized again
    client.set_alias(name, "prod", 2)
    template, _ = synthesize(arca_url, name, tmp_path / "out2", cache)
    # Then the code is version 2's, and the lease moved with it
    second = client.get_version(name, 2)
    assert deployed_sha256(template, tmp_path / "out2") == second.sha256 == hashlib.sha256(two).hexdigest()
    assert [(c.consumer, c.version) for c in client.iter_consumers(name)] == [(CONSUMER, 2)]
    # And a version the function runs cannot be deleted
    with pytest.raises(ConflictError, match=CONSUMER):
        client.delete_version(name, 2)


def test_an_alias_on_latest_is_refused_and_leases_nothing(arca_url: str, unique: str, tmp_path: Path) -> None:
    # Given an alias on LATEST, the working copy (no version number to lease or to deploy)
    client = Client(arca_url, sign=False)
    name = f"{unique}/edge-fn"
    client.publish(name, io.BytesIO(a_zip("x")))
    client.set_alias(name, "edge", "LATEST")
    # When / Then
    with pytest.raises(ValueError, match="LATEST"):
        ArcaLambdaCode.resolve(arca_url, name, "edge", consumer=CONSUMER, cache_dir=tmp_path)
    assert list(client.iter_consumers(name)) == []
