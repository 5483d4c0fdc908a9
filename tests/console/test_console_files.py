"""The console's Files card of a tree version: its files a folder at a time, sizes, pages, and download links."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import requests
from playwright.sync_api import Locator, Page, expect

from arca_client import Client
from arca_client.trees import HashCache
from tests.console.conftest import open_console, publish, set_alias
from tests.e2e.conftest import ArcaHttp
from tests.helpers import HTTP_TIMEOUT

Screenshot = Callable[..., Path]

FILES = {
    "README.md": b"# a model\n",
    "config.json": b'{"hidden": 64}\n',
    "tokenizer/extra/merges.txt": b"a b\n" * 10,
    "tokenizer/vocab.txt": b"a\nb\nc\n",
    "weights/model.bin": bytes(range(256)) * 64,  # 16,384 bytes: 16 KiB
    "weights/shard-1.bin": b"s" * 3000,
}


def _publish_tree(arca_url: str, name: str, root: Path, files: dict[str, bytes]) -> int:
    for path, data in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    with Client(arca_url) as client:
        return client.publish_directory(name, root, cache=HashCache.disabled()).published.version.version


def _rows(page: Page) -> Locator:
    """The first cell of each row of the Files card (`expect(…).to_have_text([…])` waits for the listing)."""
    return page.get_by_role("region", name="Files").locator("table.files tbody tr td:first-child")


def test_a_tree_version_lists_its_files_by_folder_pages_them_and_links_each_download(
    page: Page, arca_url: str, arca: ArcaHttp, unique: str, tmp_path: Path, screenshot: Screenshot
) -> None:
    # Given a tree of six files in folders as version 1, and prod moved on to a version 2
    name = f"{unique}/models/tiny"
    assert _publish_tree(arca_url, name, tmp_path / "v1", FILES) == 1
    assert _publish_tree(arca_url, name, tmp_path / "v2", {**FILES, "README.md": b"# two\n"}) == 2
    set_alias(arca, name, "prod", version=2)

    # When version 1's page is opened with two files a page
    open_console(page, arca_url, f"/a/{name}/versions/1?limit=2")

    # Then the Files card says how many files and bytes the tree holds, and shows the first page
    files = page.get_by_role("region", name="Files")
    total = sum(len(data) for data in FILES.values())
    expect(files.get_by_role("heading", level=2)).to_contain_text("6 files, 19 KiB")
    expect(files.locator(".files-total span")).to_have_attribute("title", f"{total:,} bytes")
    expect(_rows(page)).to_have_text(["README.md", "config.json"])
    readme = files.locator("table.files tbody tr").first
    expect(readme).to_contain_text("10 B")
    expect(readme.locator("code").nth(1)).to_have_text(re.compile("^[0-9a-f]{12}$"))
    expect(files.get_by_role("status")).to_have_text("Showing 2 of 6 files.")

    # And "Load more files" pages on: a folder whose files go on past the page says so, then its count is whole
    files.get_by_role("button", name="Load more files").click()
    expect(files.locator("table.files tbody tr")).to_have_count(3)
    expect(_rows(page).nth(2)).to_have_text("tokenizer/ 2+ files")
    files.get_by_role("button", name="Load more files").click()
    expect(files.locator("table.files tbody tr")).to_have_count(4)
    expect(_rows(page)).to_have_text(["README.md", "config.json", "tokenizer/ 2 files", "weights/ 2 files"])
    expect(files.get_by_role("button", name="Load more files")).to_have_count(0)
    expect(files.get_by_role("status")).to_have_text("Showing 6 of 6 files.")
    weights_row = files.locator("tr.folder-row").nth(1)
    expect(weights_row.locator("td.num span")).to_have_attribute("title", "19,384 bytes")
    screenshot(page, "version-files")

    # When the weights/ folder is opened from the keyboard
    files.get_by_role("button", name="weights/", exact=True).focus()
    page.keyboard.press("Enter")

    # Then its files show by their names in it, each with its size (exact bytes on hover) and content type, and
    # the way back up is a breadcrumb
    expect(files.get_by_role("navigation", name="Folder").locator("[aria-current=location]")).to_have_text("weights")
    expect(files.locator("table.files tbody tr")).to_have_count(2)
    expect(_rows(page)).to_have_text(["model.bin", "shard-1.bin"])
    model = files.locator("table.files tbody tr").first
    expect(model.locator("td.num span")).to_have_text("16 KiB")
    expect(model.locator("td.num span")).to_have_attribute("title", "16,384 bytes")
    expect(files.get_by_role("textbox", name="Path starts with")).to_have_value("weights/")

    # And each file's link is a real link to its download by the version's number (not prod, which moved on),
    # which gives its bytes
    link = files.get_by_role("link", name="Download weights/model.bin")
    url = link.get_attribute("href") or ""
    assert url.endswith(f"/artifacts/{name}/resolve/1/files/weights/model.bin"), url
    link.focus()
    expect(link).to_be_focused()
    got = requests.get(url, timeout=HTTP_TIMEOUT)
    assert got.status_code == 200 and got.content == FILES["weights/model.bin"]
    readme_url = url.replace("weights/model.bin", "README.md")
    assert requests.get(readme_url, timeout=HTTP_TIMEOUT).content == FILES["README.md"]  # v1's, not prod's

    # And the Download card says its content is the file list, which the CLI downloads as the files themselves
    download = page.get_by_role("region", name="Download")
    manifest = download.get_by_role("link", name=f"Download the file list of {name}@1")
    listing = requests.get(manifest.get_attribute("href") or "", timeout=HTTP_TIMEOUT).json()
    assert [f["path"] for f in listing["files"]] == sorted(FILES)
    cli = download.get_by_role("textbox", name="with the arca CLI (writes its files into a directory, each checked)")
    expect(cli).to_have_value(f"arca download {name}@1")

    # When the breadcrumb goes back up, and tokenizer/ then extra/ are opened
    files.get_by_role("button", name="all files").click()
    expect(_rows(page)).to_have_text(["README.md", "config.json"])  # a new listing: its first page again
    files.get_by_role("button", name="Load more files").click()
    files.get_by_role("button", name="tokenizer/", exact=True).click()
    expect(files.locator("table.files tbody tr")).to_have_count(2)
    expect(_rows(page)).to_have_text(["extra/ 1 file", "vocab.txt"])
    files.get_by_role("button", name="extra/", exact=True).click()

    # Then the nested folder shows its file, with every folder above it in the breadcrumb
    crumbs = files.get_by_role("navigation", name="Folder").get_by_role("listitem")
    expect(crumbs).to_have_text(["all files", "tokenizer", "extra"])
    expect(crumbs.last.locator("[aria-current=location]")).to_be_focused()  # the focus follows the navigation
    expect(files.locator("table.files tbody tr")).to_have_count(1)
    expect(_rows(page)).to_have_text(["merges.txt"])
    screenshot(page, "version-files-folder")
    got = requests.get(
        files.get_by_role("link", name="Download tokenizer/extra/merges.txt").get_attribute("href") or "",
        timeout=HTTP_TIMEOUT,
    )
    assert got.content == FILES["tokenizer/extra/merges.txt"]

    # When the files are filtered by a prefix that is no folder
    box = files.get_by_role("textbox", name="Path starts with")
    box.fill("weights/s")
    box.press("Enter")

    # Then only the paths that start with it are listed, under their folder
    expect(files.locator("table.files tbody tr")).to_have_count(1)
    expect(_rows(page)).to_have_text(["shard-1.bin"])
    expect(files.get_by_role("status")).to_have_text("1 file under weights/s.")


def test_a_blob_version_shows_no_files_card(page: Page, arca_url: str, arca: ArcaHttp, unique: str) -> None:
    # Given a version that is one blob
    name = f"{unique}/payments/api"
    assert publish(arca, name, b"one blob\n") == 1
    # When its page is opened
    open_console(page, arca_url, f"/a/{name}/versions/1")
    # Then it has its content and download, and no Files card
    expect(page.get_by_role("region", name="Download")).to_be_visible()
    expect(page.get_by_role("region", name="Files")).to_have_count(0)
