"""Tree manifests computed independently of Arca's code: a small reference implementation of RFC 8785 written from
the RFC's text, a Hypothesis strategy of valid trees, and fixed vectors whose bytes and digests were produced by
another implementation (the `rfc8785` package on PyPI) and checked in. Shared by the server's and the client's
tests, so both are held to the same bytes."""

from __future__ import annotations

import hashlib
from typing import Any

from hypothesis import strategies as st


def jcs(value: Any) -> str:
    """RFC 8785 of JSON values made of objects, arrays, strings and integers (what a tree manifest holds)."""
    if isinstance(value, bool) or value is None:
        return {True: "true", False: "false", None: "null"}[value]
    if isinstance(value, int):
        assert abs(value) < 2**53, "I-JSON: an integer beyond 2^53 has no exact ECMAScript number"
        return str(value)  # ECMAScript's Number.prototype.toString of an integer: its decimal digits
    if isinstance(value, str):
        return _quote(value)
    if isinstance(value, list):
        return "[" + ",".join(jcs(item) for item in value) + "]"
    # 3.2.3: members sorted by their names as arrays of UTF-16 code units
    members = sorted(value.items(), key=lambda kv: kv[0].encode("utf-16-be"))
    return "{" + ",".join(f"{_quote(k)}:{jcs(v)}" for k, v in members) + "}"


_SHORT = {0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r", 0x22: '\\"', 0x5C: "\\\\"}


def _quote(text: str) -> str:
    """3.2.2.2: the two-character escapes, \\u00xx (lower-case hex) for other controls, everything else as is."""
    out = []
    for char in text:
        code = ord(char)
        if code in _SHORT:
            out.append(_SHORT[code])
        elif code < 0x20:
            out.append(f"\\u{code:04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def reference_manifest(files: list[tuple[str, str, int]]) -> bytes:
    """The tree manifest of (path, sha256, size) triples as the API defines it, built without Arca's code."""
    ordered = sorted(files, key=lambda f: f[0].encode("utf-8"))  # path order: the byte order of UTF-8
    return jcs({"files": [{"size": s, "path": p, "sha256": d} for p, d, s in ordered]}).encode("utf-8")


def _h(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# name -> (files in no particular order, the manifest's digest); the bytes of the first two are spelled out below.
VECTORS: dict[str, tuple[list[tuple[str, str, int]], str]] = {
    "empty": ([], "602e35a92eec4bc0a2ec6ae113f07bfc6933322fb69fe8dee416e5a67217e2a2"),
    "one_empty_file": (
        [("README.md", _h(b""), 0)],
        "a17ac6fd49aae1d4d717e018b1ff3e5f3aef9b97c33544a8b2d140965f49bd5a",
    ),
    # Escapes, a space, non-ASCII of two, three and four bytes (U+FF46 sorts before U+1F600 in UTF-8 byte order,
    # after it in UTF-16), the largest size.
    "mixed": (
        [
            ("config.json", _h(b"{}"), 2),
            ("tokenizer/vocab.txt", _h(b"a\nb\n"), 4),
            ("é/ü.bin", _h(b"x"), 1),
            ('a"b\\c', _h(b"q"), 1),
            ("\uff46", _h(b"f"), 1),
            ("\U0001f600.png", _h(b"p"), 1),
            ("Z", _h(b"zzzzz"), 5),
            ("a b", _h(b""), 0),
            ("日本/語.txt", _h(b"j"), 1),
            ("big", "f" * 64, 5 * 1024**4),
        ],
        "bc5d5ca1b923285c06cbbf8bd74a63d1ee49c838ebec928b9a342cdb63a1850d",
    ),
}
VECTOR_BYTES = {
    "empty": b'{"files":[]}',
    "one_empty_file": b'{"files":[{"path":"README.md",'
    b'"sha256":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855","size":0}]}',
}
MIXED_ORDER = [
    "Z",
    "a b",
    'a"b\\c',
    "big",
    "config.json",
    "tokenizer/vocab.txt",
    "é/ü.bin",
    "日本/語.txt",
    "\uff46",
    "😀.png",
]

# Segments of valid paths: any character but `/` and the controls, never "." or "..".
_SEGMENT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="/\x7f", min_codepoint=0x20),
    min_size=1,
    max_size=12,
).filter(lambda s: s not in (".", ".."))


@st.composite
def trees(draw: st.DrawFn, max_files: int = 30) -> list[tuple[str, str, int]]:
    """A valid tree as (path, sha256, size) triples: distinct paths, none a folder of another, sizes from 0 (some
    contents shared by several paths)."""
    paths = draw(st.lists(st.lists(_SEGMENT, min_size=1, max_size=4).map("/".join), max_size=max_files, unique=True))
    kept: list[str] = []
    for path in paths:
        if len(path.encode()) > 1024:
            continue
        if any(other.startswith(path + "/") or path.startswith(other + "/") for other in kept):
            continue
        kept.append(path)
    contents = draw(st.lists(st.binary(max_size=8), min_size=1, max_size=5))
    files = []
    for path in kept:
        content = draw(st.sampled_from(contents))
        files.append((path, _h(content), draw(st.integers(min_value=0, max_value=5 * 1024**4))))
    return files
