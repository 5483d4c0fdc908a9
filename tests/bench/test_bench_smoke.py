"""`make bench` cannot rot: the whole harness, every group and table, at one call per row and tiny sizes."""

from __future__ import annotations

import re
from collections import Counter

from bench.__main__ import run
from bench.cases import Config
from bench.harness import publish_check
from bench.world import KIB

TINY = Config(
    iterations=1,
    big_iterations=1,
    big_put_iterations=1,
    write_iterations=1,
    big_size=64 * KIB,
    list_versions=3,
    deleted_versions=30,
    alias_revisions=30,
    prune_versions=30,
    page=2,
    prune_batch=2,
    max_publish_ratio=None,  # one call per size says nothing about a ratio
    warmup=0,
    isolate_groups=False,  # one moto world for all groups: each new one costs about a second of client setup
    cold_start_runs=1,  # one pair of processes: the section runs; its figures mean nothing at n=1
    search_versions=30,
    search_artifacts=3,
    events_publishes=3,  # the local stack starts and the section runs; three delays say little
    events_idle_seconds=0.5,
    retention_versions=60,
    retention_revisions=12,
    consumer_iterations=2,
    resolver_resolves=200,
    protocol_iterations=1,
    tree_files=(3, 12),
    tree_iterations=1,
    tree_client_files=4,  # the local stack starts, `arca publish` runs twice; the second must upload one file
)


def test_bench_runs_every_group_and_holds_the_publish_rules() -> None:
    # When
    outcome = run(TINY, progress=lambda line: None)
    # Then
    assert outcome.failures == [], outcome.failures
    for title in (
        "Uploads and LATEST",
        "Publish",
        "Reads",
        "Delete, restore, prune",
        "Bounded requests",
        "Tags and search",
        "Tags",
        "Handler overhead",
        "Events",
        "Retention",
        "Consumers",
        "Protocols",
        "Trees",
    ):
        assert f"## {title}" in outcome.text
    assert "## Publish and size: 1 KiB vs 64 KiB" in outcome.text
    publish = outcome.results["publish.small"].arca
    assert publish is not None
    assert publish.count("DynamoDB", "TransactWriteItems") == (1, 1)
    assert "S3 writes 0" in outcome.text
    versioned = outcome.results["publish.big"].versioned
    assert versioned is not None
    assert versioned.count("S3", "CopyObject") == (1, 1)
    # signing costs one KMS Sign more than the same publish unsigned, and resolve still reads one item
    signed, unsigned = outcome.results["publish.signed"].arca, outcome.results["publish.unsigned"].arca
    assert signed is not None and unsigned is not None
    assert (signed.count("KMS", "Sign"), unsigned.count("KMS", "Sign")) == ((1, 1), (0, 0))
    assert signed.count("DynamoDB", "TransactWriteItems") == unsigned.count("DynamoDB", "TransactWriteItems") == (1, 1)
    # a read through a link: one call more than the direct one, an alias in two single-item reads
    direct, linked = outcome.results["resolve.alias"].arca, outcome.results["resolve.alias.link"].arca
    assert direct is not None and linked is not None
    assert direct.count("DynamoDB", "Query") == (1, 1)
    assert linked.count("DynamoDB", "Query") == (2, 2)
    assert "resolve alias through a link" in outcome.text
    # the protocols' rows: an OCI push, pull and tags list, a Hub snapshot and one download
    for row in ("OCI push, 2 files", "OCI pull by tag", "OCI tags list", "HF snapshot_download", "HF hf_hub_download"):
        assert f"| {row}" in outcome.text


def test_publish_check_names_what_a_publish_must_not_do() -> None:
    # Given
    two_transactions_and_a_copy = Counter({("DynamoDB", "TransactWriteItems"): 2, ("S3", "CopyObject"): 1})
    # When
    problem = publish_check(two_transactions_and_a_copy)
    # Then
    assert problem is not None
    assert "exactly one DynamoDB TransactWriteItems, made 2" in problem
    assert "CopyObject" in problem
    assert publish_check(Counter({("DynamoDB", "TransactWriteItems"): 1, ("DynamoDB", "GetItem"): 1})) is None


