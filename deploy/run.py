"""`make test-deploy`: a real `cdk deploy` of both stacks of a stage to LocalStack, then the `arca` CLI against it.

1. `deploy/setup.sh` builds (once) LocalStack's virtualenv with the process executor, the Python 3.12 runtime
   and the Powertools layer.
2. LocalStack starts on 127.0.0.1:4566 in a fresh directory; Lambda functions run as local processes under
   Python 3.12 with `awslambdaric` (deploy/executor).
3. The layer is published, then the project's own `npx cdk bootstrap` and `npx cdk deploy --all`, with
   `-c powertools_layer_arn=<that layer>`.
4. Every resource of every template in the cloud assembly must have reached CREATE_COMPLETE.
5. The `arca` CLI drives the deployed API: publish (presigned upload, signed by the stage's KMS key), resolve,
   download (sha256 verified, then the signature with `--verify`), an attestation, an alias move, a rollout to
   `completed` through the state machine, a multipart publish and a step of its background verification, a
   consumer lease taken, listed and released, the real `huggingface_hub` and oras-py through `arca proxy`
   (which signs their calls), the event feed; and the events the stream consumer put on the bus reach a queue
   subscribed to it.

Every process started here is stopped at the end whatever happened (each command in a process group of its
own; LocalStack with its whole process tree). Exits non-zero on the first failed check, naming it; the logs of
LocalStack, the CDK CLI and the `arca` calls stay in .deploy-cache/run/.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import boto3

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("DEPLOY_CACHE", ROOT / ".deploy-cache")).resolve()
RUN = CACHE / "run"
STAGE = os.environ.get("STAGE", "dev")
REGION = "us-east-1"
ACCOUNT = "000000000000"
GATEWAY = "127.0.0.1:4566"
ENDPOINT = f"http://{GATEWAY}"
# Any credentials do: LocalStack checks no signature.
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"}
NAME = "deploy-check/app"
PARTS_NAME = "deploy-check/parts"
TREE_NAME = "deploy-check/tree"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
# LocalStack's own shutdown takes 10-25 s here (it stops each service in turn); its state is thrown away anyway.
STOP_SECONDS = 10


class CheckError(Exception):
    """A check failed: the message says which and what was seen."""


class Timings:
    def __init__(self) -> None:
        self.start = time.monotonic()
        self.phases: list[tuple[str, float]] = []

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        print(f"== {name}", flush=True)
        began = time.monotonic()
        try:
            yield
        finally:
            self.phases.append((name, time.monotonic() - began))

    def report(self) -> str:
        lines = [f"  {name:<40} {seconds:6.1f} s" for name, seconds in self.phases]
        lines.append(f"  {'total':<40} {time.monotonic() - self.start:6.1f} s")
        return "\n".join(lines)


def aws_env() -> dict[str, str]:
    """The environment of every AWS client here: LocalStack's endpoint, test credentials, no user config."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "CDK_"))}
    env.update(
        CREDENTIALS,
        AWS_REGION=REGION,
        AWS_DEFAULT_REGION=REGION,
        AWS_ENDPOINT_URL=ENDPOINT,
        AWS_ENDPOINT_URL_S3=ENDPOINT,
        AWS_CONFIG_FILE=str(RUN / "aws-config"),
        AWS_SHARED_CREDENTIALS_FILE=str(RUN / "aws-credentials"),
    )
    return env


def client(service: str) -> Any:
    return boto3.client(
        service,
        region_name=REGION,
        endpoint_url=ENDPOINT,
        aws_access_key_id=CREDENTIALS["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
    )


def run(command: list[str], *, env: dict[str, str] | None = None, log: Path | None = None, timeout: float) -> str:
    """Runs a command to completion in a process group of its own, which is stopped with it on any exception
    (a timeout, SIGTERM, Ctrl-C), so no grandchild (node under npx, python under cdk) outlives it. Its stderr
    and stdout go to `log` (else to this process's), its stdout is returned too."""
    out = log.open("ab") if log else None
    if out:
        out.write(f"$ {' '.join(command)}\n".encode())
        out.flush()
    process = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE if out else None, stderr=out, start_new_session=True
    )
    try:
        stdout, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        stop(process, grace=3)
        raise CheckError(
            f"{' '.join(command[:4])} … did not finish in {timeout:.0f} s" + (f":\n{_tail(log)}" if log else "")
        ) from None
    except BaseException:
        stop(process, grace=3)
        raise
    finally:
        if out:
            out.close()
    if log and stdout:
        with log.open("ab") as again:
            again.write(stdout)
    if process.returncode != 0:
        raise CheckError(f"{' '.join(command[:4])} … exited {process.returncode}" + (f":\n{_tail(log)}" if log else ""))
    return (stdout or b"").decode()


