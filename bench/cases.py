"""What is measured: the groups of rows, the state each starts from, and the derived tables.

Each row is one `Case(label, arca_step, versioned_step_or_None, ...)`; a step takes the iteration index.
Each group is built by a function of (World, Config) that first creates the state its rows need, in a
world of its own (fresh moto tables and buckets: under moto a transaction's cost grows with the table,
so one group's data must not slow the next). Rows of a group run in order; a row that needs LATEST
changed, a version restored, or versions to prune says so in its setup, which runs untimed and uncounted
before each call.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from arca.adapters import keys
from arca.domain.moments import to_iso
from bench.counting import Call
from bench.guards import guard_group
from bench.harness import BenchFailure, Case, Check, Group, Pair, publish_check
from bench.world import KIB, MIB, Blob, World, blob, blob_key

# Arca's artifacts (one to eight segments) and the library's (flat: it keeps names as S3 "folders").
A_APP, V_APP = "bench/app", "bench-app"
A_SIGNED = "bench/signed"
A_BIG, V_BIG = "bench/big", "bench-big"
A_PUT, V_PUT = "bench/put", "bench-put"
A_LIST, V_LIST = "bench/list", "bench-list"
A_DELETE, V_DELETE = "bench/delete", "bench-delete"
A_PRUNE, V_PRUNE = "bench/pruned", "bench-pruned"
A_ALIAS, V_ALIAS = "bench/aliased", "bench-aliased"
A_LINK = "bench/linked"  # a link to A_ALIAS
A_UPLOADS = "bench/incoming"
A_DELETED, A_HISTORY, A_PRUNE_MANY = "bench/mostly-deleted", "bench/revised", "bench/prune-many"
A_TREE = ("bench/tree/a", "bench/tree/b/c", "bench/tree/b/d", "bench/zeta")
ALIAS_GROUP = "Aliases and resolve"

Step = Callable[[int], Any]


@dataclass(frozen=True)
class Config:
    iterations: int = 30  # measured calls per row (after `warmup` unmeasured ones)
    big_iterations: int = 15  # rows at `big_size`, and the rows measured in turn with them
    big_put_iterations: int = 2  # rows that upload `big_size` bytes (moto takes seconds per upload)
    write_iterations: int = 10  # rows whose every call needs several writes first (prune)
    small_size: int = KIB
    big_size: int = 64 * MIB
    list_versions: int = 120  # versions of the artifact listed page by page
    deleted_versions: int = 5_000  # soft-deleted versions a `limit=1` listing looks past (written directly)
    alias_revisions: int = 1_000  # revisions of the alias resolved with at= (written directly)
    prune_versions: int = 5_000  # live versions of the artifact a prune request pages through
    page: int = 100
    prune_batch: int = 5  # versions each prune call deletes
    max_publish_ratio: float | None = 2.0  # fail when publish at big_size is slower than this times small_size
    warmup: int | None = None  # unmeasured calls before each row; None: the row's own (1)
    isolate_groups: bool = True  # a fresh moto world per group; the smoke test shares one to stay fast
    cold_start_runs: int = 15  # whole-process pairs per cold-start row (0: skip)
    search_versions: int = 10_000  # versions searched registry-wide (written directly)
    search_artifacts: int = 100  # the artifacts they are spread over
    events_publishes: int = 200  # publishes timed from commit to the bus, in local mode (0: skip the section)
    events_idle_seconds: float = 10.0  # idle CPU of the local stack measured over this long, paced and at 20 ms
    retention_versions: int = 5_000  # versions of the artifact retention previews and applies (written directly)
    retention_revisions: int = 100  # revisions of its alias (written directly)
    consumer_iterations: int = 10  # leases taken, renewed and moved, listings (0: skip the consumers section)
    resolver_resolves: int = 100_000  # Resolver.resolve() calls answered from its cache, timed one by one
    protocol_iterations: int = 10  # OCI and Hugging Face client operations per row (0: skip the protocols section)
    tree_files: tuple[int, ...] = (10, 1_000, 10_000)  # the trees published (1,000 files and more: once each)
    tree_iterations: int = 10  # calls per row of the smaller trees' publishes and the reads (0: skip the section)
    tree_client_files: int = 1_000  # the directory `arca publish` sends to a local server (0: skip those rows)

    @property
    def small_label(self) -> str:
        return size_label(self.small_size)

    @property
    def big_label(self) -> str:
        return size_label(self.big_size)


def size_label(size: int) -> str:
    if size >= MIB and size % MIB == 0:
        return f"{size // MIB} MiB"
    if size >= KIB and size % KIB == 0:
        return f"{size // KIB} KiB"
    return f"{size} B"


# Content tags (bench.world.blob): each row draws its fresh blobs from its own range.
T_PAIR = (0, 1)  # the two blobs LATEST alternates between, so that a publish is never deduplicated
T_NEW_UPLOAD = 10_000
T_PUT_SMALL = 20_000
T_PUT_BIG = 30_000
MOTO_HASH = "under moto S3 keeps no checksum, so the blob is read back and hashed (on AWS: HeadObject only)"


def pair(size: int) -> tuple[Blob, Blob]:
    return blob(size, T_PAIR[0]), blob(size, T_PAIR[1])


def bare_transaction_case(w: World) -> Case:
    return Case(
        "bare TransactWriteItems, 2 Puts (Arca's client, no handler): moto's floor",
        w.arca.bare_transaction,
        key="bare_transaction",
    )


def bare_get_item_case(w: World, name: str) -> Case:
    return Case("bare GetItem (Arca's client, no handler)", lambda i: w.arca.bare_get_item(name), key="bare_get_item")


def bare_probe_case(w: World, key: dict[str, str]) -> Case:
    return Case(
        "bare Query, Limit 1 (Arca's client, no handler): a point read",
        lambda i: w.arca.bare_probe(key["pk"], key["sk"]),
        key="bare_probe",
    )


# ---- groups ---------------------------------------------------------------------------------------


def uploads_group(w: World, cfg: Config) -> Group:
    a, v = w.arca, w.versioned
    small, big = pair(cfg.small_size), pair(cfg.big_size)
    s, b = cfg.small_label, cfg.big_label
    a.ensure_uploaded(A_UPLOADS, small[0])
    a.create(A_APP, small[0])
    a.ensure_uploaded(A_APP, small[1])
    for item in big:
        a.ensure_uploaded(A_BIG, item)
    a.create(A_BIG, big[0])

    def new_upload(i: int) -> Any:
        fresh = blob(cfg.small_size, T_NEW_UPLOAD + i)
        return a.call("POST", f"/artifacts/{A_UPLOADS}/uploads", _ref(fresh), expect=201)

    def arca_put_artifact(item: Blob) -> Any:
        a.upload(A_PUT, item)
        return a.put_latest(A_PUT, item)

    return Group(
        "Uploads and LATEST",
        [
            Case("create upload (new blob)", new_upload),
            Case(
                "create upload (blob already stored)",
                lambda i: a.call("POST", f"/artifacts/{A_UPLOADS}/uploads", _ref(small[0])),
            ),
            Case(
                f"PUT latest ({s})",
                lambda i: a.put_latest(A_APP, a.other(A_APP, small)),
                check=single_put_check,
                key="put_latest.small",
            ),
            Case(
                f"PUT latest ({b})",
                lambda i: a.put_latest(A_BIG, a.other(A_BIG, big)),
                n=cfg.big_iterations,
                warmup=0,
                check=single_put_check,
                key="put_latest.big",
            ),
            Case(
                f"put artifact, new content ({s}): Arca upload + PUT latest | versioned put_artifact",
                lambda i: arca_put_artifact(blob(cfg.small_size, T_PUT_SMALL + i)),
                lambda i: v.put(V_PUT, blob(cfg.small_size, T_PUT_SMALL + i)),
                arca_setup=lambda i: _make(cfg.small_size, T_PUT_SMALL + i),
                key="put.small",
                note="Arca's client PUTs the bytes to a presigned URL (counted, though botocore does not see it)",
            ),
            Case(
                "put artifact, unchanged content",
                lambda i: arca_put_artifact(small[0]),
                lambda i: v.put(V_PUT, small[0]),
                arca_setup=lambda i: a.ensure_uploaded(A_PUT, small[0]),
                versioned_setup=lambda i: v.ensure_latest(V_PUT, small[0]),
            ),
            Case(
                f"put artifact, new content ({b})",
                lambda i: arca_put_artifact(blob(cfg.big_size, T_PUT_BIG + i)),
                lambda i: v.put(V_PUT, blob(cfg.big_size, T_PUT_BIG + i)),
                arca_setup=lambda i: _make(cfg.big_size, T_PUT_BIG + i),
                versioned_setup=lambda i: _make(cfg.big_size, T_PUT_BIG + i),
                n=cfg.big_put_iterations,
                warmup=0,
                key="put.big",
            ),
        ],
        note=f"PUT latest: {MOTO_HASH}.",
    )


class _NoSigner:
    """Stands in for the stage's key to time a publish without its KMS call (never in a deployed stage)."""

    def sign(self, message: bytes) -> str:
        return ""

    def public_key_pem(self) -> str:
        return ""


