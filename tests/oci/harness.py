"""Real OCI clients and the reference registry, for the project's tests.

- `debian_tool(binary, package)`: a Debian package's binary, installed with apt-get when missing (as `make browser`
  installs Chromium); a skip only where apt-get does not exist, a failure where the install fails.
- `docker_registry(binary)`: Debian's docker-registry (the CNCF distribution reference server) on a free port with
  a temporary storage directory, deletes enabled, behind a recording proxy.
- Client operations as a user runs them: oras-py push, pull, tags and an `oras attach` equivalent (a manifest with a
  subject, pushed by digest); skopeo copy between an OCI layout directory and `docker://`.
- `Registry`: what a client test needs of a registry (its host:port and the exchanges it recorded), the same for
  the reference and for anything Arca serves, so the differential tests run one scenario against each.
"""

from __future__ import annotations

import contextlib
import fcntl
import gzip
import hashlib
import io
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests

from local.services import free_port
from tests.helpers import wait_for
from tests.oci.servers import Exchange, Recorder, recording_proxy

APT_LOCK = Path(tempfile.gettempdir()) / "arca-apt.lock"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
EMPTY = "application/vnd.oci.empty.v1+json"
TITLE = "org.opencontainers.image.title"


def debian_tool(binary: str, package: str) -> str:
    """The path of `binary`, installing Debian's `package` first when it is missing.

    Skips only where the package cannot be installed at all (no apt-get, or not root and no sudo); fails, with
    apt-get's own words, where the install was tried and failed.
    """
    if found := shutil.which(binary):
        return found
    apt = shutil.which("apt-get")
    sudo = [] if os.geteuid() == 0 else [shutil.which("sudo") or ""]
    if apt is None or sudo == [""]:
        pytest.skip(
            f"{binary} is missing and cannot be installed here: Debian's package {package!r} needs apt-get as root"
        )
    with APT_LOCK.open("w") as lock:  # one apt-get at a time across the xdist workers
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not shutil.which(binary):
            env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
            install = [*sudo, apt, "install", "-y", "-qq", package]
            if subprocess.run(install, env=env, capture_output=True).returncode != 0:
                subprocess.run([*sudo, apt, "update", "-qq"], env=env, capture_output=True)
                done = subprocess.run(install, env=env, capture_output=True, text=True)
                if done.returncode != 0:
                    pytest.fail(f"apt-get install {package} failed:\n{done.stdout}\n{done.stderr}")
    found = shutil.which(binary)
    if found is None:
        pytest.fail(f"apt-get installed {package} but there is no {binary} on PATH")
    return found


@dataclass
class Registry:
    """A registry as the client tests see it: `host` (host:port, plain HTTP) and what it was sent."""

    host: str
    recorder: Recorder
    label: str

    @property
    def url(self) -> str:
        return f"http://{self.host}"

    def exchanges(self) -> list[Exchange]:
        return self.recorder.take()


@contextlib.contextmanager
def docker_registry(binary: str, workdir: Path) -> Iterator[Registry]:
    """Debian's docker-registry serving `workdir`/storage on a free port, behind a recording proxy."""
    port = free_port()
    config = workdir / "config.yml"
    config.write_text(
        "version: 0.1\n"
        "log:\n  level: error\n  accesslog:\n    disabled: true\n"
        f"storage:\n  filesystem:\n    rootdirectory: {workdir / 'storage'}\n  delete:\n    enabled: true\n"
        f"http:\n  addr: 127.0.0.1:{port}\n  secret: arca-tests\n"
    )
    log = (workdir / "registry.log").open("w")
    process = subprocess.Popen([binary, "serve", str(config)], stdout=log, stderr=subprocess.STDOUT)

    def ready() -> bool:
        if process.poll() is not None:
            raise AssertionError(f"docker-registry exited: {(workdir / 'registry.log').read_text()}")
        with contextlib.suppress(requests.ConnectionError):
            return requests.get(f"http://127.0.0.1:{port}/v2/", timeout=5).status_code == 200
        return False

    try:
        wait_for(ready, timeout=60, what="docker-registry's /v2/")
        with recording_proxy(port) as (host, recorder):
            yield Registry(host, recorder, "docker-registry")
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


# oras-py


def oras_client(registry: Registry) -> Any:
    """An oras-py client for a plain-HTTP registry (the `oras` distribution of requirements-dev.txt)."""
    try:
        import oras.client
    except ImportError:  # requirements-dev.txt installs it: a missing client is a broken install, not a skip
        pytest.fail("oras-py is not installed: `make install` installs requirements-dev.txt")
    return oras.client.OrasClient(hostname=registry.host, insecure=True)


