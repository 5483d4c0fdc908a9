"""Scoped access: the exact execute-api ARNs of each prefix grant, and that a prefix reaches no other name."""

from __future__ import annotations

import re
from typing import Any

import pytest
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Match, Template

from arca.routes import ROUTES
from infra.access import (
    alias_manager_paths,
    check_prefix,
    consumer_paths,
    creator_paths,
    link_manager_paths,
    publisher_paths,
    reader_paths,
)
from tests.infra import stages

API = "arn:aws:execute-api:eu-west-1:123456789012:${RestApi}/prod"


def _render(value: Any) -> str:
    """A Fn::Join of the synthesized template as text: `${AWS::Partition}`, `${RestApi}` for the API's Ref."""
    if isinstance(value, str):
        return value
    if "Ref" in value:
        return "${" + ("RestApi" if value["Ref"].startswith("ApiRestApi") else value["Ref"]) + "}"
    separator, parts = value["Fn::Join"]
    return str(separator).join(_render(p) for p in parts)


@pytest.fixture(scope="module")
def granted() -> dict[str, list[str]]:
    """Four roles on the prod stage, one grant each on `team-a`; their policies' resources, rendered."""
    app, arca = stages.build("prod")
    service = arca.service
    roles = {kind: iam.Role(service, f"Team{kind}", assumed_by=iam.AccountRootPrincipal()) for kind in range(4)}
    service.access.grant_read(roles[0], "team-a")
    service.access.grant_publish(roles[1], "team-a")
    service.access.grant_alias_management(roles[2], "team-a")
    service.access.grant_link_management(roles[3], "team-a")
    template = Template.from_stack(service).to_json()
    found: dict[str, list[str]] = {}
    for resource in template["Resources"].values():
        if resource["Type"] != "AWS::IAM::Policy":
            continue
        role = resource["Properties"]["Roles"][0]["Ref"]
        if not role.startswith("Team"):
            continue
        (statement,) = resource["Properties"]["PolicyDocument"]["Statement"]
        assert statement["Action"] == "execute-api:Invoke"
        assert statement["Effect"] == "Allow"
        found[role[:5]] = sorted(_render(r) for r in statement["Resource"])
    del app
    return found


def test_reader_grant_is_every_get_under_the_prefix_and_no_registry_wide_route(granted: dict[str, list[str]]) -> None:
    assert granted["Team0"] == sorted(
        [
            f"{API}/GET/artifacts/team-a",
            f"{API}/GET/artifacts/team-a/*",
            f"{API}/GET/health",
            f"{API}/GET/openapi.json",
            f"{API}/GET/signing-key",
            f"{API}/GET/hf/api/models/team-a",
            f"{API}/GET/hf/api/models/team-a/*",
            f"{API}/GET/hf/team-a/*",
            f"{API}/HEAD/hf/team-a/*",
            f"{API}/GET/v2",
            f"{API}/GET/v2/team-a/*",
            f"{API}/HEAD/v2/team-a/*",
        ]
    )


def test_publisher_grant_is_the_publish_routes_and_never_a_link_or_alias_write(granted: dict[str, list[str]]) -> None:
    expected = [f"{API}/DELETE/artifacts/team-a", f"{API}/DELETE/artifacts/team-a/*"]
    expected += [f"{API}/PATCH/artifacts/team-a", f"{API}/PATCH/artifacts/team-a/*"]
    for method, suffix in (
        ("POST", "uploads"),
        ("POST", "uploads/*/complete"),
        ("POST", "versions"),
        ("POST", "versions/*/restore"),
        ("POST", "versions/*/attestations"),
        ("POST", "prune"),
        ("POST", "retention/apply"),
        ("PUT", "latest"),
        ("PUT", "retention"),
    ):
        expected += [f"{API}/{method}/artifacts/team-a/{suffix}", f"{API}/{method}/artifacts/team-a/*/{suffix}"]
    for method, suffix in (
        ("POST", "blobs/uploads"),
        ("PATCH", "blobs/uploads/*"),
        ("PUT", "blobs/uploads/*"),
        ("PUT", "manifests/sha256:*"),
    ):
        expected += [f"{API}/{method}/v2/team-a/{suffix}", f"{API}/{method}/v2/team-a/*/{suffix}"]
    expected += [f"{API}/DELETE/v2/team-a/*"]
    assert granted["Team1"] == sorted(expected)


