"""The examples of the docs use only what the walkthroughs made, so that they run as printed after them."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _bash_blocks(document: str) -> list[str]:
    return re.findall(r"```bash\n(.*?)```", (REPO / document).read_text(), flags=re.S)


def test_every_file_the_cli_docs_publish_is_one_the_walkthrough_made() -> None:
    blocks = "\n".join(_bash_blocks("docs/cli.md"))
    made = set(re.findall(r"> (\S+\.zip)", blocks)) | set(re.findall(r"^mkdir -p (\w+)/?\S* ", blocks, flags=re.M))
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


def _walkthrough_text(document: str) -> list[str]:
    """The walkthrough blocks of `document` (marked `<!-- walkthrough -->`), in order."""
    return re.findall(r"<!-- walkthrough -->\n```(?:bash|python)\n(.*?)```", (REPO / document).read_text(), flags=re.S)


def test_each_walkthrough_works_in_a_directory_of_its_own_and_ends_where_it_began() -> None:
    # Run one after the other in one shell, in the checkout, none may write into the checkout (its deploy/ folder
    # is source) or leave the next one in its directory.
    readme = (REPO / "README.md").read_text()
    curl = _walkthrough_text("README.md")[0]
    cli = next(block for block in _walkthrough_text("README.md") if block.startswith("source"))
    docs = _walkthrough_text("docs/cli.md")[0]
    directories = []
    for block, document in ((curl, "curl"), (cli, "cli"), (docs, "docs/cli.md")):
        found = re.search(r"^mkdir -p (\S+) && cd \1(\s+#.*)?$", block, flags=re.M)
        assert found, f"{document}: no `mkdir -p DIR && cd DIR`"
        directories.append(found.group(1))
    assert len(set(directories)) == 3, directories
    assert curl.rstrip().endswith("cd ..") and cli.rstrip().endswith("cd ..")
    assert readme.index("## Walkthrough with curl") < readme.index("## The `arca` CLI and Python SDK")


def test_the_readme_cli_walkthrough_starts_by_putting_arca_on_path() -> None:
    # `make local` installs arca into .venv/bin, which nothing puts on PATH in the shell that ran it
    cli = next(block for block in _walkthrough_text("README.md") if "arca " in block)
    assert cli.splitlines()[0].startswith("source .venv/bin/activate")


def test_the_readme_and_the_cli_docs_use_separate_artifacts() -> None:
    # One server runs the README's walkthroughs, then docs/cli.md's: a policy the README leaves on an alias must
    # not meet the second.
    names = {
        document: set(re.findall(r"arca (?:\w+ )+?([a-z0-9-]+/[a-z0-9-]+)", "\n".join(_walkthrough_text(document))))
        for document in ("README.md", "docs/cli.md")
    }
    assert names["README.md"] and names["docs/cli.md"]
    assert names["README.md"].isdisjoint(names["docs/cli.md"]), names["README.md"] & names["docs/cli.md"]
