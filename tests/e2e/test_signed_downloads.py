"""Signed versions end to end: the client pins the local stage's key and refuses what was changed behind the API
(a version item in DynamoDB, a blob in S3, the key itself), writing nothing."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import boto3
import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

from arca.adapters import keys
from arca_client import Client
from arca_client.cli import EXIT_OK, EXIT_UNVERIFIED, main
from arca_client.errors import ChecksumMismatchError
from arca_client.verify import SignatureError, SigningKeyChangedError, UnsignedVersionError, pins_path
from local.services import FAKE_AWS_ENV
from tests.e2e.test_cli_behaviour import ARCA, _env


@pytest.fixture(autouse=True)
def own_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("ARCA_SIGN", raising=False)


def aws(service: str) -> Any:
    return boto3.client(
        service,
        endpoint_url=os.environ[f"AWS_ENDPOINT_URL_{service.upper()}"],
        region_name="us-east-1",
        aws_access_key_id=FAKE_AWS_ENV["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=FAKE_AWS_ENV["AWS_SECRET_ACCESS_KEY"],
    )


def tamper_version(name: str, version: int, update: str, values: dict[str, Any]) -> None:
    """Change a version item directly in the table, as someone with table access but not the key could."""
    key = keys.version_key(name, version)
    extra: dict[str, Any] = {"ExpressionAttributeValues": values} if values else {}
    if "#size" in update:
        extra["ExpressionAttributeNames"] = {"#size": "size"}
    aws("dynamodb").update_item(
        TableName=os.environ["ARCA_TABLE_NAME"],
        Key={k: {"S": v} for k, v in key.items()},
        UpdateExpression=update,
        **extra,
    )


def publish(client: Client, name: str, data: bytes, tmp_path: Path) -> Any:
    source = tmp_path / "app.bin"
    source.write_bytes(data)
    return client.publish(name, str(source)).version


def test_a_verified_download_pins_the_key_and_writes_the_file(arca_url: str, unique: str, tmp_path: Path) -> None:
    # Given
    client = Client(arca_url)
    version = publish(client, unique, b"signed payload", tmp_path)
    # When
    downloaded = client.download(unique, version.version, tmp_path / "out.bin", verify=True)
    # Then
    assert Path(str(downloaded.path)).read_bytes() == b"signed payload"
    assert json.loads(pins_path().read_text()) == {arca_url: client.signing_key()}
    manifest = json.loads(version.raw["manifest"])
    assert manifest["name"] == unique and manifest["version"] == version.version


def test_a_version_item_changed_in_the_table_is_refused(arca_url: str, unique: str, tmp_path: Path) -> None:
    # Given version 1, and other bytes someone uploaded and pointed version 1 at in the table
    client = Client(arca_url)
    publish(client, unique, b"the real bytes", tmp_path)
    client.download(unique, 1, tmp_path / "first.bin", verify=True)  # pins the key
    other = tmp_path / "evil.bin"
    other.write_bytes(b"evil bytes!")
    blob, _ = client.upload(unique, str(other))
    tamper_version(unique, 1, "SET sha256 = :s, #size = :n", {":s": {"S": blob.sha256}, ":n": {"N": "11"}})
    # When / Then: the SDK refuses and writes nothing
    with pytest.raises(SignatureError) as refused:
        client.download(unique, 1, tmp_path / "out.bin", verify=True)
    assert refused.value.code == "ManifestMismatch"
    assert not (tmp_path / "out.bin").exists()
    # and so does the CLI, with its own exit code
    code = main(["--endpoint", arca_url, "download", f"{unique}@1", "--verify", "-o", str(tmp_path / "cli.bin")])
    assert code == EXIT_UNVERIFIED
    assert not (tmp_path / "cli.bin").exists()


def test_the_part_hashes_of_multipart_content_are_signed_and_every_range_is_checked_against_them(
    arca_url: str, unique: str, tmp_path: Path
) -> None:
    # Given multipart content (two parts of 5 MiB and 1 KiB), whose signed manifest names its layout
    client = Client(arca_url)
    data = os.urandom(5 * 1024 * 1024 + 1024)
    source = tmp_path / "model.bin"
    source.write_bytes(data)
    version = client.publish(unique, str(source), part_size=5 * 1024 * 1024).version
    signed = json.loads(version.raw["manifest"])
    assert (signed["part_size"], len(signed["parts_sha256"])) == (5 * 1024 * 1024, 64)
    client.download(unique, 1, tmp_path / "first.bin", verify=True)  # pins the key; the ranges match
    assert (tmp_path / "first.bin").read_bytes() == data
    # When the part hashes the registry answers are changed in the table (its layout's record)
    record = {"pk": {"S": f"__{unique}-uploads"}, "sk": {"S": f"{version.sha256}.{signed['parts_sha256']}"}}
    aws("dynamodb").update_item(
        TableName=os.environ["ARCA_TABLE_NAME"],
        Key=record,
        UpdateExpression="SET parts = :p",
        ExpressionAttributeValues={":p": {"B": bytes(64)}},
    )
    # Then a verified download refuses before any range is kept: they are not the hashes the stage signed
    with pytest.raises(SignatureError) as refused:
        client.download(unique, 1, tmp_path / "out.bin", verify=True)
    assert refused.value.code == "ManifestMismatch"
    assert not (tmp_path / "out.bin").exists()


def test_a_manifest_signed_by_another_key_is_refused(arca_url: str, unique: str, tmp_path: Path) -> None:
    # Given a version whose manifest and signature were replaced in the table, signed with some other key
    client = Client(arca_url)
    publish(client, unique, b"the real bytes", tmp_path)
    client.download(unique, 1, tmp_path / "first.bin", verify=True)
    forged = json.loads(client.get_version(unique, 1).raw["manifest"])
    forged["created_at"] = "2020-01-01T00:00:00.000000Z"
    text = json.dumps(forged, sort_keys=True, separators=(",", ":"))
    signature = ec.generate_private_key(ec.SECP256R1()).sign(text.encode(), ec.ECDSA(hashes.SHA256()))
    values = {":m": {"S": text}, ":g": {"S": base64.b64encode(signature).decode()}}
    tamper_version(unique, 1, "SET manifest = :m, signature = :g", values)
    # When / Then
    with pytest.raises(SignatureError) as refused:
        client.download(unique, 1, tmp_path / "out.bin", verify=True)
    assert refused.value.code == "BadSignature"
    assert not (tmp_path / "out.bin").exists()


def test_a_blob_changed_in_the_bucket_is_refused(arca_url: str, unique: str, tmp_path: Path) -> None:
    # Given version 1, whose bytes were replaced in S3 behind the registry's back
    client = Client(arca_url)
    version = publish(client, unique, b"the real bytes", tmp_path)
    aws("s3").put_object(
        Bucket=os.environ["ARCA_BUCKET_NAME"], Key=keys.blob_key(unique, version.sha256), Body=b"the evil bytes"
    )
    # When / Then: the signature verifies, but the bytes are not the ones it names
    with pytest.raises(ChecksumMismatchError):
        client.download(unique, 1, tmp_path / "out.bin", verify=True)
    assert not (tmp_path / "out.bin").exists()


def test_a_changed_key_is_refused(arca_url: str, unique: str, tmp_path: Path) -> None:
    # Given a pin for this endpoint that is not the stage's key (the stage's key was replaced, or an impostor)
    client = Client(arca_url)
    publish(client, unique, b"bytes", tmp_path)
    other = ec.generate_private_key(ec.SECP256R1()).public_key()
    pem = other.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    pins_path().parent.mkdir(parents=True, exist_ok=True)
    pins_path().write_text(json.dumps({arca_url: pem}))
    # When / Then
    with pytest.raises(SigningKeyChangedError):
        client.download(unique, 1, tmp_path / "out.bin", verify=True)
    assert not (tmp_path / "out.bin").exists()
    assert main(["--endpoint", arca_url, "download", f"{unique}@1", "--verify", "-o", str(tmp_path / "c")]) == 5


def test_an_unsigned_version_is_named_as_such(arca_url: str, unique: str, tmp_path: Path) -> None:
    # Given a version as published before signing existed
    client = Client(arca_url)
    publish(client, unique, b"old bytes", tmp_path)
    tamper_version(unique, 1, "REMOVE manifest, signature", {})
    # When / Then: verification says so, a plain download still works
    with pytest.raises(UnsignedVersionError, match="no signature"):
        client.download(unique, 1, tmp_path / "out.bin", verify=True)
    assert not (tmp_path / "out.bin").exists()
    assert client.download(unique, 1, tmp_path / "plain.bin").path


def test_attest_and_list_from_the_cli(
    arca_url: str, unique: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given
    client = Client(arca_url)
    publish(client, unique, b"bytes", tmp_path)
    sbom = tmp_path / "sbom.spdx.json"
    sbom.write_text('{"spdxVersion": "SPDX-2.3"}')
    run = ["--endpoint", arca_url]
    # When
    inline = main([*run, "attest", f"{unique}@1", "slsa-provenance", "--content", '{"builder": {"id": "ci"}}'])
    by_file = main([*run, "attest", f"{unique}@1", "sbom-spdx", str(sbom)])
    capsys.readouterr()
    listed = main([*run, "--json", "attestations", f"{unique}@1", "--type", "sbom-spdx"])
    out = "".join(line for line in capsys.readouterr().out.splitlines(keepends=True) if not line.startswith('{"_aws"'))
    # Then
    assert (inline, by_file, listed) == (EXIT_OK, EXIT_OK, EXIT_OK)
    (found,) = json.loads(out)
    assert (found["type"], found["media_type"], found["size"]) == ("sbom-spdx", "application/json", sbom.stat().st_size)
    assert client.get_version(unique, 1).raw["attestations"] == ["sbom-spdx", "slsa-provenance"]
    assert main([*run, "attest", f"{unique}@1", "x", str(sbom), "--content", "{}"]) == 1


def _other_key() -> str:
    other = ec.generate_private_key(ec.SECP256R1()).public_key()
    return other.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()


def test_pins_are_kept_by_the_endpoint_and_trust_key_shows_the_fingerprint_and_repins(
    arca_url: str, unique: str, tmp_path: Path
) -> None:
    # Given a version, and the installed arca with a config of its own
    client = Client(arca_url)
    publish(client, unique, b"signed bytes", tmp_path)
    port = arca_url.rsplit(":", 1)[1]
    env = _env(tmp_path)

    def arca(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(ARCA), *argv], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60)

    pins = tmp_path / "xdg" / "arca" / "signing-keys.json"
    # When the endpoint is spelt two ways
    first = arca("--endpoint", f"http://localhost:{port}", "download", f"{unique}@1", "--verify", "-o", "a.bin")
    second = arca("--endpoint", f"HTTP://127.0.0.1:{port}/", "download", f"{unique}@1", "--verify", "-o", "b.bin")
    # Then it is one endpoint, pinned once
    assert (first.returncode, second.returncode) == (0, 0), first.stderr + second.stderr
    served = client.signing_key()
    assert json.loads(pins.read_text()) == {f"http://127.0.0.1:{port}": served}

    # Given the stage's key replaced (in local mode: a restart), pinned under an old spelling
    pins.write_text(json.dumps({f"http://LOCALHOST:{port}": _other_key()}))
    # When
    refused = arca("--endpoint", arca_url, "download", f"{unique}@1", "--verify", "-o", "c.bin")
    unasked = arca("config", "trust-key", f"http://localhost:{port}")
    trusted = arca("config", "trust-key", f"http://localhost:{port}", "--yes")
    again = arca("--endpoint", arca_url, "download", f"{unique}@1", "--verify", "-o", "c.bin")
    # Then the refusal names the way out, trust-key shows the fingerprint, asks (no terminal: --yes), and re-pins
    fingerprint = signing_fingerprint(served)
    assert refused.returncode == 5
    assert f"arca config trust-key http://127.0.0.1:{port}" in refused.stderr and fingerprint in refused.stderr
    assert unasked.returncode == 1 and fingerprint in unasked.stderr and "--yes" in unasked.stderr
    assert trusted.returncode == 0, trusted.stderr
    assert trusted.stdout == f"http://127.0.0.1:{port}: pinned {fingerprint} in {pins}\n"
    assert json.loads(pins.read_text()) == {f"http://127.0.0.1:{port}": served}
    assert again.returncode == 0 and (tmp_path / "c.bin").read_bytes() == b"signed bytes"
    assert "pinned already" in arca("config", "trust-key", arca_url).stdout


def signing_fingerprint(pem: str) -> str:
    """What `ssh-keygen -l` would show for the key: SHA256 of its DER, base64 without padding."""
    key = serialization.load_pem_public_key(pem.encode())
    der = key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return "SHA256:" + base64.b64encode(hashlib.sha256(der).digest()).decode().rstrip("=")