def test_the_large_transfers_bench_runs_at_a_tiny_size() -> None:
    # When the large-transfers section runs on 16 MiB (two parts of 8 MiB)
    from bench.transfers import section

    text, _ = section(16)
    # Then it has its table rows, the calls per upload and the resumed upload's figures
    for transfer, parallel in (("publish", 1), ("publish", 8), ("download", 1), ("download", 8)):
        assert re.search(rf"\| {transfer}\s+\|\s+{parallel} \|", text), text
    assert "Calls per upload:" in text and "Killed half-way:" in text
    assert re.search(r"^Checks: ", text, re.MULTILINE), text


def test_the_large_transfers_checks_hold_a_download_to_its_upload_and_to_parallel_parts() -> None:
    from bench.transfers import checks

    def run(publish: float, download_1: float, download_8: float) -> list[str]:
        return checks({("publish", "8"): publish, ("download", "1"): download_1, ("download", "8"): download_8})

    assert run(10.0, 8.0, 6.0) == []
    slow = "a download with --parallel 8 took 1.25 times as long as its upload (at most 1.2)"
    assert run(10.0, 14.0, 12.5) == [slow]
    assert run(10.0, 5.0, 6.0) == ["a download with --parallel 8 was not faster than with --parallel 1"]


def test_the_trees_section_holds_its_checks_at_a_small_size() -> None:
    # Given trees of 3 and 12 files, in process (no CLI rows)
    import contextlib

    from bench import trees
    from bench.__main__ import _Discard
    from bench.world import world

    # When
    with world() as w, contextlib.redirect_stdout(_Discard()):  # type: ignore[type-var]
        text, rows, runs = trees.section(w, (3, 12), 2, 0)
    # Then a publish by files or by reference makes one transaction for the version and one for its counts
    for key in ("publish.3", "publish.12", "publish.tree"):
        assert rows[key].measurement.count("DynamoDB", "TransactWriteItems") == (2, 2), key
    assert rows["publish.12"].measurement.count("S3", "PutObject") == (1, 1)  # the manifest, nothing else
    assert rows["publish.tree"].measurement.count("S3", "PutObject") == (0, 0)
    # the second publish with one file changed reads the newest tree (a resolve and its manifest), asks about and
    # uploads the changed content alone, then publishes
    republish = rows["republish"]
    assert republish.requests == [3]
    assert republish.measurement.count("S3", "PutObject (presigned, by client)") == (1, 1)
    assert republish.measurement.count("S3", "GetObject (presigned, by client)") == (1, 1)
    # resolving the tree is one read; one file one read and one S3 call (two when the manifest is read)
    assert rows["resolve.tree"].measurement.describe_calls() == "1: DynamoDB GetItem 1"
    assert rows["resolve.file"].measurement.describe_calls() == "2: DynamoDB GetItem 1; S3 HeadObject 1"
    assert rows["resolve.file.cold"].measurement.count("S3", "GetObject") == (1, 1)
    assert rows["list.page"].measurement.describe_calls() == "1: DynamoDB GetItem 1"
    assert runs == []
    assert "| resolve the tree (12 files)" in text


def test_the_trees_checks_name_what_a_publish_or_a_read_must_not_do() -> None:
    from bench.trees import publish_check, reads_check

    # a publish of 250 files: one transaction for the version, three for the counts, the manifest put
    publish = publish_check(250)
    assert publish(Counter({("DynamoDB", "TransactWriteItems"): 4, ("S3", "PutObject"): 1})) is None
    problem = publish(Counter({("DynamoDB", "TransactWriteItems"): 2, ("S3", "CopyObject"): 1}))
    assert problem is not None
    assert "must make 4 TransactWriteItems, made 2" in problem and "CopyObject" in problem
    # a read: one DynamoDB read and at most so many S3 calls
    assert reads_check(0)(Counter({("DynamoDB", "GetItem"): 1})) is None
    assert reads_check(0)(Counter({("DynamoDB", "GetItem"): 1, ("S3", "GetObject"): 1})) is not None
    assert reads_check(1)(Counter({("DynamoDB", "GetItem"): 1, ("DynamoDB", "Query"): 1})) is not None