def single_put_check(counted: Counter[Call]) -> str | None:
    """Single-PUT content is found by its HeadObject: PUT latest and publish make no Query of multipart layouts."""
    queries = counted[("DynamoDB", "Query")]
    return None if queries == 0 else f"single-PUT content must make no Query (of multipart layouts), made {queries}"


def single_put_publish_check(counted: Counter[Call]) -> str | None:
    """A one-step publish of single-PUT content: the publish rule, and no Query of multipart layouts."""
    return "; ".join(p for p in (publish_check(counted), single_put_check(counted)) if p) or None


def signing_check(kms_calls: int) -> Check:
    """A publish's calls: the publish rule, plus exactly `kms_calls` KMS Sign."""

    def check(counted: Counter[Call]) -> str | None:
        problems = [publish_check(counted)]
        if counted[("KMS", "Sign")] != kms_calls:
            problems.append(f"publish must make {kms_calls} KMS Sign, made {counted[('KMS', 'Sign')]}")
        return "; ".join(p for p in problems if p) or None

    return check


def signing_pair(w: World, cfg: Config) -> Pair:
    """Publish with the stage's signature (one KMS Sign before the transaction) beside the same publish unsigned."""
    a = w.arca
    small = pair(cfg.small_size)
    a.ensure_uploaded(A_SIGNED, small[1])
    a.create(A_SIGNED, small[0], versions=1)
    publishing = a.services.publishing

    def unsigned(i: int) -> Any:
        kept, publishing.signer = publishing.signer, _NoSigner()
        try:
            return a.publish(A_SIGNED)
        finally:
            publishing.signer = kept

    latest = lambda i: a.put_latest(A_SIGNED, a.unpublished(A_SIGNED, small))  # noqa: E731
    return Pair(
        Case(
            f"publish snapshot, signed ({cfg.small_label} LATEST): KMS Sign, then the transaction",
            lambda i: a.publish(A_SIGNED),
            arca_setup=latest,
            check=signing_check(1),
            key="publish.signed",
        ),
        Case(
            f"publish snapshot, unsigned ({cfg.small_label} LATEST): the same without the KMS call",
            unsigned,
            arca_setup=latest,
            check=signing_check(0),
            key="publish.unsigned",
        ),
        n=cfg.big_iterations,
    )


