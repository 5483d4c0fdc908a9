"""The examples of the docs use only what the walkthroughs made, so that they run as printed after them."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _bash_blocks(document: str) -> list[str]:
    return re.findall(r"```bash\n(.*?)```", (REPO / document).read_text(), flags=re.S)


def test_every_file_the_cli_docs_publish_is_one_the_walkthrough_made() -> None:
    blocks = "\n".join(_bash_blocks("docs/cli.md"))
    made = set(re.findall(r"> (\S+\.zip)", blocks))
    published = set(re.findall(r"^arca publish \S+ (\S+)", blocks, flags=re.M)) - {"-"}
    assert made >= {"app-v1.zip", "app-v2.zip", "app-v3.zip"}
    assert published <= made, published - made


def test_rollout_examples_name_no_alarm_the_local_server_lacks() -> None:
    # An alarm that does not exist rolls a rollout back: an example may name one only where it creates it.
    for document in ("docs/cli.md", "README.md"):
        for block in _bash_blocks(document):
            for alarm in re.findall(r"arca rollout start .*--alarm (\S+)", block):
                assert f"--alarm-name {alarm}" in block, f"{document}: --alarm {alarm} is never created"


def test_the_readme_walkthroughs_use_separate_artifacts() -> None:
    # Run one after the other on one server, they would otherwise shift each other's version numbers.
    readme = (REPO / "README.md").read_text()
    curl = readme[readme.index("## Walkthrough with curl") : readme.index("## The `arca` CLI and Python SDK")]
    cli = readme[readme.index("## The `arca` CLI and Python SDK") : readme.index("## Console")]
    curl_names = set(re.findall(r"/artifacts/([a-z0-9-]+/[a-z0-9-]+)/", curl))
    cli_names = set(re.findall(r"arca \w+ ([a-z0-9-]+/[a-z0-9-]+)", cli))
    assert curl_names and cli_names
    assert curl_names.isdisjoint(cli_names), curl_names & cli_names
