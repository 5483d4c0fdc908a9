"""Record what oras-py and skopeo send to Debian's docker-registry and what it answers: `python -m tests.oci.record`.

Each client operation runs against the reference registry behind the recording proxy, and every exchange is
printed with the headers that matter to the protocol (how /notes-style transcripts of client behaviour are made;
run it again when a client's version changes). `--dispatcher` records the same operations against the /v2/
dispatcher over the dict registry instead.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from tests.oci.harness import (
    Registry,
    debian_tool,
    docker_registry,
    make_layout,
    oras_attach,
    oras_pull,
    oras_push,
    oras_tags,
    skopeo_copy,
)
from tests.oci.servers import Exchange, serving_fake_registry

SHOWN = (
    "Accept", "Content-Type", "Content-Length", "Content-Range", "Transfer-Encoding", "Range", "Location",
    "Docker-Content-Digest", "Docker-Upload-UUID", "OCI-Subject", "Link", "OCI-Filters-Applied",
)  # fmt: skip


def _show(exchange: Exchange) -> str:
    sent = [f"{k}: {v}" for k, v in exchange.request_headers if k in SHOWN]
    answered = [f"{k}: {v}" for k, v in exchange.response_headers.items() if k in SHOWN]
    path = exchange.path if len(exchange.path) < 110 else exchange.path[:107] + "..."
    return (
        f"{exchange.method} {path} [{exchange.request_size} B] -> {exchange.status}\n"
        + "".join(f"    > {h}\n" for h in sent)
        + "".join(f"    < {h}\n" for h in answered)
    )


@contextlib.contextmanager
def _registry(dispatcher: bool, workdir: Path) -> Iterator[Registry]:
    if dispatcher:
        with serving_fake_registry() as server:
            yield Registry(server.host, server.recorder, "dispatcher")
    else:
        with docker_registry(debian_tool("docker-registry", "docker-registry"), workdir) as registry:
            yield registry


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dispatcher", action="store_true", help="record against the dispatcher, not the reference")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="oci-record-"))
    skopeo = debian_tool("skopeo", "skopeo")
    (workdir / "model.bin").write_bytes(os.urandom(3000))
    (workdir / "sbom.json").write_text("{}")
    layout = make_layout(workdir / "layout", "v1", {"a.bin": os.urandom(3000)})
    with _registry(args.dispatcher, workdir) as registry:
        steps = {
            "oras-py push": lambda: oras_push(registry, "demo/model:v1", [workdir / "model.bin"]),
            "oras-py pull": lambda: oras_pull(registry, "demo/model:v1", workdir / "pulled"),
            "oras-py tags (n=1)": lambda: oras_tags(registry, "demo/model", n=1),
            "oras attach (equivalent)": lambda: oras_attach(
                registry, "demo/model", "v1", "application/spdx+json", [workdir / "sbom.json"], {}
            ),
            "skopeo copy oci: -> docker://": lambda: skopeo_copy(
                skopeo, layout.reference, f"docker://{registry.host}/demo/image:v1", "--preserve-digests"
            ),
            "skopeo copy docker:// -> oci:": lambda: skopeo_copy(
                skopeo, f"docker://{registry.host}/demo/image:v1", f"oci:{workdir / 'back'}:v1"
            ),
        }
        for title, step in steps.items():
            registry.exchanges()
            step()
            print(f"## {title}\n" + "".join(_show(e) for e in registry.exchanges()))


if __name__ == "__main__":
    main()
