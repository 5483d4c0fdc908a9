"""Collection of file contents that trees share, under concurrency, on DynamoDB Local: retention's applies race tree
publishes (and each other), round after round, and an invariant checker looks at what is stored after every round.

A file's content is referenced by every version, LATEST and tree file that holds it; a tree's contents are counted
before its version is written and never less than it holds (decision 98), under decision 60's fence. The
invariants: every version that is not expired, and LATEST, has its bytes in the bucket, and so has every file
content of every tree they hold; each content's count is at least the references it must hold (the counted
versions and LATEST exactly as a blob's, plus one for each distinct tree held that holds it: a tree publish counts
its contents once, and never takes a count back); and no count held by a reference is being collected. Threads call
the services directly, as tests/e2e/test_collection_races.py does (whose rounds and liveness these reuse).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import boto3
import requests

from arca import settings
from arca.adapters import keys
from arca.domain.errors import ConflictError, NotFoundError
from arca.domain.retention import RetentionBody
from arca.domain.trees import TREE_MEDIA_TYPE, FileEntry, TreeContent, parse_manifest
from arca.domain.versions import encode_version
from arca.wiring import build
from tests.e2e.conftest import ArcaHttp
from tests.e2e.test_collection_races import (
    _applier,
    expired,
    rounds,
    snapshot,
    stored,
    upload,
)
from tests.helpers import acting, sha256


def tree_violations(name: str) -> list[str]:
    """What breaks the invariants of shared file contents in `name` now (empty: nothing)."""
    now = snapshot(name)
    items, objects, latest, holders = now.items, now.objects, now.latest, now.holders
    s3 = boto3.client("s3")
    bucket = settings.settings().bucket_name
    found: list[str] = []
    least: dict[str, int] = {}
    for sha in (*(v["sha256"] for v in holders if v.get("counted")), latest.get("counted_sha256")):
        if sha:
            least[sha] = least.get(sha, 0) + 1
    trees: set[str] = set()
    for holder in (*holders, latest):
        key = keys.blob_key(name, holder["sha256"])
        if key not in objects:
            found.append(f"{holder['sk']} holds {holder['sha256'][:8]} whose bytes are gone")
        elif holder.get("content_type") == TREE_MEDIA_TYPE:
            trees.add(holder["sha256"])
    for digest in sorted(trees):
        document = s3.get_object(Bucket=bucket, Key=keys.blob_key(name, digest))["Body"].read()
        for content in parse_manifest(document).contents():
            least[content] = least.get(content, 0) + 1
            if keys.blob_key(name, content) not in objects:
                found.append(f"tree {digest[:8]} holds a file of {content[:8]} whose bytes are gone")
    counts = {i["sk"]: i for i in items.values() if i["pk"] == keys.blobs_pk(name)}
    for content, held in sorted(least.items()):
        count = counts.get(content, {})
        if int(count.get("refs", 0)) < held:
            found.append(f"{content[:8]} counts {int(count.get('refs', 0))} references, fewer than {held}")
        if count.get("collecting"):
            found.append(f"{content[:8]} is held ({held}) and being collected")
    return found


def tree_of(files: dict[str, bytes]) -> TreeContent:
    return TreeContent(files=tuple(FileEntry(path, sha256(data), len(data)) for path, data in files.items()))


def publish_tree(services: object, name: str, files: dict[str, bytes]) -> str:
    """Publish the tree of `files` (forced: a new version even when it is the newest's tree): `ok`, or `refused`
    (409: a content went meanwhile)."""
    try:
        acting("publish", services.publishing).publish(name, tree_of(files), force=True)  # type: ignore[attr-defined]
    except ConflictError:
        return "refused"
    return "ok"


def test_a_tree_publish_racing_the_collection_of_one_of_its_files_never_commits_without_bytes(
    arca: ArcaHttp, unique: str
) -> None:
    # Given a content whose only version (a single blob) expires now, so that its collection begins, and tree
    # publishers whose trees hold it beside a content of their own (uploaded beforehand)
    def work(name: str, data: bytes) -> Callable[[int], str]:
        applied = threading.Event()
        own = {t: f"{name} file of {t}".encode() for t in range(1, 4)}
        for content in own.values():
            arca.upload(name, content)

        def run(t: int) -> str:
            services = build()
            if t == 0:
                try:
                    return _applier(services, name)
                finally:
                    applied.set()
            # Once version 1 has expired, the content has no reference left: its collection begins now. The second
            # publisher does not wait for it, so some rounds see a publish count the content before its expiry (a
            # loaded machine can otherwise let the collection win every round, which proves nothing of that order)
            if t != 2:
                expired(services, name, applied)
            return publish_tree(services, name, {"shared.bin": data, f"own/{t}.bin": own[t]})

        return run

    # When they race, round after round; Then no round leaves a reference without its bytes, nor one uncounted
    outcomes = rounds(arca, unique, work, threads=4, check=tree_violations)
    assert set(outcomes) <= {"applied", "ok", "refused"}, outcomes


def given_two_trees_sharing_a_content(arca: ArcaHttp, name: str, data: bytes) -> None:
    """Version 1 holds `data` as one blob, 2 a tree holding it and `a`, 3 a tree holding it and `b`, 4 other content
    (and LATEST); 1 and 2 are soft-deleted and due to expire, 3 is live."""
    arca.published(name, data)
    for own in (b"a", b"b"):
        files = {"shared/x.bin": data, f"{own.decode()}.txt": name.encode() + own}
        for content in files.values():
            arca.upload(name, content)
        body = {"files": [{"path": p, "sha256": sha256(c), "size": len(c)} for p, c in files.items()]}
        assert arca.post(f"/artifacts/{name}/versions", json=body).status_code == 201
    arca.published(name, data + b" (newer)")
    for number in (1, 2):
        assert arca.request("DELETE", f"/artifacts/{name}/versions/{number}").status_code == 200
    acting("publish", build().retention).put(name, RetentionBody(keep_last=10, rollback_window=0, expire_after_days=0))
    time.sleep(0.002)  # deleted before the cutoff (now), to the millisecond


def downloaded(arca: ArcaHttp, name: str, version: int, path: str) -> bytes:
    """The file's bytes, through its resolve (a redirect to them), on a connection of the calling thread's own."""
    url = f"{arca.url}/artifacts/{name}/resolve/{version}/files/{path}"
    resolved = requests.get(url, allow_redirects=False, timeout=30)
    assert resolved.status_code == 302, resolved.text
    return requests.get(resolved.headers["Location"], timeout=30).content


def test_a_content_two_trees_share_outlives_one_of_them_expiring(arca: ArcaHttp, unique: str) -> None:
    # Given a content held by a blob version and two tree versions; the blob version and one tree expire now, while
    # two applies run, a reader downloads the other tree's file and a publisher makes a third tree holding it
    downloads: dict[str, list[bytes]] = {}

    def work(name: str, data: bytes) -> Callable[[int], str]:
        applied = threading.Event()
        extra = f"{name} extra".encode()
        arca.upload(name, extra)

        def run(t: int) -> str:
            services = build()
            if t < 2:
                try:
                    return _applier(services, name)
                finally:
                    applied.set()
            if t == 2:
                while not applied.is_set():
                    downloads.setdefault(name, []).append(downloaded(arca, name, 3, "shared/x.bin"))
                return "read"
            expired(services, name, applied)
            return publish_tree(services, name, {"shared/x.bin": data, "extra.bin": extra})

        return run

    def check(name: str) -> list[str]:
        found = tree_violations(name)
        data = f"{name} content".encode()
        items = stored(name)
        versions = {n: items.get(f"{name}|{encode_version(n)}", {}) for n in (1, 2, 3)}
        if not (versions[1].get("expired") and versions[2].get("expired")) or versions[3].get("expired"):
            found.append(f"expired: {[n for n, v in versions.items() if v.get('expired')]}, not 1 and 2")
        # The expired tree's manifest was collected (nothing else holds it): the collection did run
        gone = boto3.client("s3").list_objects_v2(
            Bucket=settings.settings().bucket_name, Prefix=keys.blob_key(name, versions[2]["sha256"])
        )
        if gone.get("KeyCount"):
            found.append("the expired tree's manifest was not collected")
        if downloaded(arca, name, 3, "shared/x.bin") != data:
            found.append("version 3's shared file no longer downloads")
        if any(got != data for got in downloads.get(name, [])):
            found.append("a download during the collection did not give the shared file's bytes")
        return found

    # When they race, round after round
    outcomes = rounds(arca, unique, work, threads=4, given=given_two_trees_sharing_a_content, check=check)
    # Then the shared content survives with its bytes, the other tree's file downloads throughout, and the new tree is
    # never refused (nothing it holds is collected)
    assert outcomes.get("refused", 0) == 0, outcomes
    assert outcomes["ok"] == outcomes["read"], outcomes


def test_two_tree_publishes_sharing_a_new_content_race_each_other_and_a_collection(arca: ArcaHttp, unique: str) -> None:
    # Given a content whose only version expires now, and two clients that upload a content new to the artifact
    # (the same bytes) and that content again, then publish trees holding both (once more when a content went
    # between the two calls, as `arca publish` does)
    def work(name: str, data: bytes) -> Callable[[int], str]:
        applied = threading.Event()
        new = f"{name} new".encode()

        def run(t: int) -> str:
            services = build()
            if t == 0:
                try:
                    return _applier(services, name)
                finally:
                    applied.set()
            expired(services, name, applied)
            files = {"new.bin": new, "old.bin": data, "who.txt": f"{name} {t}".encode()}
            for _ in range(2):
                try:
                    for content in files.values():
                        upload(services, name, content)
                except (ConflictError, NotFoundError):
                    continue  # being collected: upload again
                if publish_tree(services, name, files) == "ok":
                    return "ok"
            return "refused"

        return run

    # When they race, round after round; Then no tree commits without its bytes or its counts
    outcomes = rounds(arca, unique, work, threads=3, check=tree_violations)
    assert set(outcomes) <= {"applied", "ok", "refused"}, outcomes


def given_a_tree_due_to_expire(arca: ArcaHttp, name: str, data: bytes) -> None:
    """Version 1 is a tree holding `data`, soft-deleted and due to expire (its manifest nothing else holds); 2 holds
    other content, and LATEST too."""
    arca.upload(name, data)
    body = {"files": [{"path": "only.bin", "sha256": sha256(data), "size": len(data)}]}
    assert arca.post(f"/artifacts/{name}/versions", json=body).status_code == 201
    arca.published(name, data + b" (newer)")
    assert arca.request("DELETE", f"/artifacts/{name}/versions/1").status_code == 200
    acting("publish", build().retention).put(name, RetentionBody(keep_last=1, rollback_window=0, expire_after_days=0))
    time.sleep(0.002)  # deleted before the cutoff (now), to the millisecond


def test_the_same_tree_published_again_racing_the_collection_of_its_manifest_never_commits_without_it(
    arca: ArcaHttp, unique: str
) -> None:
    # Given a tree whose only version expires now (its manifest is collected; its file stays counted), and
    # publishers of that same tree again (the service stores its manifest again when it is gone)
    def work(name: str, data: bytes) -> Callable[[int], str]:
        applied = threading.Event()

        def run(t: int) -> str:
            services = build()
            if t == 0:
                try:
                    return _applier(services, name)
                finally:
                    applied.set()
            expired(services, name, applied)
            return publish_tree(services, name, {"only.bin": data})

        return run

    # When they race, round after round; Then no version holds a tree whose manifest or file is gone
    outcomes = rounds(arca, unique, work, threads=4, given=given_a_tree_due_to_expire, check=tree_violations)
    assert set(outcomes) <= {"applied", "ok", "refused"}, outcomes