def publish_group(w: World, cfg: Config) -> Group:
    a, v = w.arca, w.versioned
    small, big = pair(cfg.small_size), pair(cfg.big_size)
    s, b = cfg.small_label, cfg.big_label
    a.ensure_uploaded(A_APP, small[1])
    a.create(A_APP, small[0], versions=1)
    for item in big:
        a.ensure_uploaded(A_BIG, item)
    a.create(A_BIG, big[0], versions=1)
    v.create(V_APP, small[0], versions=1)

    def arca_publish_with_body(name: str, pair_: tuple[Blob, Blob]) -> Step:
        return lambda i: a.publish(name, a.unpublished(name, pair_))

    def versioned_put_and_publish(i: int) -> Any:
        v.put(V_APP, small[1] if v.latest.get(V_APP) == small[0].sha256 else small[0])
        return v.publish(V_APP)

    def ensure_deduplicable(i: int) -> None:
        if a.newest.get(A_APP) != a.latest.get(A_APP):
            a.publish(A_APP)

    return Group(
        "Publish",
        [
            bare_transaction_case(w),
            Pair(
                Case(
                    f"publish snapshot, empty body ({s} LATEST) | versioned publish_artifact_version",
                    lambda i: a.publish(A_APP),
                    lambda i: v.publish(V_APP),
                    arca_setup=lambda i: a.put_latest(A_APP, a.unpublished(A_APP, small)),
                    check=publish_check,
                    key="publish.small",
                ),
                Case(
                    f"publish snapshot, empty body ({b} LATEST)",
                    lambda i: a.publish(A_BIG),
                    lambda i: v.publish(V_BIG),
                    arca_setup=lambda i: a.put_latest(A_BIG, a.unpublished(A_BIG, big)),
                    versioned_setup=lambda i: v.ensure_latest(V_BIG, big[0]),
                    check=publish_check,
                    key="publish.big",
                ),
                n=cfg.big_iterations,
            ),
            Pair(
                Case(
                    f"one-step publish with body ({s}) | versioned put_artifact + publish",
                    arca_publish_with_body(A_APP, small),
                    versioned_put_and_publish,
                    check=single_put_publish_check,
                    key="publish_body.small",
                ),
                Case(
                    f"one-step publish with body ({b})",
                    arca_publish_with_body(A_BIG, big),
                    check=single_put_publish_check,
                    key="publish_body.big",
                ),
                n=cfg.big_iterations,
            ),
            signing_pair(w, cfg),
            Case(
                "publish deduplicated (empty body, LATEST unchanged)",
                lambda i: a.publish(A_APP, expect=200),
                arca_setup=ensure_deduplicable,
            ),
            Case(
                "publish deduplicated (same body as newest)",
                lambda i: a.publish(A_APP, a.current(A_APP, small), expect=200),
                arca_setup=ensure_deduplicable,
            ),
        ],
        note="each publish row at two sizes is measured in turn with the other, call by call (same table, same "
        "noise). versioned copies LATEST's bytes to a new S3 object on every publish (CopyObject) and has no "
        "deduplication; its one-step equivalent is put_artifact followed by publish_artifact_version. "
        f"One-step publish: {MOTO_HASH}. Signed vs unsigned: the KMS Sign is moto's in-process signature here "
        "(ECDSA P-256 in Python); on AWS it is one more network round trip to KMS before the transaction.",
    )


