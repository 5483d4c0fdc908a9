"""The console's version page for content uploaded in parts: the parts summary, and how to move large content."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import requests
from playwright.sync_api import Page, expect

from tests.console.conftest import open_console
from tests.e2e.conftest import CURL_DEFAULT_HEADERS, ArcaHttp
from tests.helpers import HTTP_TIMEOUT, sha256

PART = 5 * 1024**2


def test_a_version_in_parts_shows_its_parts_and_how_to_move_large_content(
    page: Page, arca_url: str, arca: ArcaHttp, unique: str, screenshot: Callable[..., Path]
) -> None:
    # Given a version uploaded in two parts of 5 MiB (the last one 1 KiB)
    name = f"{unique}/models/llm"
    data = b"w" * PART + b"t" * 1024
    parts = [sha256(data[:PART]), sha256(data[PART:])]
    body = {"sha256": sha256(data), "size": len(data), "part_size": PART, "parts": parts}
    upload = arca.post(f"/artifacts/{name}/uploads", json=body).json()["upload"]
    for target in upload["parts"]:
        start = (target["number"] - 1) * PART
        chunk = data[start : start + PART]
        headers = {**CURL_DEFAULT_HEADERS, **target["headers"]}
        assert requests.put(target["url"], data=chunk, headers=headers, timeout=HTTP_TIMEOUT).status_code == 200
    assert arca.post(f"/artifacts/{name}/uploads/{upload['id']}/complete").status_code == 200
    assert arca.post(f"/artifacts/{name}/versions", json={"sha256": body["sha256"], "size": len(data)}).ok
    # When its page is opened
    open_console(page, arca_url, f"/a/{name}/versions/1")
    # Then the content names its parts, and the download section gives the parallel, resumable commands
    expect(page).to_have_url(re.compile(r"/versions/1$"))
    content = page.get_by_role("region", name="Content")
    expect(content).to_contain_text("2 parts of 5.0 MiB (last 1.0 KiB), each checked by its sha256")
    download = page.get_by_role("region", name="Download")
    expect(download.get_by_role("textbox", name="with the arca CLI, 16 parts at a time (resumable)")).to_have_value(
        f"arca download {name}@1 --parallel 16"
    )
    expect(download.get_by_role("textbox", name=re.compile("^publish the next version"))).to_have_value(
        f"arca publish {name} FILE --parallel 16"
    )
    expect(download).to_contain_text("an interrupted transfer resumes when the same command runs again")
    screenshot(page, "version-in-parts")