def _log() -> str:
    """LocalStack's log so far ("" before it started)."""
    log = RUN / "localstack.log"
    return log.read_text(errors="replace") if log.exists() else ""


def _tail(path: Path, lines: int = 40) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def _localstack_problems(lines: int = 12) -> str:
    """The last warnings and errors LocalStack logged (a function that failed to start, a resource it refused)."""
    found = [line[:400] for line in _log().splitlines() if re.search(r" (WARN|ERROR) ", line)]
    return "LocalStack's last warnings and errors:\n  " + "\n  ".join(found[-lines:]) + "\n" if found else ""


def wait_for(what: str, probe: Callable[[], Any], *, timeout: float, every: float = 0.5) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        try:
            found = probe()
        except Exception as error:
            found, last = None, error
        else:
            last = None
        if found:
            return found
        if time.monotonic() > deadline:
            raise CheckError(f"timed out after {timeout:.0f} s waiting for {what}" + (f": {last}" if last else ""))
        time.sleep(every)


def background(work: Callable[[], Any]) -> Callable[[], None]:
    """Starts `work` in a daemon thread (it never holds up an exit); the returned function waits for it and
    raises what it raised."""
    failures: list[BaseException] = []

    def target() -> None:
        try:
            work()
        except BaseException as error:
            failures.append(error)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()

    def join() -> None:
        thread.join()
        if failures:
            raise failures[0]

    return join


# -- LocalStack -------------------------------------------------------------------------------------------------


