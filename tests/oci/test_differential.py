"""The same client operations against Debian's docker-registry (the reference), the /v2/ dispatcher over the dict
registry, and Arca itself (`make local`'s server): what the clients see must be the same.

Where the two differ by design, the scenario leaves it out and docs say why: the reference has no referrers API
(distribution 2.8), keeps no version numbers, deletes a tagged manifest by digest (Arca refuses), cannot delete a
tag, and reads a monolithic POST as the start of a session.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.oci.harness import (
    Registry,
    differential,
    layout_files,
    make_layout,
    manifest_head,
    oras_attach,
    oras_pull,
    oras_push,
    oras_tags,
    skopeo_copy,
    skopeo_raw_manifest,
)

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"


@pytest.fixture
def both(reference: Registry, fake: Registry, arca: Registry) -> list[Registry]:
    """The reference, the dispatcher over the dict registry, and Arca's local server: the clients see the same."""
    reference.exchanges()
    return [reference, fake, arca]


def _digest(content: bytes) -> str:
    return "sha256:" + hashlib.sha256(content).hexdigest()


def test_oras_push_pull_and_tags(both: list[Registry], name: str, tmp_path: Path) -> None:
    files = {"model.bin": os.urandom(4096), "README.md": b"# readme\n"}
    paths = []
    for filename, content in files.items():
        (tmp_path / filename).write_bytes(content)
        paths.append(tmp_path / filename)

    def scenario(registry: Registry) -> Any:
        pushed = oras_push(registry, f"{name}:v1", paths)
        oras_push(registry, f"{name}:v2", paths)
        pulled = oras_pull(registry, f"{name}:v1", tmp_path / registry.label)
        return pushed.status_code, pushed.headers["Docker-Content-Digest"], pulled, sorted(oras_tags(registry, name))

    seen = differential(both, scenario)
    assert seen[0].outcome[2] == files


def test_skopeo_copy_in_and_out(skopeo_bin: str, both: list[Registry], name: str, tmp_path: Path) -> None:
    layout = make_layout(tmp_path / "layout", "v1", {"a.bin": os.urandom(3000), "b.txt": b"bee\n"})

    def scenario(registry: Registry) -> Any:
        target = f"docker://{registry.host}/{name}:v1"
        pushed = skopeo_copy(skopeo_bin, layout.reference, target, "--preserve-digests")
        back = tmp_path / f"back-{registry.label}"
        pulled = skopeo_copy(skopeo_bin, target, f"oci:{back}:v1")
        raw = skopeo_raw_manifest(skopeo_bin, registry, f"{name}:v1")
        return pushed, pulled, _digest(raw), layout_files(back, "v1")

    seen = differential(both, scenario)
    assert seen[0].outcome[0] == layout.manifest_digest


def test_a_chunked_upload_with_content_ranges(both: list[Registry], name: str) -> None:
    blob = os.urandom(300)

    def scenario(registry: Registry) -> Any:
        base = f"{registry.url}/v2/{name}/blobs/uploads/"
        started = requests.post(base, headers={"Content-Length": "0"}, timeout=30)
        seen = [(started.status_code, started.headers.get("Range"))]
        location = started.headers["Location"]
        for start in (0, 100):
            chunk = requests.patch(
                _absolute(registry, location),
                data=blob[start : start + 100],
                headers={"Content-Range": f"{start}-{start + 99}", "Content-Type": "application/octet-stream"},
                timeout=30,
            )
            seen.append((chunk.status_code, chunk.headers.get("Range")))
            location = chunk.headers["Location"]
        status = requests.get(_absolute(registry, location), timeout=30)
        seen.append((status.status_code, status.headers.get("Range")))
        closed = requests.put(
            _absolute(registry, status.headers["Location"]),
            params={"digest": _digest(blob)},
            data=blob[200:],
            headers={"Content-Type": "application/octet-stream"},
            timeout=30,
        )
        seen.append((closed.status_code, closed.headers.get("Docker-Content-Digest")))
        head = requests.head(f"{registry.url}/v2/{name}/blobs/{_digest(blob)}", timeout=30)
        return [*seen, (head.status_code, head.headers.get("Content-Length"))]

    seen = differential(both, scenario)
    assert seen[0].outcome[-1] == (200, "300")


def _absolute(registry: Registry, location: str) -> str:
    return location if location.startswith("http") else registry.url + location


