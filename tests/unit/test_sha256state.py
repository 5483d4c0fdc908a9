"""The resumable SHA-256 (OpenSSL's SHA256_CTX through ctypes) against hashlib: every length, every cut, every
state saved and resumed in a fresh object, as the background verification of multipart content does."""

from __future__ import annotations

import hashlib
import os
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arca.adapters.sha256state import STATE_BYTES, ResumableSha256, StateError


def test_the_empty_input_and_known_vectors_hash_as_the_standard_says() -> None:
    assert ResumableSha256().hexdigest() == hashlib.sha256(b"").hexdigest()
    abc = ResumableSha256()
    abc.update(b"abc")
    assert abc.hexdigest() == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


@pytest.mark.parametrize("length", [*range(0, 200), 1023, 1024, 1025, 65_535, 65_536, 1_000_003])
def test_every_length_around_the_block_size_hashes_as_hashlib(length: int) -> None:
    data = random.Random(length).randbytes(length)
    hasher = ResumableSha256()
    hasher.update(data)
    assert hasher.hexdigest() == hashlib.sha256(data).hexdigest()


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=4096), st.lists(st.integers(min_value=0, max_value=4096), max_size=8))
def test_a_state_saved_at_any_cut_and_resumed_elsewhere_gives_hashlibs_digest(data: bytes, cuts: list[int]) -> None:
    # Given the data cut anywhere, each piece hashed by a fresh object resumed from the saved state
    state: bytes | None = None
    start = 0
    for cut in [*sorted({min(c, len(data)) for c in cuts}), len(data)]:
        hasher = ResumableSha256(state)
        hasher.update(data[start:cut])
        state, start = hasher.state(), cut
        assert len(state) == STATE_BYTES
    # Then the digest is the whole data's, and reading it leaves the state as it was
    resumed = ResumableSha256(state)
    assert resumed.hexdigest() == hashlib.sha256(data).hexdigest()
    assert resumed.state() == state


def test_megabytes_in_uneven_pieces_across_many_resumes() -> None:
    data = os.urandom(9 * 1024 * 1024 + 7)
    state, start, rng = None, 0, random.Random(7)
    while start < len(data):
        end = min(len(data), start + rng.randint(1, 2 * 1024 * 1024))
        hasher = ResumableSha256(state)
        hasher.update(data[start:end])
        state, start = hasher.state(), end
    assert ResumableSha256(state).hexdigest() == hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize("bad", [b"", b"x" * (STATE_BYTES - 1), b"\xff" * STATE_BYTES])
def test_bytes_that_are_not_a_state_are_refused(bad: bytes) -> None:
    with pytest.raises(StateError):
        ResumableSha256(bad)
