"""`arca proxy`: a local HTTP proxy that signs every request for the API (see `arca_client.proxy`)."""

from __future__ import annotations

from arca_client import proxy
from arca_client.commands.base import Commands


def register(commands: Commands) -> None:
    p = commands.add(
        "proxy",
        proxy.cmd_proxy,
        "forward any HTTP client (huggingface_hub, OCI) to the API, each request SigV4-signed",
        example="arca proxy --port 8787 &\nHF_ENDPOINT=http://127.0.0.1:8787/hf hf download team/model --revision prod",
    )
    proxy.add_arguments(p)
