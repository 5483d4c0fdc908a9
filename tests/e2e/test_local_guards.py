"""What local mode refuses, and whom it names as the caller, on the whole local stack (the real handlers)."""

from __future__ import annotations

import ipaddress
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from local.services import launcher_arguments, launcher_classes
from tests.e2e.conftest import ArcaHttp
from tests.helpers import HTTP_TIMEOUT


def test_a_negative_content_length_is_400_at_once_and_publishes_nothing(arca: ArcaHttp, unique: str) -> None:
    # Given an artifact whose LATEST a bodiless POST …/versions would publish
    name = f"{unique}/app"
    assert arca.set_latest(name, b"release").status_code == 200
    host, port = arca.url.removeprefix("http://").split(":")
    # When a client announces a negative length and waits
    with socket.create_connection((host, int(port)), timeout=HTTP_TIMEOUT) as sock:
        sock.sendall(
            f"POST /artifacts/{name}/versions HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Length: -1\r\n\r\n".encode()
        )
        status_line = sock.makefile("rb").readline()
    # Then it is refused before the client gives up, and no version was published
    assert status_line.split()[1] == b"400", status_line
    versions = arca.get(f"/artifacts/{name}/versions")
    assert versions.status_code == 200, versions.text
    assert versions.json()["versions"] == []


def test_the_local_user_header_is_the_alias_revisions_author(arca: ArcaHttp, unique: str) -> None:
    # Given two versions
    name = f"{unique}/app"
    for release in (b"one", b"two"):
        assert arca.set_latest(name, release).status_code == 200
        assert arca.post(f"/artifacts/{name}/versions").status_code == 201
    # When alice creates the alias, bob moves it, and a caller naming nobody moves it back
    alias = f"/artifacts/{name}/aliases/prod"
    assert arca.put(alias, json={"version": 1}, headers={"X-Arca-Local-User": "alice"}).status_code == 201
    assert arca.put(alias, json={"version": 2}, headers={"X-Arca-Local-User": "bob"}).status_code == 200
    assert arca.put(alias, json={"version": 1}).status_code == 200
    refused = arca.put(alias, json={"version": 2}, headers={"X-Arca-Local-User": "Bob"})
    # Then each revision records its author's local identity, and the bad name wrote nothing
    history = arca.get(f"{alias}/history").json()["history"]
    users = "arn:aws:iam::000000000000:user/"
    assert [h["updated_by"] for h in history] == [f"{users}local", f"{users}bob", f"{users}alice"]
    assert refused.status_code == 400 and refused.json()["error"]["field"] == "X-Arca-Local-User"


def _listening(port: int) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    """The local addresses of the sockets listening on `port` (Linux's /proc/net/tcp and tcp6)."""
    found: list[ipaddress.IPv4Address | ipaddress.IPv6Address] = []
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            address, hex_port = fields[1].split(":")
            if fields[3] != "0A" or int(hex_port, 16) != port:  # 0A: LISTEN
                continue
            raw = bytes.fromhex(address)  # 32-bit words in the host's (little-endian) order
            words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
            found.append(ipaddress.IPv4Address(words) if table == "tcp" else ipaddress.IPv6Address(words))
    return found


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc/net")
def test_dynamodb_local_listens_on_the_loopback_address_only(arca_url: str) -> None:
    # Given the running stack's DynamoDB Local
    port = int(os.environ["AWS_ENDPOINT_URL_DYNAMODB"].rsplit(":", 1)[1])
    # When
    addresses = _listening(port)
    # Then no other machine can reach it
    assert addresses
    assert all(
        a.is_loopback or (isinstance(a, ipaddress.IPv6Address) and a.ipv4_mapped and a.ipv4_mapped.is_loopback)
        for a in addresses
    ), addresses


def test_the_launcher_is_compiled_once_and_run_from_source_without_javac(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    jar = tmp_path / "DynamoDBLocal.jar"
    # Given a cache holding the launcher's class, compiled by an earlier start
    compiled = launcher_classes(tmp_path / "cache")
    compiled.mkdir(parents=True)
    (compiled / "LoopbackDynamoDBLocal.class").write_bytes(b"\xca\xfe\xba\xbe")

    def no_compiling(*args: Any, **kwargs: Any) -> None:
        raise AssertionError(f"compiled again: {args}")

    with monkeypatch.context() as patched:
        patched.setattr(subprocess, "run", no_compiling)
        # When
        again = launcher_arguments("java", jar, tmp_path / "cache")
    without_javac = launcher_arguments(str(tmp_path / "no-jdk" / "java"), jar, tmp_path / "other-cache")
    # Then the class is reused; without a javac beside java, DynamoDB Local runs as its jar does
    assert again == ["-cp", f"{jar}{os.pathsep}{compiled}", "LoopbackDynamoDBLocal"]
    assert without_javac == ["-jar", str(jar)]
