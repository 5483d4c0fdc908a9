"""oras-py and skopeo push and pull through the /v2/ dispatcher (over the dict registry), and what they send.

These are the client behaviours the dispatcher must meet; each was first recorded against docker-registry.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import requests

from tests.oci.harness import (
    Registry,
    layout_files,
    make_layout,
    manifest_head,
    oras_attach,
    oras_pull,
    oras_push,
    oras_tags,
    skopeo,
    skopeo_copy,
    skopeo_raw_manifest,
)
from tests.oci.servers import FakeRegistryServer, serving_fake_registry

SBOM = "application/vnd.example.sbom.v1+json"


def _files(tmp_path: Path, **contents: bytes) -> list[Path]:
    paths = []
    for filename, content in contents.items():
        path = tmp_path / "in" / filename.replace("_", ".")
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(content)
        paths.append(path)
    return paths


# oras-py


def test_oras_pushes_and_pulls_files(fake: Registry, name: str, tmp_path: Path) -> None:
    # Given two files
    files = _files(tmp_path, model_bin=os.urandom(3000), README_md=b"# model\n")
    # When oras pushes them and pulls them back
    pushed = oras_push(fake, f"{name}:v1", files)
    pulled = oras_pull(fake, f"{name}:v1", tmp_path / "out")
    # Then
    assert pushed.status_code == 201
    assert pulled == {f.name: f.read_bytes() for f in files}
    assert oras_tags(fake, name) == ["v1"]
    digest, _, media_type = manifest_head(fake, name, "v1")
    assert digest == pushed.headers["Docker-Content-Digest"]
    assert media_type == "application/vnd.oci.image.manifest.v1+json"


def test_oras_sends_each_blob_in_one_put_and_follows_the_redirect_to_the_bytes(
    fake: Registry, fake_server: FakeRegistryServer, name: str, tmp_path: Path
) -> None:
    files = _files(tmp_path, data_bin=os.urandom(5000))
    oras_push(fake, f"{name}:v1", files)
    pushed = fake.exchanges()
    oras_pull(fake, f"{name}:v1", tmp_path / "out")
    pulled = fake.exchanges()
    # Then the push was HEAD, POST, one PUT with the whole blob (for the file, then the config), then the manifest
    assert [(e.method, e.status) for e in pushed] == [("HEAD", 404), ("POST", 202), ("PUT", 201)] * 2 + [("PUT", 201)]
    assert pushed[2].request_size == 5000
    # And the pull read the manifest, then followed each blob's 307 to the byte server, without credentials
    assert [(e.method, e.status) for e in pulled] == [("GET", 200), ("GET", 307)]
    assert [e.status for e in fake_server.blob_recorder.take()][-1:] == [200]


def test_oras_skips_blobs_the_registry_has(fake: Registry, name: str, tmp_path: Path) -> None:
    files = _files(tmp_path, data_bin=os.urandom(100))
    oras_push(fake, f"{name}:v1", files)
    fake.exchanges()
    # When the same files are pushed under another tag
    oras_push(fake, f"{name}:v2", files)
    # Then only HEADs and the manifest went
    assert [(e.method, e.status) for e in fake.exchanges()] == [("HEAD", 200), ("HEAD", 200), ("PUT", 201)]


def test_oras_chunked_upload_sends_content_ranges(fake: Registry, name: str, tmp_path: Path) -> None:
    content = os.urandom(5000)
    files = _files(tmp_path, big_bin=content)
    oras_push(fake, f"{name}:v1", files, do_chunked=True, chunk_size=2000)
    patches = [e for e in fake.exchanges() if e.method == "PATCH"]
    assert [e.request_header("Content-Range") for e in patches] == [["0-1999"], ["2000-3999"], ["4000-4999"]]
    assert [e.response_headers["Range"] for e in patches] == ["0-1999", "0-3999", "0-4999"]
    assert oras_pull(fake, f"{name}:v1", tmp_path / "out") == {"big.bin": content}


def test_oras_tags_follow_the_link_header(fake: Registry, name: str, tmp_path: Path) -> None:
    files = _files(tmp_path, a_txt=b"a")
    for tag in ("c", "a", "b", "d"):
        oras_push(fake, f"{name}:{tag}", files)
    fake.exchanges()
    # When oras asks for 3 tags, it gets pages of 3 until it has them
    assert oras_tags(fake, name, n=3) == ["a", "b", "c"]
    assert oras_tags(fake, name) == ["a", "b", "c", "d"]


def test_an_attached_manifest_is_a_referrer_of_its_subject(fake: Registry, name: str, tmp_path: Path) -> None:
    # Given a pushed artifact and an SBOM attached to it, as `oras attach` does
    oras_push(fake, f"{name}:v1", _files(tmp_path, model_bin=b"weights"))
    subject, _, _ = manifest_head(fake, name, "v1")
    sbom = tmp_path / "sbom.json"
    sbom.write_text('{"packages": []}')
    attached = oras_attach(fake, name, "v1", SBOM, [sbom], {"org.example.format": "spdx"})
    # Then the registry says it processed the subject
    assert attached.status_code == 201
    assert attached.headers["OCI-Subject"] == subject
    # And the subject's referrers list it, filtered by artifactType or not
    listed = requests.get(f"{fake.url}/v2/{name}/referrers/{subject}", timeout=30)
    assert listed.headers["Content-Type"] == "application/vnd.oci.image.index.v1+json"
    [referrer] = listed.json()["manifests"]
    assert referrer["digest"] == attached.headers["Docker-Content-Digest"]
    assert referrer["artifactType"] == SBOM
    assert referrer["annotations"] == {"org.example.format": "spdx"}
    filtered = requests.get(f"{fake.url}/v2/{name}/referrers/{subject}", params={"artifactType": "x/y"}, timeout=30)
    assert (filtered.json()["manifests"], filtered.headers["OCI-Filters-Applied"]) == ([], "artifactType")
    # And the attachment is no version: the tag and LATEST still serve the subject
    assert manifest_head(fake, name, "LATEST")[0] == subject


def test_oras_answers_a_denied_push_as_an_authentication_challenge(
    fake: Registry, fake_server: FakeRegistryServer, name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a tag that an alias policy refuses to move, and oras-py's retry pauses counted instead of slept
    import oras.decorator

    pauses: list[float] = []
    monkeypatch.setattr(oras.decorator.time, "sleep", pauses.append)
    fake_server.registry.denied_tags.add("prod")
    try:
        # When oras pushes to it
        with pytest.raises(ValueError, match="authentication"):
            oras_push(fake, f"{name}:prod", _files(tmp_path, a_txt=b"a"))
    finally:
        fake_server.registry.denied_tags.discard("prod")
    # Then oras-py read the 403 as a challenge it cannot answer, and retried the whole PUT with pauses of
    # 2 + 3^n seconds (3, 5, 11, 29, 83: over two minutes for a user)
    puts = [e for e in fake.exchanges() if e.method == "PUT" and "/manifests/" in e.path]
    assert {e.status for e in puts} == {403}
    assert pauses == [3, 5, 11, 29, 83]
    assert len(puts) == 6


# skopeo


def test_skopeo_copies_an_oci_layout_in_and_out(skopeo_bin: str, fake: Registry, name: str, tmp_path: Path) -> None:
    # Given an OCI layout of two gzip layers
    layout = make_layout(tmp_path / "layout", "v1", {"model.bin": os.urandom(4000), "README.md": b"# hi\n"})
    # When skopeo copies it to the registry and back
    pushed = skopeo_copy(skopeo_bin, layout.reference, f"docker://{fake.host}/{name}:v1", "--preserve-digests")
    back = skopeo_copy(skopeo_bin, f"docker://{fake.host}/{name}:v1", f"oci:{tmp_path / 'back'}:v1")
    # Then the manifest kept its digest and the files came back
    assert pushed == back == layout.manifest_digest
    assert layout_files(tmp_path / "back", "v1") == layout.layers
    raw = skopeo_raw_manifest(skopeo_bin, fake, f"{name}:v1")
    assert json.loads(raw)["layers"][0]["mediaType"] == "application/vnd.oci.image.layer.v1.tar+gzip"


def test_skopeo_pushes_each_blob_in_one_patch_and_reads_manifests_with_many_accept_headers(
    skopeo_bin: str, fake: Registry, name: str, tmp_path: Path
) -> None:
    layout = make_layout(tmp_path / "layout", "v1", {"a.bin": os.urandom(3000)})
    skopeo_copy(skopeo_bin, layout.reference, f"docker://{fake.host}/{name}:v1", "--preserve-digests")
    pushed = fake.exchanges()
    skopeo_copy(skopeo_bin, f"docker://{fake.host}/{name}:v1", f"oci:{tmp_path / 'back'}:v1")
    pulled = fake.exchanges()
    # Then it checked the base, and sent each blob in one PATCH (no Content-Range) closed by an empty PUT
    assert pushed[0].line() == "GET /v2/ -> 200"
    patches = [e for e in pushed if e.method == "PATCH"]
    assert patches and all(not e.request_header("Content-Range") for e in patches)
    assert all(e.request_size == 0 for e in pushed if e.method == "PUT" and "/uploads/" in e.path)
    # And it asked for the manifest with one Accept header per media type
    [manifest_get] = [e for e in pulled if "/manifests/" in e.path]
    assert len(manifest_get.request_header("Accept")) > 1


def test_skopeo_falls_back_to_an_upload_when_a_mount_is_not_done(
    skopeo_bin: str, fake: Registry, name: str, tmp_path: Path
) -> None:
    # Given an image pushed to one repository (skopeo remembers where its blobs are)
    layout = make_layout(tmp_path / "layout", "v1", {"a.bin": os.urandom(3000)})
    skopeo_copy(skopeo_bin, layout.reference, f"docker://{fake.host}/{name}:v1", "--preserve-digests")
    fake.exchanges()
    # When it is pushed to another repository of the same registry
    other = f"{name}-copy"
    skopeo_copy(skopeo_bin, layout.reference, f"docker://{fake.host}/{other}:v1", "--preserve-digests")
    exchanges = fake.exchanges()
    # Then it asked to mount the layer from the first repository, was answered with a session (202), cancelled it
    # and uploaded the blob
    mounts = [e for e in exchanges if e.method == "POST" and "mount=" in e.path]
    assert mounts and all(e.status == 202 for e in mounts)
    cancelled = [e for e in exchanges if e.method == "DELETE" and "/blobs/uploads/" in e.path]
    assert len(cancelled) == len(mounts)
    assert skopeo_copy(skopeo_bin, f"docker://{fake.host}/{other}:v1", f"oci:{tmp_path / 'back'}:v1")
    assert layout_files(tmp_path / "back", "v1") == layout.layers


def test_skopeo_copies_a_multi_platform_index(skopeo_bin: str, fake: Registry, name: str, tmp_path: Path) -> None:
    # Given two images and an index of them in one layout
    amd = make_layout(tmp_path / "layout", "amd64", {"amd.bin": os.urandom(500)})
    arm = make_layout(tmp_path / "layout", "arm64", {"arm.bin": os.urandom(500)})
    _index_layout(tmp_path / "layout", "multi", [amd.manifest_digest, arm.manifest_digest])
    # When skopeo copies all of it
    source = f"oci:{tmp_path / 'layout'}:multi"
    pushed = skopeo_copy(skopeo_bin, source, f"docker://{fake.host}/{name}:multi", "--all", "--preserve-digests")
    # Then the index is served by its tag, and each image by its digest
    raw = json.loads(skopeo_raw_manifest(skopeo_bin, fake, f"{name}:multi"))
    assert raw["mediaType"] == "application/vnd.oci.image.index.v1+json"
    assert [m["digest"] for m in raw["manifests"]] == [amd.manifest_digest, arm.manifest_digest]
    assert manifest_head(fake, name, amd.manifest_digest)[0] == amd.manifest_digest
    assert pushed.startswith("sha256:")


def _index_layout(path: Path, tag: str, digests: list[str]) -> None:
    index_file = path / "index.json"
    layout_index = json.loads(index_file.read_text())
    entries = []
    for i, digest in enumerate(digests):
        [entry] = [m for m in layout_index["manifests"] if m["digest"] == digest]
        entries.append(
            {k: entry[k] for k in ("mediaType", "digest", "size")}
            | {"platform": {"os": "linux", "architecture": f"a{i}"}}
        )
    body = json.dumps(
        {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": entries}
    )
    import hashlib

    hexdigest = hashlib.sha256(body.encode()).hexdigest()
    (path / "blobs" / "sha256" / hexdigest).write_text(body)
    layout_index["manifests"].append(
        {
            "mediaType": "application/vnd.oci.image.index.v1+json",
            "digest": f"sha256:{hexdigest}",
            "size": len(body),
            "annotations": {"org.opencontainers.image.ref.name": tag},
        }
    )
    index_file.write_text(json.dumps(layout_index))


# Beyond what one request carries


def test_a_blob_over_the_request_bound_is_413_naming_the_proxy(skopeo_bin: str, name: str, tmp_path: Path) -> None:
    # Given a dispatcher bounding a body as Lambda would (scaled down to 64 KiB)
    with serving_fake_registry(max_body=64 * 1024) as bounded:
        registry = Registry(bounded.host, bounded.recorder, "bounded")
        layout = make_layout(tmp_path / "layout", "v1", {"big.bin": os.urandom(200 * 1024)})
        # When skopeo pushes a larger blob
        done = skopeo(
            skopeo_bin, "copy", "--dest-tls-verify=false", layout.reference, f"docker://{registry.host}/{name}:v1"
        )
        # Then it fails showing Arca's message, and so does oras-py
        assert done.returncode != 0
        assert "push through `arca proxy`" in done.stderr
        big = tmp_path / "big.bin"
        big.write_bytes(os.urandom(200 * 1024))
        with pytest.raises(ValueError):
            oras_push(registry, f"{name}:v1", [big])
        statuses = {e.status for e in registry.exchanges() if e.method in ("PATCH", "PUT")}
        assert 413 in statuses
