"""The name a download is saved under, and its Content-Disposition header (RFC 6266, RFC 8187)."""

from __future__ import annotations

import pytest

from arca.domain.downloads import content_disposition, recorded_filename


@pytest.mark.parametrize(
    ("filename", "header"),
    [
        ("app-v1.zip", 'attachment; filename="app-v1.zip"'),
        ("api-5", 'attachment; filename="api-5"'),
        ("my app.tar.gz", "attachment; filename=\"my app.tar.gz\"; filename*=UTF-8''my%20app.tar.gz"),
        ('say "hi".txt', "attachment; filename=\"say _hi_.txt\"; filename*=UTF-8''say%20%22hi%22.txt"),
        ("résumé.pdf", "attachment; filename=\"r_sum_.pdf\"; filename*=UTF-8''r%C3%A9sum%C3%A9.pdf"),
        ("100%.bin", "attachment; filename=\"100_.bin\"; filename*=UTF-8''100%25.bin"),
        ("a;b=c.zip", "attachment; filename=\"a;b=c.zip\"; filename*=UTF-8''a%3Bb%3Dc.zip"),
    ],
)
def test_content_disposition_quotes_and_encodes_the_name(filename: str, header: str) -> None:
    assert content_disposition(filename) == header


@pytest.mark.parametrize(
    ("metadata", "name"),
    [
        ({"filename": "app-v1.zip"}, "app-v1.zip"),
        ({"filename": "../etc/passwd"}, None),
        ({"filename": "dir\\app.zip"}, None),
        ({"filename": ".bashrc"}, None),
        ({"filename": "bad\r\nSet-Cookie: x"}, None),
        ({"filename": "x" * 256}, None),
        ({"filename": ""}, None),
        ({}, None),
        (None, None),
    ],
)
def test_only_a_plain_recorded_file_name_is_used(metadata: dict[str, str] | None, name: str | None) -> None:
    assert recorded_filename(metadata) == name