def start_localstack() -> subprocess.Popen[bytes]:
    with socket.socket() as probe:
        if probe.connect_ex(("127.0.0.1", 4566)) == 0:
            raise CheckError(f"{GATEWAY} is already in use: stop what listens there first")
    root = RUN / "localstack"
    libs = root / "var" / "lib" / "localstack"
    libs.mkdir(parents=True)
    # Java, DynamoDB Local and kinesis-local (installed by LocalStack itself) are kept across runs.
    (libs / "lib").symlink_to(CACHE / "var_libs")
    (RUN / "tmp").mkdir()
    env = {
        **aws_env(),
        "OVERRIDE_IN_DOCKER": "0",
        "FILESYSTEM_ROOT": str(root),
        "GATEWAY_LISTEN": GATEWAY,
        "DNS_ADDRESS": "0",
        "DISABLE_EVENTS": "1",
        "SKIP_SSL_CERT_DOWNLOAD": "1",
        "LAMBDA_RUNTIME_EXECUTOR": "process",
        "ARCA_LAMBDA_PYTHON3_12": str(CACHE / "python3.12" / "bin" / "python"),
        # Cold starts on a loaded 2-core machine take seconds; LocalStack's default gives up at 20.
        "LAMBDA_RUNTIME_ENVIRONMENT_TIMEOUT": "60",
        "TMPDIR": str(RUN / "tmp"),
    }
    for name in ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"):
        env.pop(name)
    # A session of its own: LocalStack and the functions' runtimes share its group; DynamoDB Local and
    # kinesis-local start sessions of their own, which `stop` finds through the process tree.
    with (RUN / "localstack.log").open("wb") as log:
        return subprocess.Popen(
            [str(CACHE / "localstack" / "bin" / "python"), "-m", "localstack.runtime.main"],
            cwd=RUN,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def localstack_ready() -> bool:
    with urllib.request.urlopen(f"{ENDPOINT}/_localstack/health", timeout=2) as reply:
        return reply.status == 200


def stop(process: subprocess.Popen[bytes] | None, grace: float = STOP_SECONDS) -> None:
    """SIGTERM to the process's group, then SIGKILL to whatever of its tree is left after `grace` seconds.

    The tree is taken before the SIGTERM: LocalStack starts DynamoDB Local and kinesis-local in sessions of
    their own, out of reach of its group, and stops them itself unless it is killed first. A process of the
    tree is known by its pid and its start time, so a pid the system has given to another process since is
    left alone.
    """
    if process is None:
        return
    tree = _descendants(process.pid) if process.poll() is None else {}
    with suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while process.poll() is None or any(_alive(pid, began) for pid, began in tree.items()):
        if time.monotonic() > deadline:
            with suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            for pid, began in tree.items():
                if _alive(pid, began):
                    with suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
            break
        time.sleep(0.2)
    process.wait()
    # A SIGKILL takes a moment to land: return only once nothing of the tree runs.
    deadline = time.monotonic() + 5
    while any(_alive(pid, began) for pid, began in tree.items()) and time.monotonic() < deadline:
        time.sleep(0.05)


def _stat(pid: int) -> list[str] | None:
    """/proc/<pid>/stat from the state on (the command name before it may hold spaces), None if gone."""
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _descendants(pid: int) -> dict[int, str]:
    """Every process below `pid` (Linux /proc), with its start time."""
    children: dict[int, list[tuple[int, str]]] = {}
    for entry in Path("/proc").iterdir():
        fields = _stat(int(entry.name)) if entry.name.isdigit() else None
        if fields:
            # After the state: ppid is the 2nd field, the start time the 20th.
            children.setdefault(int(fields[1]), []).append((int(entry.name), fields[19]))
    found: dict[int, str] = {}
    todo = [pid]
    while todo:
        for child, began in children.get(todo.pop(), []):
            if child not in found:
                found[child] = began
                todo.append(child)
    return found


def _alive(pid: int, began: str) -> bool:
    """Still that process (same start time), and running rather than a zombie waiting to be reaped."""
    fields = _stat(pid)
    return fields is not None and fields[19] == began and fields[0] != "Z"


# -- deploy -----------------------------------------------------------------------------------------------------


def publish_layer() -> str:
    reply = client("lambda").publish_layer_version(
        LayerName="arca-powertools",
        Description="Powertools and pydantic from requirements.txt (stands in for the public layer)",
        Content={"ZipFile": (CACHE / "layer" / "layer.zip").read_bytes()},
        CompatibleRuntimes=["python3.12"],
    )
    return str(reply["LayerVersionArn"])


def cdk_env() -> dict[str, str]:
    env = aws_env()
    env.update(
        CDK_DEFAULT_ACCOUNT=ACCOUNT,
        CDK_DEFAULT_REGION=REGION,
        # The CLI caches which account a key belongs to under its home: a run's own keeps the real one clean.
        CDK_HOME=str(RUN / "cdk-home"),
        PATH=f"{ROOT / '.venv' / 'bin'}{os.pathsep}{os.environ['PATH']}",
        JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION="20",
        CI="true",
    )
    return env


def cdk(*args: str, timeout: float = 420) -> str:
    command = ["npx", "--no-install", "cdk", *args, "--no-color", "--output", str(RUN / "cdk.out")]
    return run(command, env=cdk_env(), log=RUN / "cdk.log", timeout=timeout)


def stacks_of_assembly() -> dict[str, dict[str, Any]]:
    """Stack name -> template, for every stack of the cloud assembly the deploy used."""
    manifest = json.loads((RUN / "cdk.out" / "manifest.json").read_text())
    stacks: dict[str, dict[str, Any]] = {}
    for artifact in manifest["artifacts"].values():
        if artifact["type"] == "aws:cloudformation:stack":
            template = RUN / "cdk.out" / artifact["properties"]["templateFile"]
            name = artifact["properties"].get("stackName") or artifact["displayName"]
            stacks[name] = json.loads(template.read_text())
    return stacks


def check_resources(stacks: dict[str, dict[str, Any]], cloudformation: Any = None) -> dict[str, int]:
    """Every stack CREATE_COMPLETE, and every resource of its template too; returns the count per stack."""
    cloudformation = cloudformation or client("cloudformation")
    problems: list[str] = []
    counts: dict[str, int] = {}
    for name, template in stacks.items():
        stack = cloudformation.describe_stacks(StackName=name)["Stacks"][0]
        if stack["StackStatus"] != "CREATE_COMPLETE":
            problems.append(f"{name}: stack {stack['StackStatus']} ({stack.get('StackStatusReason', '')})")
        deployed = {
            r["LogicalResourceId"]: r
            for page in cloudformation.get_paginator("list_stack_resources").paginate(StackName=name)
            for r in page["StackResourceSummaries"]
        }
        expected = template.get("Resources", {})
        for logical_id, resource in sorted(expected.items()):
            found = deployed.get(logical_id)
            if found is None:
                problems.append(f"{name}: {logical_id} ({resource['Type']}) was never created")
            elif found["ResourceStatus"] != "CREATE_COMPLETE":
                reason = found.get("ResourceStatusReason", "")
                problems.append(f"{name}: {logical_id} ({resource['Type']}) {found['ResourceStatus']} {reason}")
        counts[name] = len(expected)
    if problems:
        raise CheckError("resources not CREATE_COMPLETE:\n  " + "\n  ".join(problems))
    return counts


def check_functions(stacks: dict[str, dict[str, Any]], layer: str) -> list[str]:
    """Every function of the templates is Active on Python 3.12 with the layer built from requirements.txt."""
    cloudformation, lambda_ = client("cloudformation"), client("lambda")
    names = [
        r["PhysicalResourceId"]
        for stack in stacks
        for page in cloudformation.get_paginator("list_stack_resources").paginate(StackName=stack)
        for r in page["StackResourceSummaries"]
        if r["ResourceType"] == "AWS::Lambda::Function"
    ]
    problems = []
    for name in names:
        config = lambda_.get_function_configuration(FunctionName=name)
        layers = [entry["Arn"] for entry in config.get("Layers", [])]
        if (config["Runtime"], config["State"], layers) != ("python3.12", "Active", [layer]):
            problems.append(f"{name}: {config['Runtime']}, {config['State']}, layers {layers}")
    if problems:
        raise CheckError("functions not Active on python3.12 with the Powertools layer:\n  " + "\n  ".join(problems))
    return names


def check_function_logs(functions: list[str]) -> str:
    """Every function has written logs: each ran the handler code, which logs and emits metrics on stdout."""
    logs = client("logs")

    def wrote(name: str) -> bool:
        # LocalStack keeps a function's output in /aws/lambda/<name> whatever its logging config names.
        try:
            return bool(logs.filter_log_events(logGroupName=f"/aws/lambda/{name}", limit=1)["events"])
        except logs.exceptions.ResourceNotFoundException:
            return False

    def silent() -> list[str]:
        return [name for name in functions if not wrote(name)]

    with suppress(CheckError):
        wait_for("every function's logs", lambda: not silent(), timeout=60, every=1)
    # LocalStack's executor sometimes loses an invocation's output, and says so in its own log ("Received no logs
    # from invocation … for lambda <arn>"): such a function was invoked, and the drive checked what it did (every
    # function's work has an outcome the drive asserts). A function neither logging nor reported so never ran.
    quiet = silent()
    reported = set(re.findall(r"Received no logs from invocation .* for lambda \S*:function:([\w-]+)", _log()))
    unproven = [name for name in quiet if name not in reported]
    expect(not unproven, f"functions that never wrote a log line: {unproven}")
    lost = f" (LocalStack reported losing the output of {quiet}; the drive checked their work)" if quiet else ""
    return f"{len(functions)} functions ran the handler code: each wrote to its log group{lost}"


def outputs(stack: str) -> dict[str, str]:
    reply = client("cloudformation").describe_stacks(StackName=stack)
    return {o["OutputKey"]: o["OutputValue"] for o in reply["Stacks"][0].get("Outputs", [])}


def api_endpoint(api_url: str) -> str:
    """LocalStack serves a REST API stage at /_aws/execute-api/<api id>/<stage>/ on its gateway."""
    found = re.match(r"https?://([a-z0-9]+)\.execute-api\.[^/]+/([^/]+)/?", api_url)
    if found is None:
        raise CheckError(f"ApiUrl {api_url!r} does not name an API id and a stage")
    return f"{ENDPOINT}/_aws/execute-api/{found.group(1)}/{found.group(2)}"


# -- the API, through the arca CLI ------------------------------------------------------------------------------


class Arca:
    """The real `arca` CLI against the deployed API, signing every call with SigV4 as it does on AWS."""

    def __init__(self, endpoint: str) -> None:
        self.env = aws_env()
        self.env.pop("AWS_ENDPOINT_URL")
        self.env.pop("AWS_ENDPOINT_URL_S3")
        self.env.update(ARCA_ENDPOINT=endpoint, ARCA_SIGN="1", XDG_CONFIG_HOME=str(RUN / "config"))
        self.command = [str(ROOT / ".venv" / "bin" / "arca")]
        self.endpoint = endpoint

    def __call__(self, *args: str, json_output: bool = True) -> Any:
        out = run(
            [*self.command, *args, *(["--json"] if json_output else [])],
            env=self.env,
            log=RUN / "arca.log",
            timeout=120,
        )
        return json.loads(out) if json_output else out


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise CheckError(message)


def drive_api(arca: Arca, queue_url: str) -> list[str]:
    """Publish, resolve, download, alias move, rollout, feed, retention sweep, bus; returns the lines of what it
    proved."""
    proved: list[str] = []
    work = RUN / "files"
    work.mkdir()
    first, second = work / "app-1.bin", work / "app-2.bin"
    first.write_bytes(os.urandom(300_000))
    second.write_bytes(os.urandom(200_000))

    v1 = arca("publish", NAME, str(first), "--alias", "prod")
    v2 = arca("publish", NAME, str(second))
    expect((v1["version"], v2["version"]) == (1, 2), f"published versions {v1['version']}, {v2['version']}, not 1, 2")
    expect(v1["sha256"] == hashlib.sha256(first.read_bytes()).hexdigest(), "version 1's sha256 is not the file's")
    proved.append("publish: two versions uploaded through presigned S3 PUTs")

    resolved = arca("resolve", f"{NAME}@prod")
    expect(resolved["version"] == 1, f"prod resolved to {resolved['version']}, not 1")
    expect(resolved["download_url"].startswith(ENDPOINT), f"download URL {resolved['download_url']!r}")
    proved.append("resolve: prod -> 1 with a presigned download URL")

    target = work / "downloaded.bin"
    arca("download", f"{NAME}@2", "-o", str(target), json_output=False)
    expect(target.read_bytes() == second.read_bytes(), "downloaded bytes differ from version 2")
    proved.append("download: version 2, sha256 verified by the client")

    verified = work / "verified.bin"
    arca("download", f"{NAME}@2", "--verify", "-o", str(verified), json_output=False)
    expect(verified.read_bytes() == second.read_bytes(), "the verified download differs from version 2")
    expect(json.loads(v2["manifest"])["sha256"] == v2["sha256"], "version 2's signed manifest names other bytes")
    attested = arca("attest", f"{NAME}@2", "test-report", "--content", '{"passed": 12}')
    expect(arca("show", f"{NAME}@2")["attestations"] == ["test-report"], f"attestation not on version 2: {attested}")
    proved.append("signing: version 2 signed by the stage's KMS key, verified by the client; an attestation added")

    proved.append(verify_in_background(arca, work))

    arca("alias", "set", NAME, "staging", "1")
    moved = arca("alias", "set", NAME, "staging", "2", "--expect-version", "1", "--reason", "deploy check")
    expect(moved["version"] == 2, f"staging moved to {moved['version']}, not 2")
    expect(arca("resolve", f"{NAME}@staging")["version"] == 2, "staging does not resolve to 2 after the move")
    proved.append("alias move: staging 1 -> 2 (compare-and-set)")

    arca("rollout", "start", NAME, "prod", "2", "--steps", "50", "--interval", "1")
    final = arca("rollout", "status", NAME, "prod", "--watch", "--poll", "1")
    expect(final["state"] == "completed", f"rollout ended {final['state']}, not completed")
    expect(arca("resolve", f"{NAME}@prod")["version"] == 2, "prod does not resolve to 2 after the rollout")
    proved.append("rollout: prod 1 -> 2 at 50% then 100%, driven by the Step Functions state machine")

    proved.append(lease_and_release(arca))
    proved.append(tree_publish_and_download(arca, work))
    proved.append(oci_over_raw_http(arca.endpoint))
    with signing_proxy(arca) as host:
        proved.append(hugging_face_through_the_proxy(host, second.read_bytes()))
        proved.append(oci_through_the_proxy(host, work))

    feed = [event["type"] for event in arca("events", NAME)]
    for wanted in ("version.published", "alias.updated", "rollout.started", "rollout.completed"):
        expect(wanted in feed, f"the feed lacks {wanted}: {feed}")
    proved.append(f"event feed: {len(feed)} events")

    arca("retention", "set", NAME, "--keep-last", "1", "--rollback-window", "0")
    lambda_ = client("lambda")
    sweepers = [f["FunctionName"] for f in lambda_.list_functions()["Functions"] if "Retention" in f["FunctionName"]]
    expect(len(sweepers) == 1, f"retention functions: {sweepers}")
    # As the schedule invokes it (a pass now): version 1 has no alias left and not LATEST's content
    reply = lambda_.invoke(FunctionName=sweepers[0], Payload=json.dumps({"every_seconds": 0}).encode())
    swept = json.loads(reply["Payload"].read())
    expect("FunctionError" not in reply and swept.get("deleted") == 1, f"the retention sweep answered {swept}")
    proved.append(f"retention: the scheduled function applied {swept['artifacts']} policy, soft-deleting version 1")

    sqs = client("sqs")

    def delivered() -> list[str]:
        messages = sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=1)
        for message in messages.get("Messages", []):
            seen.append(json.loads(message["Body"])["detail-type"])
            sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"])
        return [t for t in ("version.published", "rollout.completed") if t not in seen] == [] and seen

    seen: list[str] = []
    wait_for("the stream consumer's events on the bus", delivered, timeout=90, every=0)
    proved.append(f"stream -> events function -> bus: {len(seen)} events received by a subscribed queue")
    return proved


