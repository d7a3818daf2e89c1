"""What the hostile-input tests share: the command line as a child process with a time limit, a look at a folder,
and a hostile stand-in for the Messages API on 127.0.0.1 that the tests start themselves (no network, no key).

The server answers like the API with the lesson's scripted conversation; `plan(n, body)` may replace the answer to
request number n (1-based) with something hostile: odd JSON, garbage, a stall, a trickle of bytes, an error status
with escape sequences in its text. Nothing here imports the harness but the scripted model, so the same tests run
against older versions of the package (how "failed before" was checked).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import zygote

# Settings of the parent's environment that must not leak into a child.
PRIVATE = ("CRASH_AFTER", "CRASH_MODE", "HARNESS_SLOW_MS", "HARNESS_EVENTS_FILE", "HARNESS_API_DEADLINE_S")
FIXED_TIME = {"HARNESS_FIXED_TIME_MS": "1767225600000"}
LOG_LINE = re.compile(r"(read_notes|count_words|write_report) toolu_0[1-3]")


def child_env(env: dict | None = None) -> dict:
    full = {k: v for k, v in os.environ.items() if k not in PRIVATE}
    full.update(FIXED_TIME)
    full.update(env or {})
    return full


def cli(
    work: Path, *args: str, env: dict | None = None, timeout: float = 120, prefix: tuple = (), **kw
) -> subprocess.CompletedProcess:
    """`python -m harness --workdir WORK ARGS` to its end, within `timeout` seconds (a hang fails the test).
    `prefix` runs it through another command (e.g. setpriv, to run it as an ordinary user). A run of the real client
    starts from this worker's zygote (zygote.py), which has imported the SDK already."""
    argv = [*prefix, sys.executable, "-m", "harness", "--workdir", str(work), *args]
    if "--real" in args and not prefix and not kw:
        return zygote.run(argv, child_env(env), timeout)
    return subprocess.run(
        argv,
        capture_output=True,
        text=True,
        env=child_env(env),
        timeout=timeout,
        check=False,
        **kw,
    )


def crashed(work: Path, label: str) -> None:
    proc = cli(work, env={"CRASH_AFTER": label})
    assert proc.returncode == 137, proc.stderr


def snapshot(work: Path) -> dict:
    """Every entry of the folder: a file's bytes, a link's target, or its kind."""
    out = {}
    for p in sorted(Path(work).iterdir()):
        if p.is_symlink():
            out[p.name] = ("link", os.readlink(p))
        elif p.is_file():
            out[p.name] = p.read_bytes()
        else:
            out[p.name] = "dir" if p.is_dir() else "special"
    return out


def assert_quiet(proc) -> None:
    """No traceback, no Python complaint, no raw control character in anything the run printed."""
    for text in (proc.stdout, proc.stderr):
        assert "Traceback" not in text and "Exception ignored" not in text, text
        assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", text), repr(text)


def assert_refused(proc, *fragments: str) -> None:
    """Exit 1 with one or two Japanese lines on stderr naming what is wrong."""
    assert proc.returncode == 1, (proc.returncode, proc.stdout, proc.stderr)
    assert_quiet(proc)
    lines = proc.stderr.strip().splitlines()
    assert 1 <= len(lines) <= 2, proc.stderr
    for fragment in fragments:
        assert fragment in proc.stderr, (fragment, proc.stderr)


def log_lines(work: Path) -> list[str]:
    path = Path(work) / "tool-runs.log"
    return path.read_text(encoding="utf-8").splitlines() if path.is_file() and not path.is_symlink() else []


KEY = "sk-ant-test-DO-NOT-LEAK-7c2e"


def scripted_answer(body: dict) -> tuple[int, dict]:
    """What the Messages API would answer in the lesson's conversation (a 400 on a broken pairing)."""
    from harness.models import APIError, ScriptedModel

    try:
        response = ScriptedModel().create(messages=body["messages"])
    except APIError as err:
        return 400, {"type": "error", "error": {"type": "invalid_request_error", "message": err.message}}
    response["model"] = body.get("model", "m")
    return 200, response


def json_answer(status: int, obj: object) -> tuple:
    return ("bytes", status, json.dumps(obj, ensure_ascii=False, allow_nan=True).encode(), "application/json")


def error_answer(status: int, message: str) -> tuple:
    return json_answer(status, {"type": "error", "error": {"type": "api_error", "message": message}})


class HostileAPI:
    """POST /v1/messages. `plan(n, body)` returns None (answer normally) or an action:
    ("bytes", status, data, content_type) | ("stall",) | ("trickle", seconds_between_bytes)."""

    def __init__(self, plan=None):
        self.plan = plan
        self.extra_headers: dict[str, str] = {}  # sent with every planned answer (e.g. retry-after)
        self.requests: list[dict] = []
        self.closing = threading.Event()
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                body = json.loads(raw)
                api.requests.append(body)
                action = api.plan(len(api.requests), body) if api.plan else None
                if action is None:
                    action = json_answer(*scripted_answer(body))
                try:
                    api.act(self, action)
                except OSError:  # the client gave up (a deadline): nothing more to send
                    pass

            def log_message(self, *args):
                pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request, client_address):
                pass  # a client that went away mid-request (a deadline, Ctrl-C) is what these tests do

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def act(self, handler, action) -> None:
        kind = action[0]
        if kind == "stall":  # read the request, never answer
            self.closing.wait(60)
            return
        if (
            kind == "trickle"
        ):  # headers promise a body that comes one byte at a time, for as long as anyone listens
            handler.send_response(200)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", "100000")
            handler.end_headers()
            handler.wfile.flush()
            while not self.closing.is_set():
                handler.wfile.write(b" ")
                handler.wfile.flush()
                time.sleep(action[1])
            return
        _, status, data, content_type = action
        handler.send_response(status)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(data)))
        for name, value in self.extra_headers.items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(data)

    def close(self) -> None:
        self.closing.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def env(self, **extra: str) -> dict:
        """The environment of a `python -m harness --real` child that talks to this server."""
        return {
            "ANTHROPIC_API_KEY": KEY,
            "ANTHROPIC_BASE_URL": self.url,
            "ANTHROPIC_MODEL": "claude-test-model",
            **extra,
        }


# A sitecustomize.py that sends SIGINT to its own process as the module INTERRUPT_AT_IMPORT starts to be imported:
# a Ctrl-C that lands at a state of start-up, not at a time.
INTERRUPT_HOOK = """
import os, signal, sys


class InterruptAtImport:
    def find_spec(self, name, path=None, target=None):
        if name == os.environ.get("INTERRUPT_AT_IMPORT"):
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signal.SIGINT)
        return None


sys.meta_path.insert(0, InterruptAtImport())
"""