def oras_push(registry: Registry, target: str, files: list[Path], **options: Any) -> requests.Response:
    """`oras push <registry>/<target> <files>`; answers the manifest PUT's response."""
    client = oras_client(registry)
    answer = client.push(
        target=f"{registry.host}/{target}", files=[str(f) for f in files], disable_path_validation=True, **options
    )
    assert isinstance(answer, requests.Response)
    return answer


def oras_pull(registry: Registry, target: str, outdir: Path) -> dict[str, bytes]:
    """`oras pull`; answers the files it wrote by name."""
    paths = oras_client(registry).pull(target=f"{registry.host}/{target}", outdir=str(outdir))
    return {Path(p).name: Path(p).read_bytes() for p in paths}


def oras_tags(registry: Registry, name: str, n: int | None = None) -> list[str]:
    return list(oras_client(registry).get_tags(f"{registry.host}/{name}", N=n))


def manifest_head(registry: Registry, name: str, reference: str) -> tuple[str, int, str]:
    """(digest, size, media type) of a manifest, as a client asks for them before attaching to it."""
    answer = requests.head(
        f"{registry.url}/v2/{name}/manifests/{reference}", headers={"Accept": OCI_MANIFEST}, timeout=30
    )
    answer.raise_for_status()
    return (
        answer.headers["Docker-Content-Digest"],
        int(answer.headers["Content-Length"]),
        answer.headers["Content-Type"],
    )


def oras_attach(
    registry: Registry, name: str, subject: str, artifact_type: str, files: list[Path], annotations: dict[str, str]
) -> requests.Response:
    """What `oras attach --artifact-type T <name>@<subject> <files>` sends: the files and the empty config as blobs
    (through oras-py's own upload), then an image manifest with `artifactType` and `subject`, pushed by digest.

    The subject is described from its HEAD (digest and size): oras-py's `Subject.from_manifest` would re-serialise
    the manifest and describe other bytes than the registry holds."""
    client = oras_client(registry)
    container = client.get_container(f"{registry.host}/{name}")
    subject_digest, subject_size, subject_type = manifest_head(registry, name, subject)
    empty = _write(Path(tempfile.mkdtemp()) / "empty", b"{}")
    config = {"mediaType": EMPTY, "digest": _digest(b"{}"), "size": 2}
    layers = []
    for blob, descriptor in [(empty, config)] + [(f, _layer(f)) for f in files]:
        answer = client.upload_blob(str(blob), container, descriptor)
        assert answer.status_code in (200, 201), answer.text
        if blob != empty:
            layers.append(descriptor)
    manifest = {
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST,
        "artifactType": artifact_type,
        "config": config,
        "layers": layers or [config],
        "subject": {"mediaType": subject_type, "digest": subject_digest, "size": subject_size},
        "annotations": annotations,
    }
    body = json.dumps(manifest, separators=(",", ":")).encode()
    url = f"{registry.url}/v2/{name}/manifests/{_digest(body)}"
    answer = client.do_request(url, "PUT", data=body, headers={"Content-Type": OCI_MANIFEST})
    assert isinstance(answer, requests.Response)
    return answer


def _layer(path: Path) -> dict[str, Any]:
    content = path.read_bytes()
    return {
        "mediaType": "application/octet-stream",
        "digest": _digest(content),
        "size": len(content),
        "annotations": {TITLE: path.name},
    }


def _digest(content: bytes) -> str:
    return "sha256:" + hashlib.sha256(content).hexdigest()


def _write(path: Path, content: bytes) -> Path:
    path.write_bytes(content)
    return path


# skopeo