def test_refusals_and_absences(both: list[Registry], name: str, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"a")

    def scenario(registry: Registry) -> Any:
        oras_push(registry, f"{name}:v1", [tmp_path / "a.txt"])
        url = f"{registry.url}/v2/{name}"
        header = {"Content-Type": OCI_MANIFEST}
        missing = {
            "schemaVersion": 2,
            "mediaType": OCI_MANIFEST,
            "config": {"mediaType": "application/vnd.oci.empty.v1+json", "digest": _digest(b"{}"), "size": 2},
            "layers": [{"mediaType": "application/octet-stream", "digest": _digest(b"nowhere"), "size": 7}],
        }
        body = json.dumps(missing).encode()
        answers = {
            "unknown tag": requests.get(f"{url}/manifests/nosuch", headers={"Accept": OCI_MANIFEST}, timeout=30),
            "unknown digest": requests.get(
                f"{url}/manifests/{_digest(b'x')}", headers={"Accept": OCI_MANIFEST}, timeout=30
            ),
            "unknown blob": requests.get(f"{url}/blobs/{_digest(b'x')}", timeout=30),
            "unknown blob head": requests.head(f"{url}/blobs/{_digest(b'x')}", timeout=30),
            "malformed digest": requests.get(f"{url}/blobs/sha256:abc", timeout=30),
            "unknown repository": requests.get(f"{registry.url}/v2/{name}-none/tags/list", timeout=30),
            "blob unknown to a manifest": requests.put(f"{url}/manifests/v2", data=body, headers=header, timeout=30),
            "manifest by another digest": requests.put(
                f"{url}/manifests/{_digest(b'other')}", data=body, headers=header, timeout=30
            ),
            "not json": requests.put(f"{url}/manifests/v2", data=b"{nope", headers=header, timeout=30),
            "closing without a digest": requests.put(_session(registry, name), data=b"x", timeout=30),
        }
        cancelled = _session(registry, name)
        answers["cancel"] = requests.delete(cancelled, timeout=30)
        answers["after cancel"] = requests.get(cancelled, timeout=30)
        return {what: (a.status_code, _codes(a)) for what, a in answers.items()}

    seen = differential(both, scenario)
    assert seen[0].outcome == {
        "unknown tag": (404, ["MANIFEST_UNKNOWN"]),
        "unknown digest": (404, ["MANIFEST_UNKNOWN"]),
        "unknown blob": (404, ["BLOB_UNKNOWN"]),
        "unknown blob head": (404, []),
        "malformed digest": (400, ["DIGEST_INVALID"]),
        "unknown repository": (404, ["NAME_UNKNOWN"]),
        "blob unknown to a manifest": (400, ["MANIFEST_BLOB_UNKNOWN"]),
        "manifest by another digest": (400, ["DIGEST_INVALID"]),
        "not json": (400, ["MANIFEST_INVALID"]),
        "closing without a digest": (400, ["DIGEST_INVALID"]),
        "cancel": (204, []),
        "after cancel": (404, ["BLOB_UPLOAD_UNKNOWN"]),
    }


def _session(registry: Registry, name: str) -> str:
    return _absolute(
        registry, requests.post(f"{registry.url}/v2/{name}/blobs/uploads/", timeout=30).headers["Location"]
    )


def _codes(answer: requests.Response) -> list[str]:
    try:
        return [e["code"] for e in answer.json()["errors"]]
    except ValueError:
        return []


def test_oras_pull_of_an_unknown_tag_fails_alike(both: list[Registry], name: str, tmp_path: Path) -> None:
    def scenario(registry: Registry) -> Any:
        with pytest.raises(ValueError) as raised:
            oras_pull(registry, f"{name}:nosuch", tmp_path / registry.label)
        return type(raised.value).__name__, "Not Found" in str(raised.value)

    differential(both, scenario)


def test_an_attached_manifest_is_stored_and_served_by_digest(both: list[Registry], name: str, tmp_path: Path) -> None:
    (tmp_path / "model.bin").write_bytes(b"weights")
    (tmp_path / "sbom.json").write_text('{"packages": []}')

    def scenario(registry: Registry) -> Any:
        oras_push(registry, f"{name}:v1", [tmp_path / "model.bin"])
        attached = oras_attach(registry, name, "v1", "application/spdx+json", [tmp_path / "sbom.json"], {"a": "b"})
        digest = attached.headers["Docker-Content-Digest"]
        served = requests.get(
            f"{registry.url}/v2/{name}/manifests/{digest}", headers={"Accept": OCI_MANIFEST}, timeout=30
        )
        return (
            attached.status_code,
            digest,
            served.status_code,
            _digest(served.content),
            manifest_head(registry, name, "v1"),
        )

    differential(both, scenario)


