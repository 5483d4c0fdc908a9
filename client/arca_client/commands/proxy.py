"""`arca proxy` (and `arca oci proxy`, the same server under the OCI spelling): a local HTTP proxy that signs every
request for the API (see `arca_client.proxy`)."""

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
    oci = commands.group(
        "oci",
        "use Arca as an OCI registry",
        "use Arca as an OCI registry (oras, skopeo, helm, docker)",
        dest="oci_command",
        metavar="OCI_COMMAND",
    )
    p = oci.add(
        "proxy",
        proxy.cmd_proxy,
        "serve the registry on 127.0.0.1 to any OCI client, each call SigV4-signed, blobs of any size to S3",
        example="arca oci proxy --port 5000 &\noras push 127.0.0.1:5000/team/model:v1 model.bin",
    )
    proxy.add_arguments(p)