def skopeo(binary: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run skopeo without a trust policy (the tests copy their own images) and answer what it did."""
    return subprocess.run([binary, "--insecure-policy", *args], capture_output=True, text=True, timeout=timeout)


def skopeo_copy(binary: str, source: str, destination: str, *flags: str) -> str:
    """`skopeo copy` between `oci:<dir>:<tag>` and `docker://<host>/<name>:<tag>` over plain HTTP; answers the
    digest of the manifest it wrote (`--digestfile`). Fails with skopeo's own words."""
    digestfile = Path(tempfile.mkdtemp()) / "digest"
    done = skopeo(
        binary, "copy", "--src-tls-verify=false", "--dest-tls-verify=false", "--digestfile", str(digestfile),
        *flags, source, destination,
    )  # fmt: skip
    assert done.returncode == 0, f"skopeo copy {source} {destination} failed:\n{done.stderr}"
    return digestfile.read_text().strip()


def skopeo_raw_manifest(binary: str, registry: Registry, reference: str) -> bytes:
    """`skopeo inspect --raw docker://…`: the manifest's bytes as the registry serves them."""
    done = skopeo(binary, "inspect", "--raw", "--tls-verify=false", f"docker://{registry.host}/{reference}")
    assert done.returncode == 0, done.stderr
    return done.stdout.encode()


@dataclass(frozen=True)
class Layout:
    """An OCI image layout directory with one tagged image: a config and gzip layers of known bytes."""

    path: Path
    tag: str
    manifest_digest: str
    layers: dict[str, bytes]  # file name inside each layer's tar -> its bytes

    @property
    def reference(self) -> str:
        return f"oci:{self.path}:{self.tag}"


def make_layout(path: Path, tag: str, files: dict[str, bytes]) -> Layout:
    """Write an image into an OCI layout (one gzip tar layer per file) as a build tool would, beside any images the
    layout holds; gzip layers are copied as they are, so the manifest skopeo pushes is this one (its digest is
    `manifest_digest`)."""
    blobs = path / "blobs" / "sha256"
    blobs.mkdir(parents=True, exist_ok=True)

    def put(content: bytes, media_type: str) -> dict[str, Any]:
        (blobs / hashlib.sha256(content).hexdigest()).write_bytes(content)
        return {"mediaType": media_type, "digest": _digest(content), "size": len(content)}

    layers = [
        put(_targz(name, content), "application/vnd.oci.image.layer.v1.tar+gzip") for name, content in files.items()
    ]
    config = json.dumps({"architecture": "amd64", "os": "linux", "rootfs": {"type": "layers", "diff_ids": []}})
    manifest = {
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST,
        "config": put(config.encode(), "application/vnd.oci.image.config.v1+json"),
        "layers": layers,
    }
    body = json.dumps(manifest, separators=(",", ":")).encode()
    descriptor = put(body, OCI_MANIFEST) | {"annotations": {"org.opencontainers.image.ref.name": tag}}
    (path / "oci-layout").write_text(json.dumps({"imageLayoutVersion": "1.0.0"}))
    index_file = path / "index.json"
    index = json.loads(index_file.read_text()) if index_file.exists() else {"schemaVersion": 2, "manifests": []}
    index["manifests"].append(descriptor)
    index_file.write_text(json.dumps(index))
    return Layout(path, tag, _digest(body), dict(files))


def _targz(name: str, content: bytes) -> bytes:
    buffer = io.BytesIO()
    # mtime 0 and no gzip name: the same files make the same bytes, so both registries see one digest
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as zipped, tarfile.open(fileobj=zipped, mode="w") as tar:
        info = tarfile.TarInfo(name)
        info.size, info.mtime = len(content), 0
        tar.addfile(info, io.BytesIO(content))
    return buffer.getvalue()


def layout_files(path: Path, tag: str) -> dict[str, bytes]:
    """The files inside the layers of the image `tag` of an OCI layout (what a pull brought back)."""
    index = json.loads((path / "index.json").read_text())
    [entry] = [
        m for m in index["manifests"] if m.get("annotations", {}).get("org.opencontainers.image.ref.name") == tag
    ]
    manifest = json.loads(_blob(path, entry["digest"]))
    files = {}
    for layer in manifest["layers"]:
        with tarfile.open(fileobj=io.BytesIO(_blob(path, layer["digest"])), mode="r:*") as tar:
            for member in tar.getmembers():
                extracted = tar.extractfile(member)
                if extracted is not None:
                    files[member.name] = extracted.read()
    return files


def _blob(path: Path, digest: str) -> bytes:
    return (path / "blobs" / "sha256" / digest.removeprefix("sha256:")).read_bytes()


# The differential


@dataclass(frozen=True)
class Seen:
    """What one registry's clients saw in one scenario: its outcomes, and the exchanges (for the failure message)."""

    label: str
    outcome: Any
    exchanges: list[Exchange]


def differential(registries: list[Registry], scenario: Callable[[Registry], Any]) -> list[Seen]:
    """Run `scenario` (client operations that answer what the clients saw) against each registry in turn, and
    fail, showing both conversations, unless every registry's clients saw the same."""
    seen = []
    for registry in registries:
        registry.exchanges()  # start from a clean record
        seen.append(Seen(registry.label, scenario(registry), registry.exchanges()))
    reference = seen[0]
    for other in seen[1:]:
        if other.outcome != reference.outcome:
            conversation = "\n".join(
                f"--- {s.label}: {s.outcome!r}\n" + "\n".join(e.line() for e in s.exchanges) for s in (reference, other)
            )
            raise AssertionError(f"the clients saw different things:\n{conversation}")
    return seen