def reads_group(w: World, cfg: Config) -> Group:
    a, v = w.arca, w.versioned
    small = pair(cfg.small_size)
    a.create(A_APP, small[0], versions=1)
    a.create(A_LIST, small[0], versions=cfg.list_versions)
    for name in A_TREE:
        a.create(name, small[0])
    v.create(V_APP, small[0], versions=1)
    v.create(V_LIST, small[0], versions=cfg.list_versions)
    for name in ("bench-tree-a", "bench-zeta"):
        v.create(name, small[0])

    def page_of_versions(i: int) -> Any:
        body = a.call("GET", f"/artifacts/{A_LIST}/versions", query={"limit": str(cfg.page)})
        if len(body["versions"]) != min(cfg.page, cfg.list_versions):
            raise BenchFailure(f"Arca list versions returned {len(body['versions'])} versions, expected {cfg.page}")
        return body

    return Group(
        "Reads",
        [
            bare_get_item_case(w, A_APP),
            bare_probe_case(w, keys.version_key(A_APP, 1)),
            Case("bare HeadObject (Arca's client, no handler)", lambda i: a.bare_head_object(A_APP, small[0])),
            Case(
                "get version (number)",
                lambda i: a.call("GET", f"/artifacts/{A_APP}/versions/1"),
                lambda i: v.repo.get_artifact_version(V_APP, 1),
                key="get_version",
            ),
            Case(
                "get version (LATEST)",
                lambda i: a.call("GET", f"/artifacts/{A_APP}/versions/LATEST"),
                lambda i: v.repo.get_artifact_version(V_APP),
            ),
            Case("artifact summary", lambda i: a.call("GET", f"/artifacts/{A_APP}")),
            Case(
                f"list versions, page of {cfg.page} of {cfg.list_versions} | versioned: all, unpaged",
                page_of_versions,
                lambda i: v.repo.list_artifact_versions(V_LIST),
            ),
            Case(
                "list artifacts with delimiter | versioned list_artifact_names",
                lambda i: a.call("GET", "/artifacts", query={"prefix": "bench/", "delimiter": "/"}),
                lambda i: v.repo.list_artifact_names(),
            ),
        ],
    )