def _upload(registry: Registry, name: str, content: bytes) -> None:
    """A blob through a session and its closing PUT (the reference reads a monolithic POST as a session's start)."""
    started = requests.post(f"{registry.url}/v2/{name}/blobs/uploads/", timeout=30)
    assert started.status_code == 202, started.text
    location = started.headers["Location"]
    url = location if location.startswith("http") else f"{registry.url}{location}"
    closed = requests.put(
        url,
        params={"digest": _digest(content)},
        data=content,
        headers={"Content-Type": "application/octet-stream"},
        timeout=30,
    )
    assert closed.status_code == 201, closed.text


def test_a_referrer_pushed_before_its_subject_is_accepted(both: list[Registry], name: str) -> None:
    config = b"{}"
    layer = {"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": _digest(b"weights"), "size": 7}
    empty = {"mediaType": "application/vnd.oci.empty.v1+json", "digest": _digest(config), "size": len(config)}
    subject = json.dumps({"schemaVersion": 2, "mediaType": OCI_MANIFEST, "config": empty, "layers": [layer]}).encode()
    referrer = json.dumps(
        {
            "schemaVersion": 2,
            "mediaType": OCI_MANIFEST,
            "artifactType": "application/spdx+json",
            "config": empty,
            "layers": [empty],
            "subject": {"mediaType": OCI_MANIFEST, "digest": _digest(subject), "size": len(subject)},
        }
    ).encode()

    def scenario(registry: Registry) -> Any:
        _upload(registry, name, config)
        headers = {"Content-Type": OCI_MANIFEST}
        url = f"{registry.url}/v2/{name}/manifests"
        attached = requests.put(f"{url}/{_digest(referrer)}", data=referrer, headers=headers, timeout=30)
        served = requests.get(f"{url}/{_digest(referrer)}", headers={"Accept": OCI_MANIFEST}, timeout=30)
        _upload(registry, name, b"weights")
        pushed = requests.put(f"{url}/v1", data=subject, headers=headers, timeout=30)
        return (
            attached.status_code,
            attached.headers["Docker-Content-Digest"],
            served.status_code,
            served.content == referrer,
            pushed.status_code,
            manifest_head(registry, name, "v1"),
        )

    seen = differential(both, scenario)
    assert seen[0].outcome[0] == 201


def test_an_index_of_manifests_of_the_repository(both: list[Registry], name: str, tmp_path: Path) -> None:
    (tmp_path / "a.bin").write_bytes(b"amd")
    (tmp_path / "b.bin").write_bytes(b"arm")
    index_type = "application/vnd.oci.image.index.v1+json"

    def scenario(registry: Registry) -> Any:
        children = []
        for tag, file in (("amd64", "a.bin"), ("arm64", "b.bin")):
            oras_push(registry, f"{name}:{tag}", [tmp_path / file])
            digest, size, media_type = manifest_head(registry, name, tag)
            children.append(
                {
                    "mediaType": media_type,
                    "digest": digest,
                    "size": size,
                    "platform": {"os": "linux", "architecture": tag},
                }
            )
        body = json.dumps({"schemaVersion": 2, "mediaType": index_type, "manifests": children}).encode()
        pushed = requests.put(
            f"{registry.url}/v2/{name}/manifests/multi", data=body, headers={"Content-Type": index_type}, timeout=30
        )
        served = requests.get(f"{registry.url}/v2/{name}/manifests/multi", headers={"Accept": index_type}, timeout=30)
        return pushed.status_code, served.status_code, served.headers["Content-Type"], served.content == body

    seen = differential(both, scenario)
    assert seen[0].outcome == (201, 200, index_type, True)


def test_the_differential_fails_showing_both_conversations() -> None:
    # Given two registries whose clients see different things
    from tests.oci.servers import Exchange, Recorder

    registries = [Registry("a:1", Recorder(), "one"), Registry("b:2", Recorder(), "two")]

    def scenario(registry: Registry) -> Any:
        registry.recorder.add(Exchange("GET", "/v2/", (), 0, 200 if registry.label == "one" else 404, {}))
        return registry.label == "one"

    # Then
    with pytest.raises(AssertionError) as raised:
        differential(registries, scenario)
    assert "--- one: True\nGET /v2/ -> 200" in str(raised.value)
    assert "--- two: False\nGET /v2/ -> 404" in str(raised.value)