def test_alias_manager_and_link_manager_grants(granted: dict[str, list[str]]) -> None:
    assert granted["Team2"] == sorted(
        f"{API}/{method}/artifacts/team-a{below}/{suffix}"
        for method, suffix in (
            ("PUT", "aliases/*"),
            ("DELETE", "aliases/*"),
            ("POST", "aliases/*/rollback"),
            ("POST", "aliases/*/promotions"),
            ("POST", "aliases/*/promotions/*"),
        )
        for below in ("", "/*")
    ) + sorted([f"{API}/PUT/v2/team-a/manifests/*", f"{API}/PUT/v2/team-a/*/manifests/*"])
    assert granted["Team3"] == sorted(
        f"{API}/{method}/artifacts/team-a{below}/link" for method in ("PUT", "DELETE") for below in ("", "/*")
    )


def _allows(grant: list[tuple[str, str]], method: str, path: str) -> bool:
    """IAM's matching of a resource ARN: `*` is any characters (`/` included), `?` one; the whole ARN."""
    return any(
        re.fullmatch(re.escape(f"{m}/{p}").replace(r"\*", ".*").replace(r"\?", "."), f"{method}/{path}")
        for m, p in grant
    )


OUTSIDE = [
    ("GET", "artifacts/team-ab"),
    ("GET", "v2/team-ab/manifests/v1"),
    ("PUT", "v2/team-ab/manifests/sha256:ab"),
    ("GET", "artifacts/team-ab/versions"),
    ("GET", "artifacts/team-a-old/resolve/prod"),
    ("GET", "artifacts/team/a/versions"),
    ("GET", "artifacts"),
    ("GET", "versions"),
    ("POST", "artifacts/team-ab/versions"),
    ("PUT", "artifacts/team-ab/latest"),
    ("DELETE", "artifacts/team-ab"),
    ("PUT", "artifacts/team-ab/aliases/prod"),
    ("PUT", "artifacts/shared/link"),
]


@pytest.mark.parametrize(("method", "path"), OUTSIDE)
def test_no_prefix_grant_reaches_a_name_outside_the_prefix(method: str, path: str) -> None:
    for grant in (reader_paths("team-a"), publisher_paths("team-a"), alias_manager_paths("team-a")):
        assert not _allows(grant, method, path)
    assert not _allows(link_manager_paths("team-a"), method, path)
    assert not _allows(consumer_paths("team-a"), method, path)
    assert not _allows(creator_paths("team-a"), method, path)


def test_creating_an_artifact_is_a_grant_of_its_own_that_the_publisher_lacks() -> None:
    # IAM cannot tell `PUT artifacts/team-a/x` from `PUT artifacts/team-a/x/aliases/prod`: no publisher may hold it
    for name in ("team-a", "team-a/fraud", "team-a/x/y"):
        assert _allows(creator_paths("team-a"), "PUT", f"artifacts/{name}")
        assert not _allows(publisher_paths("team-a"), "PUT", f"artifacts/{name}")
    assert not _allows(creator_paths("team-a"), "PUT", "artifacts/team-ab")
    assert _allows(creator_paths("team-a"), "PUT", "artifacts/team-a/x/aliases/prod")  # as documented


GRANTS = (reader_paths, publisher_paths, alias_manager_paths, link_manager_paths, consumer_paths, creator_paths)

