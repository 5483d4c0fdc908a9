"""OCI's path grammar as Arca reads it: repository names, tags, references, digests (arca.protocols.oci.grammar)."""

from __future__ import annotations

import hashlib

import pytest

from arca.protocols.oci import Digest, OciError, RefKind
from arca.protocols.oci.grammar import is_tag, parse_digest, parse_name, parse_reference, parse_tag

HEX = hashlib.sha256(b"x").hexdigest()


@pytest.mark.parametrize("name", ["a", "demo/app", "a/b/c/d", "a.b_c__d-e--f", "x0/y1"])
def test_names_of_both_grammars_are_accepted(name: str) -> None:
    assert parse_name(name) == name


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("Demo", "must match"),  # upper case: OCI's grammar
        ("a..b", "must match"),  # Arca would take it, OCI's separators would not
        ("a/", "must match"),
        ("-a", "must match"),
        ("a/uploads/b", "reserved word"),  # OCI would take it, Arca reserves the word
        ("a/b/c/d/e/f/g/h/i", "more than 8 segments"),
        ("a" * 65, "must match"),  # one segment of Arca is 64 characters at most
    ],
)
def test_names_outside_either_grammar_are_name_invalid(name: str, why: str) -> None:
    with pytest.raises(OciError) as raised:
        parse_name(name)
    assert raised.value.code == "NAME_INVALID"
    assert raised.value.status == 400
    assert why in raised.value.message


@pytest.mark.parametrize("tag", ["v1", "V1.0-rc_1", "_x", "1.0", "a" * 128, "latest", "v007"])
def test_tags_follow_ocis_grammar(tag: str) -> None:
    assert parse_tag(tag) == tag
    assert is_tag(tag)


@pytest.mark.parametrize("tag", ["", ".dot", "-dash", "a" * 129, "bad:tag", "sp ace", "é"])
def test_tags_outside_ocis_grammar_are_tag_invalid(tag: str) -> None:
    with pytest.raises(OciError) as raised:
        parse_tag(tag)
    assert (raised.value.code, raised.value.status) == ("TAG_INVALID", 400)
    assert not is_tag(tag)


@pytest.mark.parametrize("tag", ["12345", "007", "LATEST"])
def test_a_tag_is_never_all_digits_nor_latest(tag: str) -> None:
    # Given what Arca reads as a version reference
    with pytest.raises(OciError) as raised:
        parse_tag(tag)
    # Then it is no tag
    assert raised.value.code == "TAG_INVALID"
    assert "version reference" in raised.value.message


def test_a_digest_is_sha256_of_64_lower_case_hex() -> None:
    assert parse_digest(f"sha256:{HEX}") == Digest(HEX)
    assert str(Digest.of(b"x")) == f"sha256:{HEX}"


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("sha256:abc", "64 lower-case hex"),
        (f"sha256:{HEX.upper()}", "64 lower-case hex"),
        (f"sha512:{HEX}{HEX}", "unsupported"),
        (f"md5:{HEX[:32]}", "unsupported"),
        ("nodigest", "not a digest"),
        (f"sha256:{HEX}:x", "not a digest"),
    ],
)
def test_other_digests_are_digest_invalid(value: str, why: str) -> None:
    with pytest.raises(OciError) as raised:
        parse_digest(value)
    assert (raised.value.code, raised.value.status) == ("DIGEST_INVALID", 400)
    assert why in raised.value.message


@pytest.mark.parametrize(
    ("value", "kind", "shown"),
    [
        (f"sha256:{HEX}", RefKind.DIGEST, f"sha256:{HEX}"),
        ("v1", RefKind.TAG, "v1"),
        ("7", RefKind.VERSION, "7"),
        ("LATEST", RefKind.LATEST, "LATEST"),
    ],
)
def test_a_reference_is_a_digest_a_tag_a_version_number_or_latest(value: str, kind: RefKind, shown: str) -> None:
    reference = parse_reference(value)
    assert reference.kind is kind
    assert str(reference) == shown


@pytest.mark.parametrize(
    ("value", "code"),
    [
        ("0", "TAG_INVALID"),
        ("1000000", "TAG_INVALID"),
        ("007", "TAG_INVALID"),
        (".x", "TAG_INVALID"),
        ("sha256:zz", "DIGEST_INVALID"),
    ],
)
def test_a_reference_of_no_kind_says_which_grammar_it_breaks(value: str, code: str) -> None:
    with pytest.raises(OciError) as raised:
        parse_reference(value)
    assert raised.value.code == code
