"""A scripted HTTP server standing in for a Schema Registry in the client's unit tests.

``FakeRegistry`` records every request (method, path with query, headers, JSON body) and answers with
``answer(request) -> (status, body)``; the default answers a small in-memory registry (register, get by id,
versions, latest, lookup) enough to drive the serializers. Runs on 127.0.0.1, a free port, a thread per
connection, HTTP/1.1 keep-alive.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any
    connection: int  # the server's number of the connection it came on


@dataclass
class MemoryRegistry:
    """Subjects' versions and ids, Confluent's answers (ids shared by identical schemas)."""

    schemas: list[dict[str, Any]] = field(default_factory=list)  # index = id - 1
    subjects: dict[str, list[int]] = field(default_factory=dict)  # subject -> ids by version

    def answer(self, request: Request) -> tuple[int, Any]:
        parts = [unquote(p) for p in request.path.strip("/").split("/")]
        body = request.body
        if parts[:2] == ["schemas", "ids"] and len(parts) == 3:
            schema_id = int(parts[2])
            if not 0 < schema_id <= len(self.schemas):
                return 404, {"error_code": 40403, "message": "Schema not found"}
            return 200, self.schemas[schema_id - 1]
        if parts[0] == "subjects" and len(parts) == 3 and request.method == "POST":
            subject = parts[1]
            stored = self._stored(body)
            ids = self.subjects.setdefault(subject, [])
            schema_id = self._id_of(stored)
            if schema_id not in ids:
                ids.append(schema_id)
            return 200, {"id": schema_id}
        if parts[0] == "subjects" and len(parts) == 2 and request.method == "POST":
            subject, stored = parts[1], self._stored(body)
            if subject not in self.subjects:
                return 404, {"error_code": 40401, "message": f"Subject '{subject}' not found."}
            if stored not in self.schemas or self.schemas.index(stored) + 1 not in self.subjects[subject]:
                return 404, {"error_code": 40403, "message": "Schema not found"}
            schema_id = self.schemas.index(stored) + 1
            version = self.subjects[subject].index(schema_id) + 1
            return 200, {"subject": subject, "id": schema_id, "version": version, **stored}
        if parts[0] == "subjects" and len(parts) == 4 and parts[2] == "versions":
            subject = parts[1]
            if subject not in self.subjects:
                return 404, {"error_code": 40401, "message": f"Subject '{subject}' not found."}
            ids = self.subjects[subject]
            version = len(ids) if parts[3] == "latest" else int(parts[3])
            if not 0 < version <= len(ids):
                return 404, {"error_code": 40402, "message": f"Version {parts[3]} not found."}
            schema_id = ids[version - 1]
            return 200, {"subject": subject, "version": version, "id": schema_id, **self.schemas[schema_id - 1]}
        return 404, {"error_code": 404, "message": "HTTP 404 Not Found"}

    @staticmethod
    def _stored(body: dict[str, Any]) -> dict[str, Any]:
        stored = {"schema": body["schema"]}
        if body.get("schemaType", "AVRO") != "AVRO":
            stored["schemaType"] = body["schemaType"]
        if body.get("references"):
            stored["references"] = body["references"]
        return stored

    def _id_of(self, stored: dict[str, Any]) -> int:
        if stored not in self.schemas:
            self.schemas.append(stored)
        return self.schemas.index(stored) + 1


class FakeRegistry:
    """``drop_idle``: close each connection after its answer without saying so (as a server timing out an
    idle keep-alive connection does); ``delay``: seconds to wait before answering."""

    def __init__(
        self, answer: Callable[[Request], tuple[int, Any]] | None = None, *, drop_idle: bool = False, delay: float = 0
    ) -> None:
        self.memory = MemoryRegistry()
        self.answer = answer or self.memory.answer
        self.requests: list[Request] = []
        self._connections = itertools.count(1)
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def setup(self) -> None:
                super().setup()
                self.connection_number = next(fake._connections)

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                parts = urlsplit(self.path)
                request = Request(
                    self.command,
                    parts.path,
                    {k: v[-1] for k, v in parse_qs(parts.query).items()},
                    {k.lower(): v for k, v in self.headers.items()},
                    json.loads(raw) if raw else None,
                    self.connection_number,
                )
                fake.requests.append(request)
                if delay:
                    time.sleep(delay)
                status, body = fake.answer(request)
                data = b"" if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
                self.send_response(status)
                self.send_header("Content-Type", "application/vnd.schemaregistry.v1+json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                if drop_idle:
                    self.close_connection = True

            do_GET = do_POST = do_PUT = do_DELETE = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeRegistry:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