INSIDE = [
    (reader_paths, "GET", "artifacts/team-a"),
    (reader_paths, "GET", "v2"),
    (reader_paths, "HEAD", "v2/team-a/api/blobs/sha256:ab"),
    (publisher_paths, "PATCH", "v2/team-a/blobs/uploads/0123"),
    (publisher_paths, "PUT", "v2/team-a/api/manifests/sha256:ab"),
    (alias_manager_paths, "PUT", "v2/team-a/api/manifests/v1"),
    (reader_paths, "GET", "artifacts/team-a/api/resolve/prod/content"),
    (publisher_paths, "POST", "artifacts/team-a/api/versions"),
    (publisher_paths, "DELETE", "artifacts/team-a/api"),
    (publisher_paths, "POST", "artifacts/team-a/versions/3/restore"),
    (alias_manager_paths, "PUT", "artifacts/team-a/api/aliases/prod"),
    (alias_manager_paths, "PUT", "artifacts/team-a/api/aliases/prod/rollout"),
    (publisher_paths, "PATCH", "artifacts/team-a/api/versions/3"),
    (reader_paths, "GET", "artifacts/team-a/api/events"),
    (link_manager_paths, "PUT", "artifacts/team-a/mirror/link"),
    (consumer_paths, "PUT", "artifacts/team-a/api/consumers/ecs:prod.api"),
    (consumer_paths, "DELETE", "artifacts/team-a/api/consumers/ecs:prod.api"),
    (consumer_paths, "GET", "artifacts/team-a/api/consumers"),
    (consumer_paths, "GET", "artifacts/team-a/api/resolve/prod"),
]


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "artifacts/team-a/api/versions"),
        ("PUT", "artifacts/team-a/api/aliases/prod"),
        ("DELETE", "artifacts/team-a/api"),
        ("DELETE", "artifacts/team-a/api/versions/3"),
        ("GET", "artifacts/team-a/api/versions"),
        ("PUT", "artifacts/team-a/api/link"),
    ],
)
def test_a_consumer_may_lease_and_resolve_and_nothing_else(method: str, path: str) -> None:
    assert not _allows(consumer_paths("team-a"), method, path)


def test_a_grant_on_one_consumer_id_cannot_take_or_release_another_consumers_lease() -> None:
    grant = consumer_paths("team-a", consumer="ecs:prod.api")
    for method in ("PUT", "DELETE"):
        assert _allows(grant, method, "artifacts/team-a/api/consumers/ecs:prod.api")
        assert _allows(grant, method, "artifacts/team-a/consumers/ecs:prod.api")
        assert not _allows(grant, method, "artifacts/team-a/api/consumers/ecs:prod.web")
    assert _allows(grant, "GET", "artifacts/team-a/api/consumers")
    assert _allows(grant, "GET", "artifacts/team-a/api/resolve/prod")


@pytest.mark.parametrize("consumer", ["", "Ecs:prod", "a*", "a/b", "-x"])
def test_a_consumer_grant_names_a_consumer_id(consumer: str) -> None:
    with pytest.raises(ValueError, match="consumer"):
        consumer_paths("team-a", consumer=consumer)


def test_readers_read_their_repos_through_the_hugging_face_routes_and_no_other() -> None:
    grant = reader_paths("team-a")
    for path in (
        "hf/api/models/team-a/revision/prod",
        "hf/api/models/team-a/model/tree/prod",
        "hf/team-a/model/resolve/prod/config.json",
        "hf/team-a/resolve/3/weights/model.bin",
    ):
        assert _allows(grant, "GET", path), path
    assert _allows(grant, "HEAD", "hf/team-a/model/resolve/prod/config.json")
    for path in ("hf/api/models/team-ab/revision/prod", "hf/team-b/model/resolve/prod/a", "hf/api/models/x/y"):
        assert not _allows(grant, "GET", path), path


def test_a_prefix_named_api_never_reaches_other_repos_through_the_hugging_face_routes() -> None:
    grant = reader_paths("api")
    assert _allows(grant, "GET", "hf/api/models/api/x/revision/prod")
    assert not _allows(grant, "GET", "hf/api/models/team-b/revision/prod")
    assert not _allows(grant, "GET", "hf/team-b/resolve/prod/a")


def test_readers_cannot_lease_or_release() -> None:
    for method in ("PUT", "DELETE"):
        assert not _allows(reader_paths("team-a"), method, "artifacts/team-a/api/consumers/ecs:prod.api")