def lease_and_release(arca: Arca) -> str:
    """A consumer's lease on what prod serves, listed, protecting its version from a soft delete, released."""
    lease = arca("lease", f"{NAME}@prod", "deploy:check", "--ttl", "3600")
    expect(lease["version"] == 2, f"the lease names version {lease['version']}, not 2")
    listed = [c["consumer"] for c in arca("consumers", NAME, "--version", "2")]
    expect(listed == ["deploy:check"], f"the consumers of version 2 are {listed}")
    arca("release", NAME, "deploy:check", json_output=False)
    expect(arca("consumers", NAME) == [], "the lease is still listed after its release")
    return "consumers: a lease on prod's version 2 taken, listed and released"


def tree_publish_and_download(arca: Arca, work: Path) -> str:
    """`arca publish NAME DIR` of three files (one in a subfolder), `arca files`, and `arca download` into a
    directory, every file compared."""
    source = work / "tree"
    contents = {
        "config.json": b'{"layers": 2}',
        "weights.bin": os.urandom(150_000),
        "tokenizer/vocab.txt": b"a b c\n",
    }
    for path, content in contents.items():
        (source / path).parent.mkdir(parents=True, exist_ok=True)
        (source / path).write_bytes(content)
    published = arca("publish", TREE_NAME, str(source))
    expect(published.get("files") == 3, f"the tree version holds {published.get('files')} files, not 3")
    listed = {f["path"]: f["sha256"] for f in arca("files", f"{TREE_NAME}@{published['version']}")}
    wanted = {path: hashlib.sha256(content).hexdigest() for path, content in contents.items()}
    expect(listed == wanted, f"arca files lists {sorted(listed)}, not {sorted(wanted)} with their sha256")
    back = work / "tree-back"
    arca("download", f"{TREE_NAME}@{published['version']}", "-o", str(back), json_output=False)
    for path, content in contents.items():
        expect((back / path).is_file() and (back / path).read_bytes() == content, f"downloaded {path} differs")
    return "trees: arca publish of a directory (3 files, one in a subfolder), arca files, arca download of each file"


