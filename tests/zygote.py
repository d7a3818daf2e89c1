"""`python -m harness ARGS` as a real process of its own, without paying for `import anthropic` each time.

Importing the SDK takes about a second of CPU (its types are pydantic models), and the hostile-model tests start
the real client ~170 times. A zygote, one per pytest worker, imports the SDK once; each run is a child forked from it
that then does what `python -m harness` does: its own process (own pid, own process group, own exit status or
signal), its own working folder, environment, stdin, stdout and stderr, the harness package imported fresh, then
threads joined, `atexit` run and the streams flushed at its end. What it cannot give is the interpreter's own start-up
under another environment, so there is one zygote per set of what the interpreter reads at start (PYTHON*, LANG,
LC_*); and only runs to their end go through it (`run()`), never a Popen a test talks to or signals.
"""

from __future__ import annotations

import json
import locale
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

PRELOAD = ("anthropic", "dbos")

SERVER = r"""
import atexit, json, os, runpy, signal, socket, sys, threading, traceback
for name in sys.argv[2:]:
    __import__(name)
conn = socket.socket(fileno=int(sys.argv[1]))
requests = conn.makefile("r", encoding="utf-8")


def child(req):
    requests.close()
    conn.close()
    os.setpgid(0, 0)
    for fd, path, flags in ((0, req["stdin"], os.O_RDONLY), (1, req["stdout"], os.O_WRONLY),
                            (2, req["stderr"], os.O_WRONLY)):
        opened = os.open(path, flags)
        os.dup2(opened, fd)
        os.close(opened)
    os.chdir(req["cwd"])
    os.environ.clear()
    os.environ.update(req["env"])
    sys.argv = ["-m", *req["args"]]
    sys.path[0] = os.getcwd()
    code = 0
    try:
        runpy.run_module(req["module"], run_name="__main__", alter_sys=True)
    except SystemExit as end:
        if end.code is None:
            code = 0
        elif isinstance(end.code, int):
            code = end.code
        else:
            print(end.code, file=sys.stderr)
            code = 1
    except KeyboardInterrupt:
        traceback.print_exc()
        code = -signal.SIGINT
    except BaseException:
        traceback.print_exc()
        code = 1
    try:
        threading._shutdown()
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        if code < 0:  # as Python does after an uncaught Ctrl-C: end by the signal itself
            signal.signal(-code, signal.SIG_DFL)
            os.kill(os.getpid(), -code)
        os._exit(code & 0xFF)


for line in requests:
    req = json.loads(line)
    pid = os.fork()
    if pid == 0:
        try:
            child(req)
        finally:
            os._exit(70)
    conn.sendall((json.dumps({"pid": pid}) + "\n").encode())
    _, status = os.waitpid(pid, 0)
    code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    conn.sendall((json.dumps({"returncode": code}) + "\n").encode())
"""

# What the interpreter itself reads from the environment at start: a run that sets these differently needs its own.
START_UP = ("PYTHON", "LANG", "LC_")


class Zygote:
    def __init__(self, env: dict) -> None:
        self.env = dict(env)
        self.busy = threading.Lock()
        ours, theirs = socket.socketpair()
        self.proc = subprocess.Popen(
            [sys.executable, "-c", SERVER, str(theirs.fileno()), *PRELOAD],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(theirs.fileno(),),
            env=self.env,
        )
        theirs.close()
        self.conn = ours
        self.replies = ours.makefile("r", encoding="utf-8")

    def run(self, module_args: list[str], env: dict, timeout: float) -> subprocess.CompletedProcess:
        with tempfile.TemporaryDirectory(prefix="zygote-") as tmp:
            out, err = Path(tmp) / "stdout", Path(tmp) / "stderr"
            out.touch()
            err.touch()
            request = {"module": module_args[1], "args": module_args[2:], "env": env, "cwd": os.getcwd(),
                       "stdin": os.devnull, "stdout": str(out), "stderr": str(err)}  # fmt: skip
            self.conn.sendall((json.dumps(request) + "\n").encode())
            pid = json.loads(self.replies.readline())["pid"]
            self.conn.settimeout(timeout)
            try:
                line = self.replies.readline()
            except TimeoutError:
                line = ""
            finally:
                self.conn.settimeout(None)
            args = [sys.executable, *module_args]
            if not line:  # the deadline passed (or the zygote died): end the run, and this zygote with it
                for target in (lambda: os.killpg(pid, signal.SIGKILL), self.close):
                    try:
                        target()
                    except OSError:
                        pass
                raise subprocess.TimeoutExpired(args, timeout, text(out), text(err))
            return subprocess.CompletedProcess(args, json.loads(line)["returncode"], text(out), text(err))

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()
        self.conn.close()


def text(path: Path) -> str:
    """What subprocess.run(text=True) would have read: the locale's encoding, universal newlines."""
    data = path.read_bytes()
    return data.decode(locale.getpreferredencoding(False)).replace("\r\n", "\n").replace("\r", "\n")


# This worker's zygotes, by the start-up environment they were started with; a zygote serves one run at a time, so runs
# at the same time (a test's threads) get one each. Each is started at first need and ends when the worker does (its
# socket closed).
_zygotes: dict[tuple, list[Zygote]] = {}
_choosing = threading.Lock()


def run(argv: list[str], env: dict, timeout: float) -> subprocess.CompletedProcess:
    """subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout), through one of this worker's
    zygotes when argv is `python -m MODULE ...`."""
    if argv[:2] != [sys.executable, "-m"]:
        return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout, check=False)
    key = tuple(sorted((k, v) for k, v in env.items() if k.startswith(START_UP)))
    with _choosing:
        free = [z for z in _zygotes.setdefault(key, []) if z.proc.poll() is None]
        chosen = next((z for z in free if z.busy.acquire(blocking=False)), None)
        if chosen is None:
            chosen = Zygote({k: v for k, v in os.environ.items() if not k.startswith(START_UP)} | dict(key))
            chosen.busy.acquire()
            free.append(chosen)
        _zygotes[key] = free
    try:
        return chosen.run(argv[1:], env, timeout)
    finally:
        chosen.busy.release()