@pytest.mark.parametrize(("paths", "method", "path"), INSIDE)
def test_each_grant_reaches_its_routes_under_the_prefix(paths: Any, method: str, path: str) -> None:
    assert _allows(paths("team-a"), method, path)


def test_a_tagged_oci_push_moves_an_alias_so_a_publisher_alone_cannot() -> None:
    assert not _allows(publisher_paths("team-a"), "PUT", "v2/team-a/api/manifests/v1")
    assert not _allows(reader_paths("team-a"), "PUT", "v2/team-a/api/manifests/sha256:ab")


def test_publishers_and_alias_managers_cannot_create_links() -> None:
    for grant in (publisher_paths("team-a"), alias_manager_paths("team-a"), reader_paths("team-a")):
        assert not _allows(grant, "PUT", "artifacts/team-a/mirror/link")


def test_listing_every_name_is_granted_only_on_request() -> None:
    assert not _allows(reader_paths("team-a"), "GET", "artifacts")
    assert _allows(reader_paths("team-a", list_names=True), "GET", "artifacts")


@pytest.mark.parametrize("prefix", ["", "team-a/", "team-*", "Team", "team-a/versions", "a//b", "*"])
def test_a_prefix_must_be_a_name(prefix: str) -> None:
    with pytest.raises(ValueError, match="prefix"):
        check_prefix(prefix)


@pytest.mark.parametrize("stage", ["dev", "prod"])
def test_the_example_reader_role_is_off_by_default_and_nag_clean_when_on(stage: str) -> None:
    # Given the stage without and with the example flag (dev: no account or region, as an offline synth)
    plain = stages.synth(stage)
    example = stages.synth(stage, example_read_prefix="team-a")
    # Then only the second has the role, reading exactly under the prefix, with no unsuppressed finding
    assert "ExampleReaderRoleArn" not in plain.service["Outputs"]
    template = example.service
    assert "ExampleReaderRoleArn" in template["Outputs"]
    (policy,) = [
        r
        for r in template["Resources"].values()
        if r["Type"] == "AWS::IAM::Policy" and r["Properties"]["Roles"][0]["Ref"].startswith("ExampleReader")
    ]
    resources = sorted(_render(r) for r in policy["Properties"]["PolicyDocument"]["Statement"][0]["Resource"])
    assert any(r.endswith(f"/{stage}/GET/artifacts/team-a/*") for r in resources)
    annotations = stages.annotations(example.stage.service)
    assert annotations.find_error("*", Match.string_like_regexp("AwsSolutions-.*")) == []
    assert annotations.find_warning("*", Match.string_like_regexp("AwsSolutions-.*")) == []


# Registry-wide routes: IAM cannot narrow them to a prefix (module docstring of infra/access.py).
REGISTRY_WIDE = {("GET", "/artifacts"), ("GET", "/versions")}


# The placeholders of later features (501) get their grants with the feature.
SERVED = [r for r in ROUTES if not r.stub]


@pytest.mark.parametrize("route", SERVED, ids=[f"{r.method} {r.path}" for r in SERVED])
def test_every_route_on_a_name_is_in_a_prefix_grant(route: Any) -> None:
    # Given a route of the route table, on a name under the prefix
    path = route.path.lstrip("/")
    for param, value in (("{name}", "team-a/api"), ("{version}", "3"), ("{alias}", "prod"), ("{ref}", "prod")):
        path = path.replace(param, value)
    # When the four grants are asked whether they allow it
    granting = [paths.__name__ for paths in GRANTS if _allows(paths("team-a"), route.method, path)]
    # Then a route on a name is in one at least (a new route cannot be forgotten; a publisher's DELETE under the
    # prefix also covers the deletes of aliases, rollouts and links there), a registry-wide one in none
    if (route.method, route.path) in REGISTRY_WIDE or "{name}" not in route.path:
        assert granting in ([], ["reader_paths"]), granting
    else:
        assert granting, (route.method, path)