def oci_over_raw_http(endpoint: str) -> str:
    """OCI Distribution with raw HTTP under the stage's path, signed as the API requires: the base check, two
    monolithic blob uploads, a manifest PUT with a tag, the manifest by tag (and at the Location the PUT gave, which
    keeps the stage), a blob GET following its 307 to S3, tags/list."""
    import requests
    from botocore.credentials import Credentials

    from arca_client.transport import Signer, encode_query

    signer = Signer(
        REGION, credentials=Credentials(CREDENTIALS["AWS_ACCESS_KEY_ID"], CREDENTIALS["AWS_SECRET_ACCESS_KEY"])
    )
    # On AWS the stage is the first segment of the path, which the request context's path holds, so a Location is
    # `/<stage>/v2/…`; LocalStack's gateway serves the stage under `/_aws/execute-api/<api id>` too, which the
    # function is not told: a Location is followed from there.
    gateway = endpoint.removesuffix(f"/{STAGE}")
    expect(gateway != endpoint, f"the endpoint {endpoint!r} does not end with the stage {STAGE!r}")
    stage = urlsplit(endpoint).path.removeprefix(urlsplit(gateway).path)

    def call(method: str, url: str, body: bytes = b"", headers: dict[str, str] | None = None) -> Any:
        signed = signer.sign(method, url, dict(headers or {}), body)
        return requests.request(method, url, data=body, headers=signed, allow_redirects=False, timeout=60)

    def digest(content: bytes) -> str:
        return "sha256:" + hashlib.sha256(content).hexdigest()

    repo = f"{NAME}-raw"
    base = call("GET", f"{endpoint}/v2/")
    expect(base.status_code == 200, f"GET /v2/ answered {base.status_code}: {base.text[:300]}")
    layer, config = os.urandom(120_000), b"{}"
    for content in (config, layer):
        query = encode_query({"digest": digest(content)})
        url = f"{endpoint}/v2/{repo}/blobs/uploads/?{query}"
        pushed = call("POST", url, content, {"Content-Type": "application/octet-stream"})
        expect(pushed.status_code == 201, f"the monolithic upload answered {pushed.status_code}: {pushed.text[:300]}")
        expect(
            pushed.headers.get("Location", "").startswith(f"{stage}/v2/{repo}/blobs/"),
            f"the upload's Location {pushed.headers.get('Location')!r} is not under the stage path {stage!r}",
        )
    manifest = json.dumps(
        {
            "schemaVersion": 2,
            "mediaType": OCI_MANIFEST,
            "config": {"mediaType": "application/vnd.oci.empty.v1+json", "digest": digest(config), "size": 2},
            "layers": [
                {
                    "mediaType": "application/vnd.oci.image.layer.v1.tar",
                    "digest": digest(layer),
                    "size": len(layer),
                    "annotations": {"org.opencontainers.image.title": "model.bin"},
                }
            ],
        }
    ).encode()
    put = call("PUT", f"{endpoint}/v2/{repo}/manifests/v1", manifest, {"Content-Type": OCI_MANIFEST})
    expect(put.status_code == 201, f"the manifest PUT answered {put.status_code}: {put.text[:300]}")
    expect(put.headers.get("Docker-Content-Digest") == digest(manifest), "the manifest PUT names another digest")
    for url in (f"{endpoint}/v2/{repo}/manifests/v1", gateway + put.headers["Location"]):
        got = call("GET", url, headers={"Accept": OCI_MANIFEST})
        expect(got.status_code == 200 and got.content == manifest, f"GET {url} answered {got.status_code}, other bytes")
    redirected = call("GET", f"{endpoint}/v2/{repo}/blobs/{digest(layer)}")
    expect(redirected.status_code == 307, f"the blob GET answered {redirected.status_code}, not a 307")
    fetched = requests.get(redirected.headers["Location"], timeout=60)
    expect(
        fetched.status_code == 200 and fetched.content == layer, "the blob fetched from S3 differs from the pushed one"
    )
    tags = call("GET", f"{endpoint}/v2/{repo}/tags/list")
    expect(tags.status_code == 200 and tags.json() == {"name": repo, "tags": ["v1"]}, f"tags/list: {tags.text[:300]}")
    return (
        "oci: raw HTTP under the stage path, signed: base check, 2 monolithic blob uploads, manifest PUT as v1, the"
        " manifest by tag and at its Location, a blob through its 307 to S3, tags/list"
    )