def deletes_group(w: World, cfg: Config) -> Group:
    a, v = w.arca, w.versioned
    small = pair(cfg.small_size)
    a.create(A_DELETE, small[0], versions=2)
    a.create(A_PRUNE, small[0], versions=cfg.prune_batch)
    v.create(V_DELETE, small[0], versions=2)
    v.create(V_PRUNE, small[0], versions=cfg.prune_batch)

    def arca_prune(i: int) -> Any:
        reply = a.call("POST", f"/artifacts/{A_PRUNE}/prune", {"keep_last": cfg.prune_batch})
        if len(reply["deleted"]) != cfg.prune_batch:
            raise BenchFailure(f"Arca prune deleted {reply['deleted']}, expected {cfg.prune_batch} versions")
        return reply

    def versioned_prune(i: int) -> Any:
        _, deleted = v.repo.purge_artifact_versions(V_PRUNE, keep_last_n=cfg.prune_batch, purge_older_than_secs=0)
        if len(deleted) != cfg.prune_batch:
            raise BenchFailure(f"versioned purge_artifact_versions deleted {len(deleted)}, expected {cfg.prune_batch}")
        return deleted

    def publish_batch(side_publish: Callable[[], Any]) -> Step:
        return lambda i: [side_publish() for _ in range(cfg.prune_batch)]

    return Group(
        "Delete, restore, prune",
        [
            bare_transaction_case(w),
            Case(
                "delete version",
                lambda i: a.set_deleted(A_DELETE, 1, True),
                lambda i: v.repo.delete_artifact_version(V_DELETE, 1),
                arca_setup=lambda i: a.set_deleted(A_DELETE, 1, False) if (A_DELETE, 1) in a.deleted else None,
            ),
            Case(
                "restore version",
                lambda i: a.set_deleted(A_DELETE, 1, False),
                arca_setup=lambda i: a.set_deleted(A_DELETE, 1, True) if (A_DELETE, 1) not in a.deleted else None,
            ),
            Case(
                f"prune: keep {cfg.prune_batch}, delete {cfg.prune_batch} | versioned purge_artifact_versions",
                arca_prune,
                versioned_prune,
                arca_setup=publish_batch(lambda: a.publish(A_PRUNE, force=True)),
                versioned_setup=publish_batch(lambda: v.publish(V_PRUNE)),
                n=cfg.write_iterations,
            ),
        ],
        note="versioned has no restore; its delete is one unconditional UpdateItem.",
    )


ALIASES: dict[str, dict[str, Any]] = {
    "prod": {"version": 1},
    "canary": {"version": 1, "secondary_version": 2, "secondary_version_weight": 10},
    "edge": {"version": "LATEST"},
}


