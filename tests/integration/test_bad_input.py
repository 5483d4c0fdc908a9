"""Bad input gets a 4xx naming the field, in the spec's error shape, and writes nothing."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from arca.adapters import keys
from tests.helpers import HandlerApi, sha256
from tests.integration.conftest import snapshot

GOOD = sha256(b"stored")
# Tokens with the right scope whose key leaves the listing: another partition, another alias's history.
FORGED = keys.encode_token({"pk": "other", "sk": "000001"}, "versions:app:desc:False")
FORGED_RANGE = keys.encode_token({"pk": "app", "sk": "LATEST"}, "versions:app:desc:False")
FORGED_NAMES = keys.encode_token({"pk": "__dir#", "sk": "app"}, "artifacts::None")
FORGED_EVENTS = keys.encode_token({"pk": "__other-events", "sk": "0000000000000001-00000000"}, "events:app")
DEEP = "[" * 1000 + "]" * 1000
# Tokens of the right scope and partition whose key DynamoDB refuses: an empty value, one over its size limit.
LONG = "x" * 1025
REFUSED_KEYS = [
    (
        "/artifacts/app/versions",
        None,
        keys.encode_token({"pk": "app", "sk": "0000001" + LONG}, "versions:app:desc:False"),
    ),
    ("/artifacts", None, keys.encode_token({"pk": "__names", "sk": ""}, "artifacts::None")),
    ("/artifacts", None, keys.encode_token({"pk": "__names", "sk": LONG}, "artifacts::None")),
    ("/artifacts", {"delimiter": "/"}, keys.encode_token({"pk": "__dir#", "sk": ""}, "artifacts::/")),
    ("/artifacts", {"delimiter": "/"}, keys.encode_token({"pk": "__dir#", "sk": "\u00e9" * 513}, "artifacts::/")),
    ("/artifacts/app/aliases", None, keys.encode_token({"pk": "__app-alias", "sk": ""}, "aliases:app")),
    ("/artifacts/app/aliases", None, keys.encode_token({"pk": "__app-alias", "sk": LONG}, "aliases:app")),
    ("/artifacts/app/events", None, keys.encode_token({"pk": "__app-events", "sk": ""}, "events:app")),
    ("/artifacts/app/events", None, keys.encode_token({"pk": "__app-events", "sk": LONG}, "events:app")),
    (
        "/versions",
        {"sha256": GOOD},
        keys.encode_token({"pk": "app", "sk": "000001", "gsi1sk": ""}, f"search:sha256:{GOOD}"),
    ),
    (
        "/versions",
        {"sha256": GOOD},
        keys.encode_token({"pk": "app", "sk": LONG, "gsi1sk": "app#000001"}, f"search:sha256:{GOOD}"),
    ),
]
CASES: list[tuple[str, str, Any, dict[str, str] | None, int, str]] = [
    # method, path, JSON body (str = raw), query, status, field
    ("POST", "/artifacts/app/uploads", {}, None, 400, "sha256"),
    ("POST", "/artifacts/app/uploads", {"sha256": "XYZ", "size": 1}, None, 400, "sha256"),
    ("POST", "/artifacts/app/uploads", {"sha256": GOOD, "size": -1}, None, 400, "size"),
    ("POST", "/artifacts/app/uploads", {"sha256": GOOD, "size": "6"}, None, 400, "size"),
    ("POST", "/artifacts/app/uploads", {"sha256": GOOD, "size": True}, None, 400, "size"),
    ("POST", "/artifacts/app/uploads", {"sha256": GOOD, "size": 6, "colour": "red"}, None, 400, "colour"),
    ("POST", "/artifacts/app/uploads", {"sha256": GOOD, "size": 6 * 1024**3}, None, 413, "size"),
    ("POST", "/artifacts/new-one/uploads", {"sha256": GOOD, "size": 6 * 1024**3}, None, 413, "size"),
    # Multipart uploads: the layout S3 would refuse, and ids that are not upload ids.
    ("POST", "/artifacts/app/uploads", {"sha256": GOOD, "size": 6, "part_size": 6}, None, 400, "parts"),
    ("POST", "/artifacts/app/uploads", {"sha256": GOOD, "size": 6, "parts": [GOOD]}, None, 400, "part_size"),
    ("POST", "/artifacts/app/uploads", {"sha256": GOOD, "size": 6, "part_size": 6, "parts": GOOD}, None, 400, "parts"),
    ("POST", "/artifacts/app/uploads", {"sha256": GOOD, "size": 6, "part_size": 6, "parts": [1]}, None, 400, "parts.0"),
    (
        "POST",
        "/artifacts/app/uploads",
        {"sha256": GOOD, "size": 6, "part_size": "6", "parts": [GOOD]},
        None,
        400,
        "part_size",
    ),
    (
        "POST",
        "/artifacts/app/uploads",
        {"sha256": GOOD, "size": 12 * 1024**2, "part_size": 1024**2, "parts": [GOOD] * 12},
        None,
        400,
        "part_size",
    ),
    (
        "POST",
        "/artifacts/app/uploads",
        {"sha256": GOOD, "size": 6 * 1024**4, "part_size": 5 * 1024**3, "parts": [GOOD] * 1229},
        None,
        413,
        "size",
    ),
    ("GET", "/artifacts/app/uploads/nope", None, None, 400, "id"),
    ("POST", f"/artifacts/app/uploads/{GOOD}/complete", None, None, 400, "id"),
    ("DELETE", f"/artifacts/app/uploads/{GOOD.upper()}.{GOOD}", None, None, 400, "id"),
    ("PUT", "/artifacts/app/latest", "{not json", None, 400, "body"),
    ("PUT", "/artifacts/app/latest", [1, 2], None, 400, "body"),
    ("PUT", "/artifacts/app/latest", {"sha256": GOOD}, None, 400, "size"),
    ("PUT", "/artifacts/app/latest", {"sha256": GOOD, "size": 6, "content_type": "zip"}, None, 400, "content_type"),
    ("PUT", "/artifacts/app/latest", {"sha256": GOOD, "size": 6, "metadata": {"k": 1}}, None, 400, "metadata.k"),
    ("PUT", "/artifacts/app/latest", {"sha256": GOOD, "size": 6, "metadata": {"Bad Key": "v"}}, None, 400, "metadata"),
    ("PUT", "/artifacts/app/latest", {"sha256": GOOD, "size": 5}, None, 400, "size"),
    ("PUT", "/artifacts/app/latest", {"sha256": sha256(b"other"), "size": 6}, None, 409, "sha256"),
    ("POST", "/artifacts/app/versions", {"sha256": GOOD}, None, 400, "size"),
    ("POST", "/artifacts/app/versions", {"size": 6}, None, 400, "sha256"),
    ("POST", "/artifacts/app/versions", {"metadata": {"a": "b"}}, None, 400, "sha256"),
    ("POST", "/artifacts/app/versions", {"force": "yes"}, None, 400, "force"),
    ("POST", "/artifacts/app/prune", {}, None, 400, "keep_last"),
    ("POST", "/artifacts/app/prune", {"keep_last": -1}, None, 400, "keep_last"),
    ("POST", "/artifacts/app/prune", {"keep_last": 1, "dry_run": "true"}, None, 400, "dry_run"),
    ("POST", "/artifacts/app/prune", {"keep_last": 1, "older_than_days": 1.5}, None, 400, "older_than_days"),
    ("PUT", "/artifacts/app/retention", {}, None, 400, "keep_last"),
    ("PUT", "/artifacts/app/retention", {"keep_last": 0}, None, 400, "keep_last"),
    ("PUT", "/artifacts/app/retention", {"keep_last": 1, "keep_days": "7"}, None, 400, "keep_days"),
    ("PUT", "/artifacts/app/retention", {"keep_last": 1, "keep_tags": "env:prod"}, None, 400, "keep_tags"),
    ("PUT", "/artifacts/app/retention", {"keep_last": 1, "keep_tags": ["=v"]}, None, 400, "keep_tags.0"),
    ("PUT", "/artifacts/app/retention", {"keep_last": 1, "rollback_window": -1}, None, 400, "rollback_window"),
    ("PUT", "/artifacts/app/retention", {"keep_last": 1, "expire_after_days": 1.5}, None, 400, "expire_after_days"),
    ("PUT", "/artifacts/Bad_Name/retention", {"keep_last": 1}, None, 400, "name"),
    ("GET", "/artifacts/app/retention/preview", None, {"limit": "0"}, 400, "limit"),
    ("GET", "/artifacts/app/retention/preview", None, {"next_token": "forged"}, 400, "next_token"),
    ("POST", "/artifacts/app/retention/apply", {"next_token": 5}, None, 400, "next_token"),
    ("POST", "/artifacts/app/retention/apply", {"next_token": "forged"}, None, 400, "next_token"),
    ("POST", "/artifacts/app/retention/apply", {"other": 1}, None, 400, "other"),
    ("GET", "/artifacts/app/versions", None, {"limit": "0"}, 400, "limit"),
    ("GET", "/artifacts/app/versions", None, {"limit": "many"}, 400, "limit"),
    ("GET", "/artifacts/app/versions", None, {"order": "sideways"}, 400, "order"),
    ("GET", "/artifacts", None, {"prefix": "UPPER"}, 400, "prefix"),
    ("GET", "/artifacts", None, {"delimiter": "|"}, 400, "delimiter"),
    ("POST", "/artifacts/Bad_Name/versions", None, None, 400, "name"),
    ("POST", "/artifacts/-dash/versions", None, None, 400, "name"),
    ("POST", "/artifacts/a/b/c/d/e/f/g/h/i/versions", None, None, 400, "name"),
    ("PUT", f"/artifacts/{'x' * 65}/latest", {"sha256": GOOD, "size": 6}, None, 400, "name"),
    ("DELETE", "/artifacts/app/versions/0", None, None, 400, "version"),
    ("DELETE", "/artifacts/app/versions/abc", None, None, 400, "version"),
    ("DELETE", "/artifacts/app/versions/1000000", None, None, 400, "version"),
    ("DELETE", "/artifacts/app/versions/LATEST", None, None, 400, "version"),
    ("POST", "/artifacts/app/versions/x/restore", None, None, 400, "version"),
    ("GET", "/artifacts/app/versions/-1", None, None, 400, "version"),
    ("GET", "/artifacts/app/versions/00001", None, None, 400, "version"),
    ("DELETE", "/artifacts/app/versions/01", None, None, 400, "version"),
    # Creating an artifact with no version yet (PUT /artifacts/{name}, decision 111)
    ("PUT", "/artifacts/Bad_Name", {}, None, 400, "name"),
    ("PUT", "/artifacts/a/b/c/d/e/f/g/h/i", {}, None, 400, "name"),
    ("PUT", "/artifacts/new", {"description": "two\nlines"}, None, 400, "description"),
    ("PUT", "/artifacts/new", {"description": "d\ud800"}, None, 400, "description"),
    ("PUT", "/artifacts/new", {"description": "d" * 1025}, None, 400, "description"),
    ("PUT", "/artifacts/new", {"description": 5}, None, 400, "description"),
    ("PUT", "/artifacts/new", {"tags": {"Bad": "v"}}, None, 400, "tags.Bad"),
    ("PUT", "/artifacts/new", {"tags": {"env": "v" * 257}}, None, 400, "tags.env"),
    ("PUT", "/artifacts/new", {"tags": {"env": None}}, None, 400, "tags.env"),
    ("PUT", "/artifacts/new", {"tags": {f"k{i}": "v" for i in range(51)}}, None, 400, "tags"),
    ("PUT", "/artifacts/new", {"tags": ["env"]}, None, 400, "tags"),
    ("PUT", "/artifacts/new", {"sha256": GOOD}, None, 400, "sha256"),
    ("PUT", "/artifacts/new", "[]", None, 400, "body"),
    ("PUT", "/artifacts/app", {"description": "exists"}, None, 409, "name"),
    ("PATCH", "/artifacts/app/versions/001", {"tags": {"a": "b"}}, None, 400, "version"),
    ("GET", "/artifacts/app/resolve/01", None, None, 400, "ref"),
    ("PUT", "/artifacts/team/latest/app/latest", {"sha256": GOOD, "size": 6}, None, 400, "name"),
    ("POST", "/artifacts/app/versions/x/versions", None, None, 400, "name"),
    ("PUT", "/artifacts/latest/aliases/prod", {"version": 1}, None, 400, "name"),
    ("GET", "/artifacts/app/resolve/prod/versions", None, None, 400, "name"),
    ("PUT", "/artifacts/a//app/latest", {"sha256": GOOD, "size": 6}, None, 400, "name"),
    ("PUT", "/artifacts//app/latest", {"sha256": GOOD, "size": 6}, None, 400, "name"),
    ("POST", "/artifacts/app//versions", None, None, 400, "name"),
    ("PUT", "/artifacts/app/latest", DEEP, None, 400, "body"),
    ("PUT", "/artifacts/app/latest", '{"metadata": ' + '{"a": ' * 1000 + "1" + "}" * 1001, None, 400, "body"),
    ("POST", "/artifacts/app/versions", DEEP, None, 400, "body"),
    ("PUT", "/artifacts/app/aliases/prod", DEEP, None, 400, "body"),
    (
        "PUT",
        "/artifacts/app/latest",
        {"sha256": GOOD, "size": 6, "content_type": "t\u00e9xt/plain"},
        None,
        400,
        "content_type",
    ),
    (
        "PUT",
        "/artifacts/app/latest",
        {"sha256": GOOD, "size": 6, "content_type": "text/\u0440lain"},
        None,
        400,
        "content_type",
    ),
    ("GET", "/artifacts/app/resolve/prod", None, {"at": "9999-12-31T23:59:59-12:00"}, 400, "at"),
    ("GET", "/artifacts/app/resolve/prod", None, {"at": "0001-01-01T00:00:00+14:00"}, 400, "at"),
    ("GET", "/artifacts/app/versions", None, {"next_token": FORGED}, 400, "next_token"),
    ("GET", "/artifacts/app/versions", None, {"next_token": FORGED_RANGE}, 400, "next_token"),
    ("GET", "/artifacts", None, {"next_token": FORGED_NAMES}, 400, "next_token"),
    ("GET", "/artifacts/app/events", None, {"after": "yesterday"}, 400, "after"),
    ("GET", "/artifacts/app/events", None, {"after": "1" * 16}, 400, "after"),
    ("GET", "/artifacts/app/events", None, {"after": "1" * 16 + "-ABCDEF01"}, 400, "after"),
    ("GET", "/artifacts/app/events", None, {"limit": "0"}, 400, "limit"),
    ("GET", "/artifacts/app/events", None, {"next_token": "garbage"}, 400, "next_token"),
    ("GET", "/artifacts/app/events", None, {"next_token": FORGED_EVENTS}, 400, "next_token"),
    ("GET", "/artifacts/Bad_Name/events", None, None, 400, "name"),
    # Tags and search.
    ("PATCH", "/artifacts/app/versions/1", {"tags": {"Bad": "v"}}, None, 400, "tags.Bad"),
    ("PATCH", "/artifacts/app/versions/1", {"tags": {"_x": "v"}}, None, 400, "tags._x"),
    ("PATCH", "/artifacts/app/versions/1", {"tags": {"k" * 129: "v"}}, None, 400, f"tags.{'k' * 129}"),
    ("PATCH", "/artifacts/app/versions/1", {"tags": {"a=b": "v"}}, None, 400, "tags.a=b"),
    ("PATCH", "/artifacts/app/versions/1", {"tags": {"env": "v" * 257}}, None, 400, "tags.env"),
    ("PATCH", "/artifacts/app/versions/1", {"tags": {"env": 1}}, None, 400, "tags.env"),
    ("PATCH", "/artifacts/app/versions/1", {"tags": {"env": "a\ud800"}}, None, 400, "tags.env"),
    ("PATCH", "/artifacts/app", {"tags": {"env": "\udfff"}}, None, 400, "tags.env"),
    ("PATCH", "/artifacts/app", {"description": "d\ud800"}, None, 400, "description"),
    ("PUT", "/artifacts/app/aliases/prod", {"version": 1, "description": "\ud800"}, None, 400, "description"),
    ("PATCH", "/artifacts/app/versions/1", {"tags": {f"k{i}": "v" for i in range(51)}}, None, 400, "tags"),
    ("PATCH", "/artifacts/app/versions/1", {"tags": ["env"]}, None, 400, "tags"),
    ("PATCH", "/artifacts/app/versions/1", {}, None, 400, "tags"),
    ("PATCH", "/artifacts/app/versions/1", {"tags": {}, "metadata": {}}, None, 400, "metadata"),
    ("PATCH", "/artifacts/app/versions/LATEST", {"tags": {"a": "b"}}, None, 400, "version"),
    ("PATCH", "/artifacts/app", {"tags": {"Bad": "v"}}, None, 400, "tags.Bad"),
    ("PATCH", "/artifacts/app", {"description": "d" * 1025}, None, 400, "description"),
    ("PATCH", "/artifacts/app", {"description": 5}, None, 400, "description"),
    ("PATCH", "/artifacts/app", {"sha256": GOOD}, None, 400, "sha256"),
    ("GET", "/artifacts/app/versions", None, {"tag": "novalue"}, 400, "tag"),
    ("GET", "/artifacts/app/versions", None, {"tag": "Bad:v"}, 400, "tag"),
    ("GET", "/artifacts/app/versions", None, {"sha256": "XYZ"}, 400, "sha256"),
    ("GET", "/artifacts/app/versions", None, {"created_after": "yesterday"}, 400, "created_after"),
    ("GET", "/artifacts/app/versions", None, {"created_before": "2026-01-01T00:00:00"}, 400, "created_before"),
    ("GET", "/artifacts/app/versions", None, {"tag": "a:b", "next_token": FORGED}, 400, "next_token"),
    ("GET", "/versions", None, None, 400, "sha256"),
    ("GET", "/versions", None, {"sha256": GOOD, "tag": "a:b"}, 400, "tag"),
    ("GET", "/versions", None, {"sha256": "abc"}, 400, "sha256"),
    ("GET", "/versions", None, {"sha256": GOOD, "next_token": FORGED}, 400, "next_token"),
    ("GET", "/artifacts", None, {"tag": "a:b", "prefix": "a"}, 400, "tag"),
    ("GET", "/artifacts", None, {"tag": "=b"}, 400, "tag"),
    ("GET", "/artifacts/app/resolve/sha256:abc", None, None, 400, "ref"),
    ("GET", "/artifacts/app/versions/sha256:" + "G" * 64, None, None, 400, "version"),
]
CASES += [
    ("GET", path, None, {**(query or {}), "next_token": token}, 400, "next_token")
    for path, query, token in REFUSED_KEYS
]
# Attestations: a type and either inline content (a JSON object) or a reference to an uploaded blob.
ATTESTATIONS = "/artifacts/app/versions/1/attestations"
CASES += [
    ("POST", ATTESTATIONS, {"content": {}}, None, 400, "type"),
    ("POST", ATTESTATIONS, {"type": "Upper", "content": {}}, None, 400, "type"),
    ("POST", ATTESTATIONS, {"type": "t" * 129, "content": {}}, None, 400, "type"),
    ("POST", ATTESTATIONS, {"type": "a b", "content": {}}, None, 400, "type"),
    ("POST", ATTESTATIONS, {"type": "sbom", "content": "text"}, None, 400, "content"),
    ("POST", ATTESTATIONS, {"type": "sbom"}, None, 400, "body"),
    ("POST", ATTESTATIONS, {"type": "sbom", "sha256": GOOD}, None, 400, "body"),
    ("POST", ATTESTATIONS, {"type": "sbom", "content": {}, "sha256": GOOD, "size": 6}, None, 400, "body"),
    ("POST", ATTESTATIONS, {"type": "sbom", "sha256": "XYZ", "size": 6}, None, 400, "sha256"),
    ("POST", ATTESTATIONS, {"type": "sbom", "sha256": GOOD, "size": -1}, None, 400, "size"),
    ("POST", ATTESTATIONS, {"type": "sbom", "sha256": GOOD, "size": 6, "media_type": "nope"}, None, 400, "media_type"),
    ("POST", ATTESTATIONS, {"type": "sbom", "content": {}, "extra": 1}, None, 400, "extra"),
    ("POST", ATTESTATIONS, "{not json", None, 400, "body"),
    ("POST", ATTESTATIONS, {"type": "sbom", "content": {"x": "a\ud800"}}, None, 400, "content"),
    ("POST", ATTESTATIONS, {"type": "sbom", "content": {"\udfff": 1}}, None, 400, "content"),
    ("POST", ATTESTATIONS, {"type": "sbom", "content": {"x": "a" * 262144}}, None, 413, "content"),
    ("POST", "/artifacts/app/versions/0/attestations", {"type": "sbom", "content": {}}, None, 400, "version"),
    ("POST", "/artifacts/Bad/versions/1/attestations", {"type": "sbom", "content": {}}, None, 400, "name"),
    ("GET", ATTESTATIONS, None, {"type": "Bad Type"}, 400, "type"),
    ("GET", ATTESTATIONS, None, {"limit": "0"}, 400, "limit"),
    ("GET", ATTESTATIONS, None, {"next_token": FORGED}, 400, "next_token"),
    ("GET", f"{ATTESTATIONS}/xyz", None, None, 400, "attestation_id"),
    ("GET", "/artifacts/app/versions/LATEST/attestations", None, None, 400, "version"),
]
# Links: the body's target is a name like any other; the link's own name is a path name. An artifact cannot
# become a link (409 naming it) and a link cannot point at a missing artifact (404 naming the target).
CASES += [
    ("PUT", "/artifacts/mirror/link", {}, None, 400, "target"),
    ("PUT", "/artifacts/mirror/link", {"target": 7}, None, 400, "target"),
    ("PUT", "/artifacts/mirror/link", {"target": ""}, None, 400, "target"),
    ("PUT", "/artifacts/mirror/link", {"target": "Bad_Name"}, None, 400, "target"),
    ("PUT", "/artifacts/mirror/link", {"target": "team/versions/app"}, None, 400, "target"),
    ("PUT", "/artifacts/mirror/link", {"target": "a//b"}, None, 400, "target"),
    ("PUT", "/artifacts/mirror/link", {"target": "app", "force": True}, None, 400, "force"),
    ("PUT", "/artifacts/mirror/link", "{not json", None, 400, "body"),
    ("PUT", "/artifacts/mirror/link", DEEP, None, 400, "body"),
    ("PUT", "/artifacts/Mirror/link", {"target": "app"}, None, 400, "name"),
    ("PUT", "/artifacts/a//b/link", {"target": "app"}, None, 400, "name"),
    ("PUT", "/artifacts/mirror/link", {"target": "nothing-here"}, None, 404, "target"),
    ("PUT", "/artifacts/app/link", {"target": "app"}, None, 409, "target"),
    ("DELETE", "/artifacts/Bad_Name/link", None, None, 400, "name"),
    # Guarded promotion: policies, promotions and their decisions.
    ("PUT", "/artifacts/app/aliases/prod/policy", {"approvals": 6}, None, 400, "approvals"),
    ("PUT", "/artifacts/app/aliases/prod/policy", {"approvals": True}, None, 400, "approvals"),
    ("PUT", "/artifacts/app/aliases/prod/policy", {"require_tags": {"Bad Key": "v"}}, None, 400, "require_tags"),
    ("PUT", "/artifacts/app/aliases/prod/policy", {"require_attestations": ["X"]}, None, 400, "require_attestations.0"),
    ("PUT", "/artifacts/app/aliases/prod/policy", {"require_soak": {"alias": "qa"}}, None, 400, "require_soak.seconds"),
    (
        "PUT",
        "/artifacts/app/aliases/prod/policy",
        {"require_soak": {"alias": "a~b", "seconds": 1}},
        None,
        400,
        "require_soak.alias",
    ),
    ("PUT", "/artifacts/app/aliases/prod/policy", {"allowed_principals": [""]}, None, 400, "allowed_principals.0"),
    ("PUT", "/artifacts/app/aliases/prod/policy", {"colour": "red"}, None, 400, "colour"),
    ("PUT", "/artifacts/app/aliases/a~b/policy", {}, None, 400, "alias"),
    ("POST", "/artifacts/app/aliases/prod/promotions", {}, None, 400, "version"),
    ("POST", "/artifacts/app/aliases/prod/promotions", {"version": "1"}, None, 400, "version"),
    (
        "POST",
        "/artifacts/app/aliases/prod/promotions",
        {"version": 1, "rollout": {"steps": [50, 10], "interval_seconds": 1}},
        None,
        400,
        "rollout.steps",
    ),
    ("POST", "/artifacts/app/aliases/prod/promotions", {"version": 9}, None, 409, "version"),
    ("GET", "/artifacts/app/aliases/prod/promotions", None, {"state": "maybe"}, 400, "state"),
    ("GET", "/artifacts/app/aliases/prod/promotions/not-an-id", None, None, 400, "promotion_id"),
    ("GET", "/artifacts/app/aliases/prod/promotions/" + "0" * 24, None, None, 404, "promotion_id"),
    ("POST", "/artifacts/app/aliases/prod/promotions/" + "0" * 24 + "/approve", {"why": 1}, None, 400, "why"),
    ("POST", "/artifacts/app/aliases/prod/promotions/" + "0" * 24 + "/reject", None, None, 404, "promotion_id"),
    (
        "PUT",
        "/artifacts/app/aliases/prod/policy",
        {"allowed_principals": ["arn:aws:iam::1:user/a/"]},
        None,
        400,
        "allowed_principals.0",
    ),
    (
        "PUT",
        "/artifacts/app/aliases/prod/policy",
        {"allowed_principals": ["*", "Arn:aws:iam::1:user/a"]},
        None,
        400,
        "allowed_principals.1",
    ),
    # Control characters in free text: alarm names, reasons, descriptions.
    ("PUT", "/artifacts/app/aliases/prod", {"version": 1, "description": "two\nlines"}, None, 400, "description"),
    ("PUT", "/artifacts/app/aliases/prod", {"version": 1, "reason": "nul\u0000"}, None, 400, "reason"),
    ("POST", "/artifacts/app/aliases/prod/rollback", {"reason": "del\u007f"}, None, 400, "reason"),
    ("PATCH", "/artifacts/app", {"description": "cr\r"}, None, 400, "description"),
    ("POST", "/artifacts/app/aliases/prod/promotions", {"version": 1, "reason": "\u001b[31mred"}, None, 400, "reason"),
    (
        "POST",
        "/artifacts/app/aliases/prod/promotions",
        {"version": 1, "rollout": {"steps": [10], "interval_seconds": 1, "alarms": ["ok", "tab\there"]}},
        None,
        400,
        "rollout.alarms.1",
    ),
    (
        "POST",
        "/artifacts/app/aliases/prod/promotions/" + "0" * 24 + "/approve",
        {"reason": "\u0001"},
        None,
        400,
        "reason",
    ),
    ("POST", "/artifacts/app/aliases/prod/promotions/" + "0" * 24 + "/reject", {"reason": "\n"}, None, 400, "reason"),
]

# Consumer leases: the consumer's id, the version (a live one of the artifact), the time to live and the labels are
# checked before anything is written; the listing's filter and paging too.
LEASE = "/artifacts/app/consumers/ecs:prod.api"
CASES += [
    ("PUT", "/artifacts/app/consumers/Ecs:prod", {"version": 1}, None, 400, "consumer"),
    ("PUT", "/artifacts/app/consumers/ecs%23prod", {"version": 1}, None, 400, "consumer"),
    ("PUT", "/artifacts/app/consumers/" + "c" * 129, {"version": 1}, None, 400, "consumer"),
    ("DELETE", "/artifacts/app/consumers/-x", None, None, 400, "consumer"),
    ("PUT", LEASE, {}, None, 400, "version"),
    ("PUT", LEASE, {"version": "1"}, None, 400, "version"),
    ("PUT", LEASE, {"version": 0}, None, 400, "version"),
    ("PUT", LEASE, {"version": 1, "ttl_seconds": 59}, None, 400, "ttl_seconds"),
    ("PUT", LEASE, {"version": 1, "ttl_seconds": 2_592_001}, None, 400, "ttl_seconds"),
    ("PUT", LEASE, {"version": 1, "ttl_seconds": 60.5}, None, 400, "ttl_seconds"),
    ("PUT", LEASE, {"version": 1, "labels": ["a"]}, None, 400, "labels"),
    ("PUT", LEASE, {"version": 1, "labels": {"Bad Key": "v"}}, None, 400, "labels.Bad Key"),
    ("PUT", LEASE, {"version": 1, "labels": {"k": "v" * 257}}, None, 400, "labels.k"),
    ("PUT", LEASE, {"version": 1, "labels": {"k": "two\nlines"}}, None, 400, "labels.k"),
    ("PUT", LEASE, {"version": 1, "labels": {f"k{i}": "v" for i in range(21)}}, None, 400, "labels"),
    ("PUT", LEASE, {"version": 1, "labels": {"k": 1}}, None, 400, "labels.k"),
    ("PUT", LEASE, {"version": 1, "colour": "red"}, None, 400, "colour"),
    ("PUT", LEASE, "{not json", None, 400, "body"),
    ("PUT", LEASE, {"version": 9}, None, 404, "version"),
    ("GET", "/artifacts/app/consumers", None, {"version": "0"}, 400, "version"),
    ("GET", "/artifacts/app/consumers", None, {"version": "x"}, 400, "version"),
    ("GET", "/artifacts/app/consumers", None, {"limit": "0"}, 400, "limit"),
    ("GET", "/artifacts/app/consumers", None, {"next_token": "nope"}, 400, "next_token"),
]

# Trees: `files` (inline) or `tree` (an uploaded canonical manifest), never with a blob's fields; the path rules.
_F = {"path": "a.txt", "sha256": GOOD, "size": 6}
CASES += [
    (method, path, body, None, status, field)
    for method, path in (("POST", "/artifacts/app/versions"), ("PUT", "/artifacts/app/latest"))
    for body, status, field in (
        ({"files": [_F], "sha256": GOOD, "size": 6}, 400, "files"),
        ({"files": [_F], "tree": GOOD}, 400, "tree"),
        ({"tree": GOOD, "size": 6}, 400, "size"),
        ({"files": [_F], "size": 6}, 400, "size"),
        ({"files": "a.txt"}, 400, "files"),
        ({"files": [{**_F, "path": "/abs"}]}, 400, "files[0].path"),
        ({"files": [{**_F, "path": "a/../b"}]}, 400, "files[0].path"),
        ({"files": [{**_F, "path": "a//b"}]}, 400, "files[0].path"),
        ({"files": [{**_F, "path": "tab\there"}]}, 400, "files[0].path"),
        ({"files": [{**_F, "path": "x" * 1025}]}, 400, "files[0].path"),
        ({"files": [{**_F, "path": ""}]}, 400, "files[0].path"),
        ({"files": [_F, _F]}, 400, "files[1].path"),
        ({"files": [_F, {**_F, "path": "a.txt/b"}]}, 400, "files[0].path"),
        ({"files": [{**_F, "sha256": "XYZ"}]}, 400, "files[0].sha256"),
        ({"files": [{**_F, "size": -1}]}, 400, "files[0].size"),
        ({"files": [{**_F, "size": "6"}]}, 400, "files[0].size"),
        ({"files": [{**_F, "colour": "red"}]}, 400, "files[0].colour"),
        ({"files": [{**_F, "content_type": "not a type"}]}, 400, "files[0].content_type"),
        ({"files": [{"path": "a", "sha256": GOOD, "size": 6}] * 10_001}, 400, "files"),
        ({"files": [{**_F, "size": 7}]}, 400, "files[0].size"),
        ({"files": [{**_F, "path": "b.txt", "sha256": sha256(b"never")}]}, 409, "files"),
        ({"tree": "XYZ"}, 400, "tree"),
        ({"tree": GOOD}, 400, "tree"),
        ({"tree": sha256(b"never")}, 409, "tree"),
        ({"files": [_F], "file_types": GOOD}, 400, "file_types"),
        ({"sha256": GOOD, "size": 6, "file_types": GOOD}, 400, "file_types"),
        ({"file_types": GOOD}, 400, "file_types"),
        ({"tree": GOOD, "file_types": "XYZ"}, 400, "file_types"),
    )
]


@pytest.mark.parametrize(
    ("method", "path", "body", "query", "status", "field"),
    CASES,
    ids=[f"{m} {p[:40]} {str(b)[:20]} {str(q)[:60]} {f}" for m, p, b, q, _, f in CASES],
)
def test_bad_input_is_refused_naming_the_field_and_writes_nothing(
    api: HandlerApi,
    aws: SimpleNamespace,
    method: str,
    path: str,
    body: Any,
    query: dict[str, str] | None,
    status: int,
    field: str,
) -> None:
    # Given an artifact with a version and an uploaded blob of 6 bytes
    api.publish("app", b"stored")
    before = snapshot(aws)
    # When
    if isinstance(body, str):
        reply = api.call(method, path, raw=body, query=query)
    else:
        reply = api.call(method, path, body, query=query)
    # Then
    assert reply.status == status, reply.body
    error = reply.error
    assert error["field"] == field
    assert field.split(".")[0] in error["message"] or error["field"] in ("name", "version")
    assert set(error) >= {"code", "message", "request_id"}
    assert error["request_id"]
    assert snapshot(aws) == before


@pytest.mark.parametrize("key", ["", "k" * 129, "naïve", "tab\there"])
@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/artifacts/app/versions", None),
        ("PUT", "/artifacts/app/latest", {"sha256": GOOD, "size": 6}),
        ("PUT", "/artifacts/app/aliases/prod", {"version": 1}),
        ("POST", "/artifacts/app/aliases/prod/rollback", None),
        ("POST", "/artifacts/app/prune", {"keep_last": 0}),
        ("PUT", "/artifacts/new", {"description": "d"}),
    ],
)
def test_bad_idempotency_key_is_a_400_naming_the_header_and_writes_nothing(
    api: HandlerApi, aws: SimpleNamespace, key: str, method: str, path: str, body: Any
) -> None:
    # Given
    api.publish("app", b"stored")
    before = snapshot(aws)
    # When
    reply = api.call(method, path, body, headers={"Idempotency-Key": key})
    # Then
    assert reply.status == 400, reply.body
    assert reply.error["field"] == "Idempotency-Key"
    assert snapshot(aws) == before


def test_a_history_token_holding_a_key_dynamodb_refuses_is_a_400(api: HandlerApi, aws: SimpleNamespace) -> None:
    # Given an alias with a history
    api.publish("app", b"stored")
    api.call("PUT", "/artifacts/app/aliases/prod", {"version": 1})
    before = snapshot(aws)
    forged = keys.encode_token({"pk": "__app-history", "sk": "prod#" + LONG}, "history:app:prod")
    # When
    reply = api.call("GET", "/artifacts/app/aliases/prod/history", query={"next_token": forged})
    # Then
    assert reply.status == 400, reply.body
    assert reply.error["field"] == "next_token"
    assert snapshot(aws) == before


ROLLOUT_OK: dict[str, Any] = {"version": 2, "steps": [10, 50], "interval_seconds": 60}
ROLLOUT_CASES: list[tuple[Any, str]] = [
    # body (str = raw), field
    ({}, "version"),
    ({**ROLLOUT_OK, "version": "2"}, "version"),
    ({**ROLLOUT_OK, "version": 0}, "version"),
    ({**ROLLOUT_OK, "version": "LATEST"}, "version"),
    ({**ROLLOUT_OK, "alarms": ["line\nbreak"]}, "alarms.0"),
    ({**ROLLOUT_OK, "reason": "bell\u0007"}, "reason"),
    ({k: v for k, v in ROLLOUT_OK.items() if k != "steps"}, "steps"),
    ({**ROLLOUT_OK, "steps": []}, "steps"),
    ({**ROLLOUT_OK, "steps": [50, 10]}, "steps"),
    ({**ROLLOUT_OK, "steps": [10, 10]}, "steps"),
    ({**ROLLOUT_OK, "steps": [0, 10]}, "steps.0"),
    ({**ROLLOUT_OK, "steps": [10, 100]}, "steps.1"),
    ({**ROLLOUT_OK, "steps": [10, 50.5]}, "steps.1"),
    ({**ROLLOUT_OK, "steps": [True]}, "steps.0"),
    ({**ROLLOUT_OK, "steps": list(range(1, 23))}, "steps"),
    ({**ROLLOUT_OK, "steps": "10,50"}, "steps"),
    ({**ROLLOUT_OK, "interval_seconds": 0}, "interval_seconds"),
    ({**ROLLOUT_OK, "interval_seconds": 86_401}, "interval_seconds"),
    ({**ROLLOUT_OK, "interval_seconds": "60"}, "interval_seconds"),
    ({k: v for k, v in ROLLOUT_OK.items() if k != "interval_seconds"}, "interval_seconds"),
    ({**ROLLOUT_OK, "alarms": "errors"}, "alarms"),
    ({**ROLLOUT_OK, "alarms": [""]}, "alarms.0"),
    ({**ROLLOUT_OK, "alarms": ["x" * 256]}, "alarms.0"),
    ({**ROLLOUT_OK, "alarms": [f"a{i}" for i in range(101)]}, "alarms"),
    ({**ROLLOUT_OK, "reason": "x" * 513}, "reason"),
    ({**ROLLOUT_OK, "weight": 5}, "weight"),
    ("{not json", "body"),
    (DEEP, "body"),
]


@pytest.mark.parametrize(("body", "field"), ROLLOUT_CASES, ids=[f"{str(b)[:40]} {f}" for b, f in ROLLOUT_CASES])
def test_bad_rollout_input_is_refused_naming_the_field_and_writes_nothing(
    api: HandlerApi, aws: SimpleNamespace, body: Any, field: str
) -> None:
    # Given an alias on version 1, and a version 2 a rollout could move it to
    api.publish("app", b"stored")
    api.publish("app", b"second")
    assert api.call("PUT", "/artifacts/app/aliases/prod", {"version": 1}).status == 201
    before = snapshot(aws)
    # When
    path = "/artifacts/app/aliases/prod/rollout"
    reply = api.call("PUT", path, raw=body) if isinstance(body, str) else api.call("PUT", path, body)
    # Then
    assert reply.status == 400, reply.body
    assert reply.error["field"] == field
    assert field.split(".")[0] in reply.error["message"]
    assert snapshot(aws) == before


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("PUT", "/artifacts/app/aliases/a~b/rollout"),
        ("GET", "/artifacts/app/aliases/-x/rollout"),
        ("DELETE", "/artifacts/app/aliases/LATEST/rollout"),
        ("PUT", "/artifacts/App/aliases/prod/rollout"),
        ("DELETE", "/artifacts/app/rollout/aliases/prod/rollout"),
    ],
)
def test_bad_rollout_path_is_refused_naming_the_field(
    api: HandlerApi, aws: SimpleNamespace, method: str, path: str
) -> None:
    # Given
    api.publish("app", b"stored")
    before = snapshot(aws)
    # When
    reply = api.call(method, path, ROLLOUT_OK if method == "PUT" else None)
    # Then
    assert reply.status == 400, reply.body
    assert reply.error["field"] in ("alias", "name")
    assert snapshot(aws) == before