@contextmanager
def signing_proxy(arca: Arca) -> Iterator[str]:
    """`arca proxy` on a free port of 127.0.0.1, signing every call to the deployed API; yields its host:port."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = (RUN / "proxy.log").open("ab")
    proxy = subprocess.Popen(
        [*arca.command, "proxy", "--port", str(port)],
        cwd=ROOT,
        env=arca.env,
        stdout=log,
        stderr=log,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            expect(proxy.poll() is None and time.monotonic() < deadline, "arca proxy did not start (proxy.log)")
            time.sleep(0.2)
        yield f"127.0.0.1:{port}"
    finally:
        stop(proxy, grace=3)
        log.close()


def hugging_face_through_the_proxy(host: str, content: bytes) -> str:
    """The real huggingface_hub reads version 2 through `arca proxy`, which signs its calls as the API requires."""
    from huggingface_hub import HfApi, hf_hub_download

    endpoint = f"http://{host}/hf"
    (filename,) = HfApi(endpoint=endpoint).list_repo_files(NAME, revision="2")
    fetched = hf_hub_download(NAME, filename, revision="2", endpoint=endpoint, cache_dir=RUN / "hf-cache")
    expect(Path(fetched).read_bytes() == content, "huggingface_hub fetched other bytes than version 2's")
    return f"hugging face: huggingface_hub downloaded version 2 ({filename}) through arca proxy, signed"


def oci_through_the_proxy(host: str, work: Path) -> str:
    """oras-py pushes two files as a tagged manifest through `arca proxy` (the larger over what one request carries:
    the proxy uploads it to S3 itself) and pulls them back byte-identical."""
    import oras.client

    files = [work / "oci" / "model.bin", work / "oci" / "config.json"]
    files[0].parent.mkdir()
    files[0].write_bytes(os.urandom(6 * 1024 * 1024))  # over what one request to the API carries: the proxy uploads it
    files[1].write_bytes(b'{"layers": 2}')
    client = oras.client.OrasClient(hostname=host, insecure=True)
    target = f"{host}/{NAME}-oci:v1"
    pushed = client.push(target=target, files=[str(f) for f in files], disable_path_validation=True)
    expect(pushed.status_code == 201, f"the manifest push answered {pushed.status_code}: {pushed.text[:300]}")
    pulled = client.pull(target=target, outdir=str(work / "oci-pulled"))
    got = {Path(p).name: Path(p).read_bytes() for p in pulled}
    expect(got == {f.name: f.read_bytes() for f in files}, f"oras pulled other files: {sorted(got)}")
    tags = list(client.get_tags(f"{host}/{NAME}-oci"))
    expect(tags == ["v1"], f"the tags of {NAME}-oci are {tags}")
    return (
        "oci: oras-py pushed 2 files (one of 6 MiB, over one request's bound) as a tagged manifest through arca proxy"
        " and pulled them back byte-identical"
    )


def verify_in_background(arca: Arca, work: Path) -> str:
    """A multipart publish (its content hashed server-side in `complete`), then a step of the background
    verification as the state machine runs it for content over the inline limit: the `verify` function reads the
    upload session and answers `done`."""
    part = 5 * 1024 * 1024
    content = os.urandom(part + 700_000)
    source = work / "parts.bin"
    source.write_bytes(content)
    published = arca("publish", PARTS_NAME, str(source), "--part-size", str(part))
    expect(published["sha256"] == hashlib.sha256(content).hexdigest(), "the multipart version names other bytes")
    digests = b"".join(hashlib.sha256(content[at : at + part]).digest() for at in range(0, len(content), part))
    upload = f"{published['sha256']}.{hashlib.sha256(digests).hexdigest()}"
    sfn = client("stepfunctions")
    machines = [m["stateMachineArn"] for m in sfn.list_state_machines()["stateMachines"] if "Verification" in m["name"]]
    expect(len(machines) == 1, f"verification state machines: {machines}")
    execution = sfn.start_execution(
        stateMachineArn=machines[0], input=json.dumps({"name": PARTS_NAME, "upload": upload})
    )["executionArn"]
    ended = wait_for(
        "the verification's execution",
        lambda: (reply := sfn.describe_execution(executionArn=execution))["status"] != "RUNNING" and reply,
        timeout=90,
    )
    expect(ended["status"] == "SUCCEEDED", f"the verification ended {ended['status']}: {ended.get('error')}")
    expect(json.loads(ended["output"]).get("done") is True, f"the verification answered {ended.get('output')}")
    return "multipart: 2 parts hashed server-side on complete; the verification state machine's step answered done"


def subscribe_queue(bus: str) -> str:
    """A queue receiving every event the stage's bus carries (source `arca`)."""
    sqs, events = client("sqs"), client("events")
    queue_url = sqs.create_queue(QueueName="arca-deploy-check")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    events.put_rule(Name="arca-deploy-check", EventBusName=bus, EventPattern=json.dumps({"source": ["arca"]}))
    events.put_targets(Rule="arca-deploy-check", EventBusName=bus, Targets=[{"Id": "queue", "Arn": arn}])
    return str(queue_url)