def alias_group(w: World, cfg: Config) -> Group:
    """Aliases and resolve on an artifact of three versions: `prod` (single), `canary` (1 + 2 at 10%), `edge`
    (LATEST). Each versioned row is the library's nearest equivalent (it has no history, rollback or keyed
    routing; its "resolve" is get_alias + random_artifact, or get_artifact_version for a number)."""
    a, v = w.arca, w.versioned
    small = pair(cfg.small_size)
    a.create(A_ALIAS, small[0], versions=3)
    v.create(V_ALIAS, small[0], versions=3)
    aliases = f"/artifacts/{A_ALIAS}/aliases"
    resolve = f"/artifacts/{A_ALIAS}/resolve"
    for alias, spec in ALIASES.items():
        a.call("PUT", f"{aliases}/{alias}", spec, expect=201)
        v.repo.put_alias(V_ALIAS, alias, **{k: None if x == "LATEST" else x for k, x in spec.items()})
    before_moves = to_iso(datetime.now(UTC))
    a.call("PUT", f"/artifacts/{A_LINK}/link", {"target": A_ALIAS}, expect=201)
    through_link = f"/artifacts/{A_LINK}/resolve"

    def canary(i: int) -> dict[str, Any]:
        return {**ALIASES["canary"], "secondary_version_weight": 10 + 10 * (i % 2)}

    return Group(
        ALIAS_GROUP,
        [
            bare_get_item_case(w, A_ALIAS),
            bare_probe_case(w, keys.alias_key(A_ALIAS, "canary")),
            bare_transaction_case(w),
            Case(
                "alias set, single (moves between versions 1 and 2)",
                lambda i: a.call("PUT", f"{aliases}/prod", {"version": 2 - i % 2}),
                lambda i: v.repo.put_alias(V_ALIAS, "prod", version=2 - i % 2),
            ),
            Case(
                "alias set, canary (1 + 2, weight 10 or 20)",
                lambda i: a.call("PUT", f"{aliases}/canary", canary(i)),
                lambda i: v.repo.put_alias(V_ALIAS, "canary", **canary(i)),
            ),
            Case(
                "get alias",
                lambda i: a.call("GET", f"{aliases}/prod"),
                lambda i: v.repo.get_alias(V_ALIAS, "prod"),
            ),
            Case(
                "list aliases (3)",
                lambda i: a.call("GET", aliases),
                lambda i: v.repo.list_aliases(V_ALIAS),
            ),
            Case(
                "resolve alias, canary, no routing key | versioned get_alias + random_artifact",
                lambda i: a.call("GET", f"{resolve}/canary"),
                lambda i: v.repo.get_alias(V_ALIAS, "canary").random_artifact(),
                key="resolve.alias",
            ),
            Case(
                "resolve alias through a link (the direct resolve above, one call more)",
                lambda i: a.call("GET", f"{through_link}/canary"),
                key="resolve.alias.link",
                check=link_check(2),
            ),
            Case(
                "resolve alias, canary, with routing key",
                lambda i: a.call("GET", f"{resolve}/canary", query={"routing_key": f"user-{i}"}),
                key="resolve.alias.key",
            ),
            Case(
                "resolve alias pointing at LATEST | versioned get_alias + random_artifact",
                lambda i: a.call("GET", f"{resolve}/edge"),
                lambda i: v.repo.get_alias(V_ALIAS, "edge").random_artifact(),
                key="resolve.alias.latest",
            ),
            Case(
                "resolve version number | versioned get_artifact_version",
                lambda i: a.call("GET", f"{resolve}/2"),
                lambda i: v.repo.get_artifact_version(V_ALIAS, 2),
                key="resolve.number",
            ),
            Case(
                "resolve version number through a link",
                lambda i: a.call("GET", f"{through_link}/2"),
                key="resolve.number.link",
                check=link_check(2),
            ),
            Case(
                "resolve LATEST | versioned get_artifact_version",
                lambda i: a.call("GET", f"{resolve}/LATEST"),
                lambda i: v.repo.get_artifact_version(V_ALIAS),
                key="resolve.latest",
            ),
            Case(
                "presign a download URL (Arca's S3 client, no call)",
                lambda i: a.services.blobs.presign_download(
                    blob_key(A_ALIAS, small[0].sha256), content_type="application/octet-stream", filename="x"
                ),
            ),
            Case(
                "resolve content (302 to the download URL)",
                lambda i: a.call("GET", f"{resolve}/prod/content", expect=302),
            ),
            Case(
                "resolve alias as it stood before the moves (at=)",
                lambda i: a.call("GET", f"{resolve}/prod", query={"at": before_moves}),
                check=at_check,
                note="one Query of the alias's time rows (Limit 1), then the version",
            ),
            Case("alias history, first page (up to 100 revisions)", lambda i: a.call("GET", f"{aliases}/prod/history")),
            Case(
                "rollback (to the revision before the current one)",
                lambda i: a.call("POST", f"{aliases}/prod/rollback", {}),
            ),
        ],
        note="versioned has no alias history, rollback, time travel or keyed routing; its alias and version "
        "reads return an s3:// URI, Arca's resolve a presigned download URL (signed locally, no call).",
    )


def link_check(expected: int) -> Check:
    """A read through a link costs one DynamoDB call more than the direct read: `expected` in all."""

    def check(counted: Counter[Call]) -> str | None:
        calls = sum(n for (service, _), n in counted.items() if service == "DynamoDB")
        return None if calls == expected else f"made {calls} DynamoDB calls through a link, not {expected}"

    return check


def at_check(counted: Counter[Call]) -> str | None:
    """`resolve ?at=` reads two items (the revision in force, then its version), however long the history."""
    calls = sum(n for (service, _), n in counted.items() if service == "DynamoDB")
    return None if calls <= 2 else f"resolve at= made {calls} DynamoDB calls, over 2"


def query_budget_check(counted: Counter[Call]) -> str | None:
    """A listing or prune request makes at most QUERY_BUDGET Queries, however much it skips."""
    from arca.adapters.store.pages import QUERY_BUDGET

    queries = counted[("DynamoDB", "Query")]
    return f"made {queries} Queries, over the budget of {QUERY_BUDGET}" if queries > QUERY_BUDGET else None


