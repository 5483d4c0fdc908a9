"""LocalStack's Lambda executor without Docker: each execution environment is a local process.

LocalStack's free core runs functions only in Docker containers. This executor runs the function as Lambda
does, with AWS's own runtime interface client: the deployed code and layer zips are unpacked (LocalStack's
own `prepare_for_execution`), the Lambda Runtime API (`/2018-06-01/runtime/...`) is served on 127.0.0.1,
and `<python> -m awslambdaric <handler>` polls it, imports the handler and answers each invocation.

The interpreter for runtime `python3.12` is named by the environment variable `ARCA_LAMBDA_PYTHON3_12`
(a virtualenv holding `awslambdaric` and the boto3 the Lambda runtime provides); any other runtime fails
to start. Layers are put on PYTHONPATH in the order Lambda gives them (`/opt/python` and its
`lib/pythonX.Y/site-packages`), after the function's code, before the runtime's own packages.
"""

from __future__ import annotations

import functools
import os
import queue
import subprocess
import threading
import time
from concurrent.futures import Future
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from localstack.services.lambda_.invocation.lambda_models import FunctionVersion, InvocationResult
from localstack.services.lambda_.invocation.plugins import RuntimeExecutorPlugin
from localstack.services.lambda_.invocation.runtime_executor import LambdaRuntimeException, RuntimeExecutor

API_PREFIX = "/2018-06-01/runtime"
# Past this, a runtime that has not asked for its first invocation is reported as failed to start
# (LocalStack's own startup timer, LAMBDA_RUNTIME_ENVIRONMENT_TIMEOUT, stops it earlier if shorter).
STARTUP_SECONDS = 60.0
_STOP = object()


