"""Key shapes (adapters/keys.py) and the route table's matcher, without DynamoDB."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arca.adapters import keys
from arca.domain.errors import ValidationError
from arca.routes import ROUTES, NoRouteError, canonical_path, match
from tests.unit.test_domain import names


def test_item_keys_follow_the_spec() -> None:
    assert keys.latest_key("my-app") == {"pk": "my-app", "sk": "LATEST"}
    assert keys.version_key("my-app", 1) == {"pk": "my-app", "sk": "000001"}
    assert keys.alias_key("my-app", "prod") == {"pk": "__my-app-alias", "sk": "prod"}
    assert keys.history_key("my-app", "prod", 3) == {"pk": "__my-app-history", "sk": "prod#000003"}


ALIASES = st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,8}", fullmatch=True).filter(lambda a: not a.isdigit())
MOMENTS = st.datetimes().map(lambda d: d.isoformat(timespec="milliseconds") + "Z")


@given(ALIASES, ALIASES, MOMENTS, st.integers(1, 999_999), MOMENTS)
def test_time_rows_sort_by_time_and_stay_out_of_every_alias_records_range(
    alias: str, other: str, written: str, revision: int, moment: str
) -> None:
    sk = keys.history_time_key("app", alias, written, revision)["sk"]
    assert keys.history_time_key("app", alias, written, revision)["pk"] == keys.history_pk("app")
    # within the alias's time range exactly when written at or before the moment
    low, high = keys.history_time_bounds(alias, moment)
    assert (low <= sk <= high) == (written <= moment)
    # never another alias's time row, never a record of any alias (history listings, revision_before)
    low, high = keys.history_time_bounds(other, "9999-12-31T23:59:59.999Z")
    assert (low <= sk <= high) == (alias == other)
    assert not sk.startswith(keys.history_prefix(other))
    below = (keys.history_key("app", other, 0)["sk"], keys.history_key("app", other, 999_999)["sk"])
    assert not below[0] <= sk <= below[1]


def test_folder_rows_follow_seed_001() -> None:
    assert keys.dir_keys("a/b/c") == [
        ({"pk": "__dir#", "sk": "a/"}, True),
        ({"pk": "__dir#a/", "sk": "b/"}, True),
        ({"pk": "__dir#a/b/", "sk": "c"}, False),
    ]


def test_version_range_excludes_latest() -> None:
    assert keys.FIRST_VERSION_SK < keys.version_key("a", 1)["sk"] <= keys.LAST_VERSION_SK < "LATEST"


def test_blob_prefix_of_an_artifact_never_contains_a_deeper_artifact() -> None:
    assert not keys.blob_key("a/b", "f" * 64).startswith(keys.blob_prefix("a"))


def test_every_partition_builder_is_registered_and_every_key_uses_one() -> None:
    # Given keys.py: its partition builders (`*_pk` functions, `*_PK` constants), the names its registries use, and
    # every key it spells (`pk`, `gsi1pk`, `gsi2pk`)
    tree = ast.parse(Path(keys.__file__).read_text())
    builders = {n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.endswith("_pk")}
    builders |= {
        t.id
        for n in tree.body
        if isinstance(n, ast.Assign)
        for t in n.targets
        if isinstance(t, ast.Name)
        if t.id.endswith("_PK")
    }
    registries = [
        n.value
        for n in tree.body
        if isinstance(n, ast.AnnAssign) and getattr(n.target, "id", "").endswith("PARTITIONS")
    ]
    registered = {n.id for registry in registries for n in ast.walk(registry) if isinstance(n, ast.Name)}
    spelled = [
        value
        for node in ast.walk(tree)
        if isinstance(node, ast.Dict)
        for key, value in zip(node.keys, node.values, strict=True)
        if isinstance(key, ast.Constant) and key.value in ("pk", "gsi1pk", "gsi2pk")
    ]
    # Then every builder is in a registry the collision tests walk
    assert len(registries) == 3
    assert builders <= registered, sorted(builders - registered)
    # And no key spells a partition of its own
    for value in spelled:
        called = value.func.id if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) else ""
        constant = value.id if isinstance(value, ast.Name) else ""
        assert called.endswith("_pk") or constant.endswith("_PK"), ast.unparse(value)


@given(names, names, st.text(min_size=1, max_size=30))
def test_no_two_partitions_of_the_table_ever_meet(a: str, b: str, other: str) -> None:
    # Given the partitions of two names, and those built from anything else (a caller, a folder prefix)
    mine = {kind: build(a) for kind, build in keys.NAME_PARTITIONS.items()}
    theirs = {build(b) for build in keys.NAME_PARTITIONS.values()}
    others = {build(other) for build in keys.OTHER_PARTITIONS.values()}
    # Then each kind of a name has a partition of its own, no other name's, and none built from anything else
    assert len(set(mine.values())) == len(mine)
    if a != b:
        assert not set(mine.values()) & theirs
    assert not set(mine.values()) & others


@given(st.text(min_size=1, max_size=20), st.text(min_size=1, max_size=20), st.text(min_size=1, max_size=20))
def test_the_search_index_partitions_of_different_kinds_never_meet(key: str, value: str, sha256: str) -> None:
    # Given a tag and a content, as each kind of the search index's partitions spells them
    found = {kind: build(key if kind != "content" else sha256, value) for kind, build in keys.INDEX_PARTITIONS.items()}
    # Then no two kinds share a partition
    assert len(set(found.values())) == len(found)


@given(st.dictionaries(st.sampled_from(["pk", "sk"]), st.text(min_size=1, max_size=20), min_size=2))
def test_tokens_round_trip_within_their_scope(key: dict[str, str]) -> None:
    token = keys.encode_token(key, "versions:a")
    assert keys.decode_token(token, "versions:a") == key
    with pytest.raises(ValidationError):
        keys.decode_token(token, "versions:b")


def test_a_token_is_refused_outside_its_partition_or_sort_key_range() -> None:
    # Given tokens of the right scope whose keys lie elsewhere
    inside = keys.encode_token({"pk": "app", "sk": "000007"}, "versions:app")
    other_partition = keys.encode_token({"pk": "__app-alias", "sk": "000007"}, "versions:app")
    out_of_range = keys.encode_token({"pk": "app", "sk": "LATEST"}, "versions:app")
    in_range = str.isdigit
    # When / Then
    assert keys.decode_token(inside, "versions:app", pk="app", within=in_range)["sk"] == "000007"
    for forged in (other_partition, out_of_range):
        with pytest.raises(ValidationError):
            keys.decode_token(forged, "versions:app", pk="app", within=in_range)


def test_a_token_carries_its_counters_and_refuses_forged_ones() -> None:
    # Given
    key = {"pk": "app", "sk": "000100"}
    token = keys.encode_token(key, "prune:app", {"live": 3})
    forged = keys.encode_token(key, "prune:app", {"live": -1})
    # When / Then
    assert keys.decode_token_state(token, "prune:app") == (key, {"live": 3})
    assert keys.decode_token_state(keys.encode_token(key, "prune:app"), "prune:app") == (key, {})
    with pytest.raises(ValidationError):
        keys.decode_token_state(forged, "prune:app")


@pytest.mark.parametrize(
    ("method", "path", "word"),
    [
        ("PUT", "/artifacts/team/latest/app/latest", "latest"),
        ("GET", "/artifacts/a/versions/b/versions", "versions"),
        ("GET", "/artifacts/latest/aliases", "latest"),
        ("DELETE", "/artifacts/a/history/b/aliases/prod", "history"),
    ],
)
def test_a_path_that_matches_only_with_a_reserved_word_in_the_name_names_the_word(
    method: str, path: str, word: str
) -> None:
    with pytest.raises(NoRouteError) as missing:
        match(method, path)
    assert missing.value.reserved == word


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/nope"),
        ("PATCH", "/artifacts/app/versions"),
        ("GET", "/artifacts/app/uploads"),
        ("POST", "/artifacts/app/events"),
        ("POST", "/artifacts/app/aliases/prod/rollout"),
    ],
)
def test_unknown_paths_and_wrong_methods_name_no_reserved_word(method: str, path: str) -> None:
    with pytest.raises(NoRouteError) as missing:
        match(method, path)
    assert missing.value.reserved is None


@pytest.mark.parametrize("bad", ["", "x", "!!!!", "eyJrIjogMX0", "e30"])
def test_garbage_tokens_are_refused(bad: str) -> None:
    with pytest.raises(ValidationError):
        keys.decode_token(bad, "s")


@pytest.mark.parametrize("route", ROUTES, ids=lambda r: f"{r.method} {r.path}")
@pytest.mark.parametrize("name", ["app", "payments/api/server", "a/b/c/d/e/f/g/h"])
def test_every_route_matches_its_own_paths_at_every_depth(route: object, name: str) -> None:
    path = route.path.replace("{name}", name).replace("{version}", "3").replace("{alias}", "prod")  # type: ignore[attr-defined]
    path = path.replace("{ref}", "prod")
    found, params = match(route.method, path)  # type: ignore[attr-defined]
    assert found == route
    if "{name}" in route.path:  # type: ignore[attr-defined]
        assert params["name"] == name
        assert "%2F" in canonical_path(path) or "/" not in name


def test_reserved_words_in_suffix_positions_are_parameters() -> None:
    # An alias may be called "history" or "content": fixed suffix lengths keep it unambiguous.
    route, params = match("GET", "/artifacts/a/b/aliases/history")
    assert route.operation == "get_alias" and params == {"name": "a/b", "alias": "history"}
    route, params = match("GET", "/artifacts/a/resolve/content")
    assert route.operation == "resolve" and params["ref"] == "content"


def test_unknown_paths_and_methods() -> None:
    with pytest.raises(NoRouteError) as unknown:
        match("GET", "/artifacts/a/versions/1/2/3")
    assert unknown.value.allowed == ()
    with pytest.raises(NoRouteError) as wrong:
        match("PATCH", "/artifacts/a/versions")
    assert set(wrong.value.allowed) == {"GET", "POST"}


def test_api_paths_expand_the_name_to_eight_levels() -> None:
    route = next(r for r in ROUTES if r.operation == "put_latest")
    paths = route.api_paths()
    assert paths[0] == "/artifacts/{n1}/latest"
    assert paths[-1] == "/artifacts/{n1}/{n2}/{n3}/{n4}/{n5}/{n6}/{n7}/{n8}/latest"


def test_a_route_below_a_family_is_served_by_its_greedy_resource_at_every_name_depth() -> None:
    # Given a route below a reserved word that is a family, and one of a family with no name
    versions = next(r for r in ROUTES if r.operation == "get_version")
    manifests = next(r for r in ROUTES if r.operation == "oci_get_manifest")
    # When their API Gateway resources are spelled
    # Then the first is the word's greedy resource at each of the eight name depths, the second one resource
    assert versions.api_paths()[0] == "/artifacts/{n1}/versions/{proxy+}"
    assert versions.api_paths()[-1] == "/artifacts/{n1}/{n2}/{n3}/{n4}/{n5}/{n6}/{n7}/{n8}/versions/{proxy+}"
    assert manifests.api_paths() == ["/v2/{proxy+}"]


@pytest.mark.parametrize(
    ("method", "path", "operation", "params"),
    [
        ("GET", "/v2/a/b/c/d/manifests/v1.0", "oci_get_manifest", {"name": "a/b/c/d", "reference": "v1.0"}),
        ("PUT", "/v2/app/manifests/sha256:ab", "oci_put_manifest", {"name": "app", "reference": "sha256:ab"}),
        ("POST", "/v2/team/app/blobs/uploads/", "oci_start_upload", {"name": "team/app"}),
        ("PATCH", "/v2/team/app/blobs/uploads/u1", "oci_patch_upload", {"name": "team/app", "upload": "u1"}),
        ("GET", "/v2/a/tags/b/tags/list", "oci_tags", {"name": "a/tags/b"}),
        (
            "GET",
            "/hf/org/model/resolve/main/sub/dir/w.bin",
            "hf_get_file",
            {"repo": "org/model", "revision": "main", "filename": "sub/dir/w.bin"},
        ),
        (
            "HEAD",
            "/hf/model/resolve/v2/config.json",
            "hf_head_file",
            {"repo": "model", "revision": "v2", "filename": "config.json"},
        ),
        ("GET", "/hf/api/models/org/model/revision/main", "hf_model_info", {"repo": "org/model", "revision": "main"}),
        ("GET", "/hf/api/models/m/tree/main/a/b", "hf_tree", {"repo": "m", "revision": "main", "path": "a/b"}),
        ("GET", "/hf/api/models/m/tree/main", "hf_tree_root", {"repo": "m", "revision": "main"}),
        # A revision whose %2F was decoded on the way still reaches the function (which then does not find it)
        ("GET", "/hf/api/models/a/b/revision/refs/pr/1", "hf_model_info", {"repo": "a/b", "revision": "refs/pr/1"}),
        (
            "HEAD",
            "/hf/a/resolve/refs/pr/1/f.bin",
            "hf_head_file",
            {"repo": "a", "revision": "refs", "filename": "pr/1/f.bin"},
        ),
        ("PUT", "/artifacts/a/b/consumers/ecs:prod.api", "put_consumer", {"name": "a/b", "consumer": "ecs:prod.api"}),
    ],
)
def test_family_paths_read_their_parameters_of_several_segments(
    method: str, path: str, operation: str, params: dict[str, str]
) -> None:
    # When a path of a route family is matched, and folded as the function routes it
    route, found = match(method, path)
    # Then it is the route named, with each parameter read whole, and one path segment each for Powertools
    assert (route.operation, found) == (operation, params)
    folded = canonical_path(path).strip("/").split("/")
    assert len(folded) == len(route.segments)


def test_a_path_no_route_matches_in_a_family_goes_to_the_family_function_of_its_method() -> None:
    # Given paths below families that no route has
    # When they are matched
    with pytest.raises(NoRouteError) as versions:
        match("GET", "/artifacts/a/b/versions/1/nothing/here")
    with pytest.raises(NoRouteError) as oci:
        match("DELETE", "/v2/a/b/whatever")
    with pytest.raises(NoRouteError) as outside:
        match("PUT", "/artifacts/a/versions/1")  # the versions family has no PUT: API Gateway has no method
    # Then API Gateway hands the first two to the function of the family's method, which answers; not the third
    assert (versions.value.function, oci.value.function, outside.value.function) == ("resolve", "publish", None)


@given(names, names)
def test_uploads_partitions_never_collide_with_another_artifacts_partitions(a: str, b: str) -> None:
    if a == b:
        return
    others = {keys.artifact_pk(b), keys.alias_pk(b), keys.history_pk(b), keys.events_pk(b), keys.uploads_pk(b)}
    assert keys.uploads_pk(a) not in others


def test_an_upload_id_names_the_content_and_its_layout_and_nothing_else() -> None:
    # Given the content's sha256 and the sha256 of its part digests
    sha, layout = "a" * 64, "b" * 64
    upload = keys.upload_id(sha, layout)
    # Then the id parses back, sits under the content's prefix, and its object is beside the single-PUT blob
    assert keys.parse_upload_id(upload) == (sha, layout)
    assert upload.startswith(keys.upload_prefix(sha))
    assert keys.multipart_blob_key("app", sha, layout).startswith(keys.blob_prefix("app"))
    assert keys.multipart_blob_key("app", sha, layout) != keys.blob_key("app", sha)
    # And anything else is a 400 naming the id
    for bad in ("", sha, f"{sha}.", f"{sha.upper()}.{layout}", f"{sha}.{layout}.x"):
        with pytest.raises(ValidationError) as refused:
            keys.parse_upload_id(bad)
        assert refused.value.field == "id"
