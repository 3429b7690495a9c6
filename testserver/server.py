"""The test server's HTTP side: a `WandbServer` answers POST /graphql on 127.0.0.1 (auth,
faults, hooks, latency, the request log) with its `Api`; `serve` runs one from a state file."""

from __future__ import annotations

import base64
import contextlib
import json
import re
import sys
import threading
import time
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from testserver.api import Api
from testserver.faults import Fault
from testserver.schema import PERMISSION
from testserver.state import Request, WandbState, b64, load_state


class WandbServer(Api):
    """A running server: `url`, `api_key`, `state` (the first project), `states` (every
    project: `more`, and those given to `add_project`), `requests`, and fault controls."""

    def __init__(
        self,
        state: WandbState,
        api_key: str = "k" * 40,
        more: Iterable[WandbState] = (),
        port: int = 0,
    ) -> None:
        super().__init__(state, more)
        self.api_key = api_key
        self.requests: list[Request] = []
        self.timings: list[tuple[str, str | None, float]] = []  # operation, viewType, seconds
        self.faults: list[Fault] = []  # consumed one per /graphql request
        self.chaos: Callable[[str], Fault | None] | None = None  # a fault, or not, per request
        self.latency = 0.0
        self.hooks: dict[str, Callable[[dict[str, Any]], None]] = {}
        self.dead = False  # died of a fault: no connection kept alive is answered either
        self._lock = threading.Lock()
        self._serving = 0  # requests being answered now (`idle`)
        self._served = threading.Condition(self._lock)
        self._http = _QuietServer(("127.0.0.1", port), self._handler())
        self._http.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._http.server_address[1]}"
        # `stop` waits for the serving loop to look again: every 0.5 s by default, 0.01 s here.
        self._thread = threading.Thread(
            target=self._http.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    def __enter__(self) -> WandbServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        self._http.shutdown()
        self._http.server_close()

    def edit_on(
        self, operation: str, object_id: str, change: Callable[[Any], Any], times: int = 1
    ) -> None:
        """A colleague's edit of `object_id` (see `WandbState.edit`), made just before the
        server answers `operation` about it (the `id` of its variables or input) or, for a
        listing, before the next one; `times` times at most. Replaces that operation's hook."""
        left = [times]

        def hook(variables: dict[str, Any]) -> None:
            about = variables.get("id") or (variables.get("input") or {}).get("id")
            if left[0] > 0 and about in (object_id, None):
                left[0] -= 1
                self._owner(object_id).edit(object_id, change)

        self.hooks[operation] = hook

    def idle(self, timeout: float = 60) -> bool:
        """Until no request is being answered (a killed client's writes in flight have landed):
        an event to wait on, not a time; `timeout` only bounds a failing test."""
        with self._served:
            return self._served.wait_for(lambda: not self._serving, timeout)

    def mutations(self) -> list[Request]:
        return [
            r
            for r in self.requests
            if r.operation.startswith(("Wbmigrate", "Update"))
            and ("upsertView" in r.body or "updateFilterTrigger" in r.body)
        ]

    # --- HTTP ------------------------------------------------------------------------------

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in two writes: with Nagle's algorithm on, the body waits
            # for the client's delayed ACK, 40 ms a response (as no real server does).
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                if self.path == "/_stats":  # for benchmarks: each request's time in the server
                    with server._lock:
                        self._send(200, {"timings": server.timings})
                else:
                    self._send(404, {"error": "not found"})

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path.rstrip("/") != "/graphql":
                    self._send(404, {"error": "not found"})
                    return
                started = time.perf_counter()
                self.recorded: Request | None = None
                with server._lock:
                    server._serving += 1
                try:
                    server._serve(self, body.decode())
                finally:  # logged too when the client hung up first: its request was served
                    served = time.perf_counter() - started - server.latency  # beyond latency
                    with server._lock:
                        server._serving -= 1
                        server._served.notify_all()
                        if self.recorded is not None:
                            operation, variables = self.recorded.operation, self.recorded.variables
                            server.timings.append((operation, variables.get("viewType"), served))

            def _send(
                self,
                status: int,
                payload: Any,
                headers: dict[str, str] | None = None,
                fault: Fault | None = None,
                reason: str | None = None,
            ) -> None:
                data = json.dumps(payload).encode()
                if fault is not None and fault.raw is not None:
                    data = fault.raw(data)
                self._write(status, data, headers, fault, reason)

            def _write(
                self,
                status: int,
                data: bytes,
                headers: dict[str, str] | None = None,
                fault: Fault | None = None,
                reason: str | None = None,
            ) -> None:
                self.send_response(status, reason)
                for key, value in {"Content-Type": "application/json", **(headers or {})}.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                if fault is None or not fault.drip:
                    self.end_headers()
                    self.wfile.write(data)
                    return
                buffer: list[bytes] = vars(self)["_headers_buffer"]  # set by send_header
                head = b"".join(buffer)
                buffer.clear()
                self._drip(head + b"\r\n", fault.drip if fault.drip_headers else 0.0)
                self._drip(data, fault.drip)

            def _drip(self, data: bytes, every: float) -> None:
                """Send `data` one byte every `every` seconds (at once when 0), until the
                client hangs up."""
                if not every:
                    self.wfile.write(data)
                    return
                for i in range(len(data)):
                    try:
                        self.wfile.write(data[i : i + 1])
                        self.wfile.flush()
                    except OSError:
                        self.close_connection = True
                        return
                    time.sleep(every)

        return Handler

    def _serve(self, handler: Any, body: str) -> None:
        if self.dead:
            handler.close_connection = True
            return
        try:
            request = json.loads(body)
        except ValueError:
            handler._send(400, {"errors": [{"message": "body is not JSON"}]})
            return
        query = request.get("query") or ""
        variables = request.get("variables") or {}
        match = re.search(r"\b(?:query|mutation)\s+(\w+)", query)
        operation = request.get("operationName") or (match.group(1) if match else "")
        expected = "Basic " + b64(f"api:{self.api_key}")
        authorized = handler.headers.get("Authorization") == expected
        handler.recorded = Request(operation, variables, authorized, dict(handler.headers), body)
        with self._lock:
            self.requests.append(handler.recorded)
            fault = next((f for f in self.faults if f.operation in (None, operation)), None)
            if fault is not None and not fault.sticky:
                self.faults.remove(fault)
            elif self.chaos is not None:
                fault = self.chaos(operation)
        time.sleep(self.latency + (fault.delay if fault else 0))
        if fault and fault.die:
            self.dead = True
            threading.Thread(target=self.stop, daemon=True).start()
            handler.close_connection = True
            return
        if fault and fault.drop:
            handler.close_connection = True
            handler.connection.shutdown(2)
            return
        if fault and fault.echo_key:
            self._echo(handler, fault)
            return
        if fault and fault.body is not None:
            handler._write(fault.status or 200, fault.body, fault.headers, fault)
            return
        if fault and fault.status:
            injected = {"errors": [{"message": "injected"}]}
            handler._send(fault.status, injected, fault.headers, fault)
            return
        if not authorized:
            handler._send(401, {"errors": [{"message": "unauthorized"}]})
            return
        hook = self.hooks.get(operation)
        if hook:
            ids = [v for k, v in variables.items() if re.fullmatch(r"id\d+", k)]
            for each in [{"id": i} for i in ids] or [variables]:
                hook(each)
        result = self.execute(query, variables)
        payload: Any = {"data": result.data}
        refused = [e for e in result.errors or [] if (e.extensions or {}).get("code") == PERMISSION]
        if result.errors:
            payload["errors"] = [
                {"message": e.message, "path": e.path, "extensions": e.extensions}
                if e in refused
                else {"message": e.message}
                for e in result.errors
            ]
        if fault and fault.answer:
            payload = fault.answer(payload, variables)
        handler._send(403 if refused else 200, payload, fault.headers if fault else None, fault)

    def _echo(self, handler: Any, fault: Fault) -> None:
        """An error that repeats the request's Authorization header and API key."""
        auth = handler.headers.get("Authorization") or ""
        try:
            key = base64.b64decode(auth.removeprefix("Basic ")).decode().partition(":")[2]
        except ValueError:
            key = ""
        message = f"request refused: Authorization: {auth} (api key {key})"
        status = fault.status or 200
        payload: dict[str, Any] = {"errors": [{"message": message}], "error": message}
        if status == 200:
            payload["data"] = None
        handler._send(status, payload, fault.headers, fault, reason=message)


class _QuietServer(ThreadingHTTPServer):
    """A server that prints nothing when a client hangs up mid-answer (as clients that give
    up on a dripping answer do): the tests read stderr. Other errors are printed."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)


DEMO = Path(__file__).resolve().parent.parent / "fixtures" / "demo-project"


def sandbox(port: int) -> int:
    """The demo project (with a draft, as the docs show it) on 127.0.0.1:`port` until Ctrl-C:
    a W&B to try every live command on. Its exit code: 1 when the port is taken."""
    state = WandbState()
    state.load_demo(DEMO, draft=True)
    try:
        server = WandbServer(state, port=port)
    except OSError as exc:
        print(
            f"Error: cannot listen on 127.0.0.1:{port} ({exc.strerror}): try --port N",
            file=sys.stderr,
        )
        return 1
    with server:
        print(
            f"Serving the demo project {state.entity}/{state.project} on {server.url} until "
            f"Ctrl-C. In another shell:\n"
            f"  export WANDB_BASE_URL={server.url} WANDB_API_KEY={server.api_key}",
            flush=True,
        )
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()
    return 0


def serve(state_file: Path, latency: float) -> None:
    """Run a server holding the project of a JSON file (and the further ones of its
    `projects` list) until stopped (benchmarks). Prints its URL and API key on the first line
    of stdout."""
    data = json.loads(state_file.read_text())
    more = [load_state(d, 1000 * i + 1) for i, d in enumerate(data.get("projects", []), 1)]
    server = WandbServer(load_state(data), more=more)
    server.latency = latency
    with server:
        print(f"{server.url} {server.api_key}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()