class RuntimeApi:
    """The Lambda Runtime API for one execution environment: one invocation at a time, as Lambda does."""

    def __init__(self, timeout_seconds: int) -> None:
        self.timeout_seconds = timeout_seconds
        self.ready = threading.Event()
        self.init_error: bytes | None = None
        self.invocations: queue.Queue[Any] = queue.Queue()
        self.results: dict[str, Future[tuple[bytes, bool]]] = {}
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _reply(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> None:
                self.send_response(status)
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                if self.path != f"{API_PREFIX}/invocation/next":
                    self._reply(404, b'{"errorMessage": "unknown path"}')
                    return
                api.ready.set()
                item = api.invocations.get()
                if item is _STOP:
                    # The runtime is being stopped: nothing more to say to it.
                    self.close_connection = True
                    return
                deadline_ms = int((time.time() + api.timeout_seconds) * 1000)
                headers = {
                    "Lambda-Runtime-Aws-Request-Id": item["invoke-id"],
                    "Lambda-Runtime-Deadline-Ms": str(deadline_ms),
                    "Lambda-Runtime-Invoked-Function-Arn": item["invoked-function-arn"],
                    "Lambda-Runtime-Trace-Id": item.get("trace-id") or "",
                }
                self._reply(200, item["payload"].encode(), headers)

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                parts = self.path.removeprefix(API_PREFIX).strip("/").split("/")
                if parts == ["init", "error"]:
                    api.init_error = body
                    self._reply(202, b'{"status": "OK"}')
                    return
                if len(parts) == 3 and parts[0] == "invocation" and parts[2] in ("response", "error"):
                    future = api.results.get(parts[1])
                    if future is not None and not future.done():
                        future.set_result((body, parts[2] == "error"))
                        self._reply(202, b'{"status": "OK"}')
                        return
                self._reply(400, b'{"errorMessage": "no such invocation"}')

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.address = f"127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, name=f"runtime-api-{self.address}")
        self.thread.daemon = True
        self.thread.start()

    def invoke(self, payload: dict[str, Any]) -> tuple[bytes, bool]:
        future: Future[tuple[bytes, bool]] = Future()
        self.results[payload["invoke-id"]] = future
        self.invocations.put(payload)
        try:
            # LocalStack enforces the function's timeout itself (it stops the environment); this only bounds
            # the wait should that ever not happen.
            return future.result(timeout=self.timeout_seconds + 60)
        finally:
            self.results.pop(payload["invoke-id"], None)

    def close(self) -> None:
        self.invocations.put(_STOP)
        for future in list(self.results.values()):
            future.cancel()
        self.server.shutdown()
        self.server.server_close()


class ProcessRuntimeExecutor(RuntimeExecutor):
    """One execution environment: a Runtime API server and the runtime process that polls it."""

    def __init__(self, id: str, function_version: FunctionVersion) -> None:
        super().__init__(id=id, function_version=function_version)
        self.api: RuntimeApi | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self.logs: list[str] = []
        self.logs_lock = threading.Lock()

    def start(self, env_vars: dict[str, str]) -> None:
        config = self.function_version.config
        python = _interpreter(str(config.runtime))
        code = Path(config.code.get_unzipped_code_location())
        layers = [Path(layer.code.get_unzipped_code_location()) for layer in config.layers]
        version = str(config.runtime).removeprefix("python")
        path = [str(code)]
        for layer in layers:
            path += [str(layer / "python"), str(layer / "python" / "lib" / f"python{version}" / "site-packages")]
        self.api = RuntimeApi(int(config.timeout))
        env = {key: str(value) for key, value in env_vars.items()}
        env.update(
            PATH=os.environ.get("PATH", "/usr/bin:/bin"),
            LANG="en_US.UTF-8",
            HOME=str(code.parent),
            AWS_LAMBDA_RUNTIME_API=self.api.address,
            LAMBDA_TASK_ROOT=str(code),
            PYTHONPATH=os.pathsep.join(path),
            PYTHONDONTWRITEBYTECODE="1",
        )
        self.process = subprocess.Popen(
            [python, "-m", "awslambdaric", config.handler],
            cwd=code,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        threading.Thread(target=self._collect_logs, args=(self.process,), daemon=True).start()
        deadline = time.monotonic() + STARTUP_SECONDS
        while not self.api.ready.wait(0.05):
            if self.process.poll() is not None or time.monotonic() > deadline:
                error = (self.api.init_error or b"").decode(errors="replace")
                self.stop()
                raise LambdaRuntimeException(
                    f"runtime of {self.function_version.id.function_name} did not start: {error or self.get_logs()}"
                )

    def _collect_logs(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stdout is not None
        for line in iter(process.stdout.readline, b""):
            with self.logs_lock:
                self.logs.append(line.decode(errors="replace"))

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=3)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.api is not None:
            self.api.close()
            self.api = None

    def get_address(self) -> str:
        return "127.0.0.1"

    def get_endpoint_from_executor(self) -> str:
        return "127.0.0.1"

    def get_runtime_endpoint(self) -> str:
        return f"http://{self.api.address if self.api else '127.0.0.1'}"

    def invoke(self, payload: dict[str, Any]) -> InvocationResult:
        if self.api is None:
            raise LambdaRuntimeException("invoked before start")
        with self.logs_lock:
            first_line = len(self.logs)
        body, is_error = self.api.invoke(payload)
        with self.logs_lock:
            logs = "".join(self.logs[first_line:])
        return InvocationResult(payload["invoke-id"], body, is_error=is_error, logs=logs)

    def get_logs(self) -> str:
        with self.logs_lock:
            return "".join(self.logs)

    @classmethod
    def prepare_version(cls, function_version: FunctionVersion) -> None:
        _interpreter(str(function_version.config.runtime))
        function_version.config.code.prepare_for_execution()
        for layer in function_version.config.layers:
            layer.code.prepare_for_execution()

    @classmethod
    def cleanup_version(cls, function_version: FunctionVersion) -> None:
        pass


@functools.cache
def _interpreter(runtime: str) -> str:
    """The interpreter for `runtime` (python3.12: $ARCA_LAMBDA_PYTHON3_12), checked to be that Python."""
    variable = "ARCA_LAMBDA_" + runtime.upper().replace(".", "_")
    python = os.environ.get(variable)
    if not runtime.startswith("python") or not python:
        raise LambdaRuntimeException(f"no interpreter for runtime {runtime}: set {variable}")
    version = subprocess.run(
        [python, "-c", "import sys; print('python%d.%d' % sys.version_info[:2])"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    if version != runtime:
        raise LambdaRuntimeException(f"{variable}={python} is {version or 'not a Python'}, not {runtime}")
    return python


class ProcessExecutorPlugin(RuntimeExecutorPlugin):
    name = "process"

    def load(self, *args: Any, **kwargs: Any) -> type[RuntimeExecutor]:
        return ProcessRuntimeExecutor