def bounded_group(w: World, cfg: Config) -> Group:
    """Requests whose work must not grow with what lies in the table: deleted versions, history, versions to
    prune. The large states are written straight into the table (local.seed), copies of items the handlers
    wrote, since publishing thousands of versions one request at a time would take minutes under moto."""
    from local.seed import clone_revisions, clone_versions

    a = w.arca
    small = pair(cfg.small_size)
    client, table = a.services.stores.table.client, a.services.stores.table.name
    a.create(A_DELETED, small[0], versions=1)
    clone_versions(client, table, A_DELETED, range(2, cfg.deleted_versions + 2), deleted=True)
    a.create(A_HISTORY, small[0], versions=1)
    a.call("PUT", f"/artifacts/{A_HISTORY}/aliases/prod", {"version": 1}, expect=201)
    times = clone_revisions(client, table, A_HISTORY, "prod", cfg.alias_revisions - 1)
    middle = times[len(times) // 2]
    a.create(A_PRUNE_MANY, small[0], versions=1)
    clone_versions(client, table, A_PRUNE_MANY, range(2, cfg.prune_versions + 1), deleted=False)

    def list_one(i: int) -> Any:
        reply = a.call("GET", f"/artifacts/{A_DELETED}/versions", query={"limit": "1", "order": "asc"})
        if reply["versions"] and reply["versions"][0]["version"] != 1:
            raise BenchFailure(f"list versions returned {reply['versions'][0]['version']}, expected version 1")
        return reply

    def at_middle(i: int) -> Any:
        reply = a.call("GET", f"/artifacts/{A_HISTORY}/resolve/prod", query={"at": middle})
        if reply["alias_revision"] != len(times) // 2 + 1:
            raise BenchFailure(f"at= resolved revision {reply['alias_revision']}, expected {len(times) // 2 + 1}")
        return reply

    def prune_first_request(i: int) -> Any:
        reply = a.call("POST", f"/artifacts/{A_PRUNE_MANY}/prune", {"keep_last": 1, "dry_run": True})
        if cfg.prune_versions > 500 and reply["next_token"] is None:
            raise BenchFailure("a prune over thousands of versions finished in one request: it is not paged")
        return reply

    return Group(
        "Bounded requests",
        [
            Case(
                f"list versions limit=1 past {cfg.deleted_versions:,} deleted versions (newest first)",
                lambda i: a.call("GET", f"/artifacts/{A_DELETED}/versions", query={"limit": "1"}),
                check=query_budget_check,
                n=cfg.write_iterations,
                note="at most 5 Queries, then a next_token to go on; the live version is found by paging",
            ),
            Case(f"list versions limit=1 past {cfg.deleted_versions:,} deleted versions (oldest first)", list_one),
            Case(
                f"resolve alias at= over {cfg.alias_revisions:,} revisions",
                at_middle,
                check=at_check,
                note="one Query of the time rows, Limit 1 (the revision), then the version: 2 item reads",
            ),
            Case(
                f"prune dry run over {cfg.prune_versions:,} versions, one request",
                prune_first_request,
                check=query_budget_check,
                n=cfg.write_iterations,
                note="5 pages of 99 versions, then a next_token; a real prune adds one transaction a page",
            ),
        ],
    )


# Tags and search.
A_SEARCH, A_TAGGED = "bench/search/source", "bench/tagged"


def one_query_check(counted: Counter[Call]) -> str | None:
    """A page of digest hits is one Query of the search index (its rows are the versions), and nothing else."""
    dynamo = {op: n for (service, op), n in counted.items() if service == "DynamoDB" and n}
    return None if dynamo == {"Query": 1} else f"a search page must be one Query, made {dynamo}"


def query_and_batch_check(counted: Counter[Call]) -> str | None:
    """A page of tag hits is one Query of the search index and one BatchGetItem of its versions' tags and state
    (a tag row copies neither), and nothing else."""
    dynamo = {op: n for (service, op), n in counted.items() if service == "DynamoDB" and n}
    wanted = {"Query": 1, "BatchGetItem": 1}
    return None if dynamo == wanted else f"a tag search page must be one Query and one BatchGetItem, made {dynamo}"


def tag_write_check(counted: Counter[Call]) -> str | None:
    """A tag patch writes with exactly one TransactWriteItems (the item, its index rows, the artifact check)."""
    writes = {
        op: n for (service, op), n in counted.items() if service == "DynamoDB" and n and op not in ("GetItem", "Query")
    }
    return None if writes == {"TransactWriteItems": 1} else f"a tag patch must be one TransactWriteItems, made {writes}"


def search_group(w: World, cfg: Config) -> Group:
    """Registry-wide search over `search_versions` versions spread over `search_artifacts` artifacts, all with
    the same content and tag (so every page is full). The versions are written straight into the table
    (local.seed), copies of one the handlers published and tagged."""
    from local.seed import clone_tagged_versions

    a = w.arca
    small = pair(cfg.small_size)
    a.create(A_SEARCH, small[0], versions=1)
    a.call("PATCH", f"/artifacts/{A_SEARCH}/versions/1", {"tags": {"release": "bench", "team": "core"}})
    per = cfg.search_versions // cfg.search_artifacts
    client, table = a.services.stores.table.client, a.services.stores.table.name
    targets = [(f"bench/search/a{i:03d}", n) for i in range(cfg.search_artifacts) for n in range(1, per + 1)]
    clone_tagged_versions(client, table, A_SEARCH, targets[: cfg.search_versions - 1])
    digest = small[0].sha256

    def page(query: dict[str, str]) -> Step:
        def step(i: int) -> Any:
            reply = a.call("GET", "/versions", query={**query, "limit": str(cfg.page)})
            if len(reply["versions"]) != cfg.page or reply["next_token"] is None:
                raise BenchFailure(f"search {query} returned {len(reply['versions'])} hits, expected a full page")
            return reply

        return step

    total = f"{cfg.search_versions:,} versions in {cfg.search_artifacts} artifacts"
    return Group(
        "Tags and search",
        [
            Case(
                f"search by digest, first page of {cfg.page} ({total})",
                page({"sha256": digest}),
                check=one_query_check,
                note="one Query of the search index (`sha256#<hex>`), whatever the registry holds",
            ),
            Case(
                f"search by tag, first page of {cfg.page} ({total})",
                page({"tag": "release=bench"}),
                check=query_and_batch_check,
                note="one Query of the search index (`tag#<key>=<value>`), a BatchGetItem of the hits' tags, state",
            ),
        ],
    )


def tags_group(w: World, cfg: Config) -> Group:
    """Tag writes, in a small table of their own (under moto a transaction's cost grows with the table)."""
    a = w.arca
    a.create(A_TAGGED, pair(cfg.small_size)[1], versions=1)
    return Group(
        "Tags",
        [
            Case(
                "tag a version (one key changed, one kept)",
                lambda i: a.call(
                    "PATCH", f"/artifacts/{A_TAGGED}/versions/1", {"tags": {"build": str(i), "team": "x"}}
                ),
                check=tag_write_check,
                note="the version's point read (Query, Limit 1), then one TransactWriteItems: the version, its changed "
                "index row, LATEST live and the event",
            ),
            Case(
                "tag the artifact (one key changed, one kept)",
                lambda i: a.call("PATCH", f"/artifacts/{A_TAGGED}", {"tags": {"build": str(i), "team": "x"}}),
                check=tag_write_check,
                note="GetItem of LATEST, then one TransactWriteItems: LATEST (live, tag counter), the changed row and "
                "the event; the summary is the LATEST written",
            ),
        ],
    )


# The groups in order; each runs in a fresh world. A builder returning None is reported as not measured.
GROUPS: tuple[Callable[[World, Config], Group], ...] = (
    uploads_group,
    publish_group,
    reads_group,
    deletes_group,
    alias_group,
    bounded_group,
    search_group,
    tags_group,
    guard_group,
)


def _make(size: int, tag: int) -> None:
    """Build (and hash) a blob before the timed call: content creation is not what is measured."""
    blob(size, tag)


def _ref(item: Blob) -> dict[str, Any]:
    return {"sha256": item.sha256, "size": item.size}


# Derived tables: (label, case key at the small size, case key at the big size), for both sides.
SIZES = (
    ("publish snapshot | versioned publish_artifact_version", "publish.small", "publish.big"),
    ("one-step publish with body", "publish_body.small", "publish_body.big"),
    ("PUT latest (moto: blob read back and hashed)", "put_latest.small", "put_latest.big"),
    ("put artifact, new content", "put.small", "put.big"),
)
# (label, case key, baseline case key), within one group, both without setup: Arca's handler time over one
# bare call of the same client, measured interleaved (bench.__main__._overhead).
RATIOS = (
    ("get version (resolve function) / bare GetItem", "get_version", "bare_get_item"),
    ("get version (resolve function) / bare Query, Limit 1", "get_version", "bare_probe"),
    ("resolve alias, no routing key / bare GetItem", "resolve.alias", "bare_get_item"),
    ("resolve alias, no routing key / bare Query, Limit 1", "resolve.alias", "bare_probe"),
    ("resolve alias, with routing key / bare GetItem", "resolve.alias.key", "bare_get_item"),
    ("resolve version number / bare GetItem", "resolve.number", "bare_get_item"),
    ("resolve LATEST / bare GetItem", "resolve.latest", "bare_get_item"),
    ("resolve alias pointing at LATEST / bare GetItem", "resolve.alias.latest", "bare_get_item"),
)