# -- main -------------------------------------------------------------------------------------------------------


def main() -> int:
    timings = Timings()
    localstack: subprocess.Popen[bytes] | None = None
    summary: list[str] = []

    def interrupted(signum: int, _frame: Any) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, interrupted)
    try:
        with timings.phase("setup (cached after the first run)"):
            run([str(ROOT / "deploy" / "setup.sh")], timeout=1200)
        shutil.rmtree(RUN, ignore_errors=True)
        RUN.mkdir(parents=True)
        with timings.phase("start LocalStack"):
            localstack = start_localstack()
            wait_for("LocalStack on " + GATEWAY, lambda: localstack.poll() is None and localstack_ready(), timeout=120)
            expect(localstack.poll() is None, f"LocalStack exited:\n{_tail(RUN / 'localstack.log')}")
        # DynamoDB Local starts on the first DynamoDB call and LocalStack gives it only 4 s: started now, it is
        # up long before the storage stack creates the table, however loaded the machine.
        dynamodb_up = background(lambda: wait_for("DynamoDB Local", client("dynamodb").list_tables, timeout=120))
        with timings.phase("publish the Powertools layer"):
            layer = publish_layer()
        with timings.phase("cdk bootstrap"):
            cdk("bootstrap", f"aws://{ACCOUNT}/{REGION}")
        dynamodb_up()
        context = ["-c", f"stage={STAGE}", "-c", f"powertools_layer_arn={layer}"]
        with timings.phase("cdk deploy --all"):
            cdk("deploy", "--all", *context, "--require-approval", "never", "--progress", "events", timeout=600)
        with timings.phase("check every resource"):
            counts = check_resources(stacks_of_assembly())
            summary += [f"{stack}: {count} resources CREATE_COMPLETE" for stack, count in counts.items()]
            functions = check_functions(stacks_of_assembly(), layer)
            summary.append(f"{len(functions)} functions Active on python3.12 with the Powertools layer")
        service = outputs(f"Arca-{STAGE}")
        endpoint = api_endpoint(service["ApiUrl"])
        queue_url = subscribe_queue(service["EventBusName"])
        with timings.phase("drive the API with the arca CLI"):
            summary += drive_api(Arca(endpoint), queue_url)
            summary.append(check_function_logs(functions))
    except (CheckError, subprocess.TimeoutExpired, KeyboardInterrupt) as error:
        print(f"\nFAILED: {error}\n{_localstack_problems()}logs: {RUN}/", file=sys.stderr)
        return 1
    finally:
        with timings.phase("stop every process"):
            stop(localstack)
        print("\nTimings:\n" + timings.report(), flush=True)
    print("\nDeploy test passed:\n  " + "\n  ".join(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
