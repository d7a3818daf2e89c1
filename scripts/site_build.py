"""Build the browser edition: a static JupyterLite site in site/ that needs nothing from the network at run time.

Run by scripts/site.sh (which installs requirements-site.txt first). Downloads go to .cache/site/ (git-ignored) and
are reused, so a second build only re-copies files. What goes into site/:
  - the Pyodide runtime from npm's `pyodide` package (pyodide.mjs, the wasm, the standard library, the lock file);
  - the wheels the kernel loads at start (micropip, ipython, jedi and their dependencies, versions from Pyodide's
    lock), fetched from PyPI with pip, their sha256 rewritten in pyodide-lock.json (PyPI's files differ from
    Pyodide's own builds);
  - ipywidgets and comm, and a `harness` wheel built from this checkout, added to the lock and preloaded at kernel
    start (loadPyodideOptions.packages), so notebooks import them unchanged;
  - the notebooks 01-13 (13, DBOS, as a read-only page: no threads in Pyodide), the Crash Lab, the exercises of
    levels 1 and 2, level 2's solution, and the browser edition's note.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache" / "site"
OUT = ROOT / "site"

PYODIDE_VERSION = "314.0.6"  # the version jupyterlite-pyodide-kernel 0.8.6 pins
RUNTIME_FILES = (
    "pyodide.mjs",
    "pyodide.asm.mjs",
    "pyodide.asm.wasm",
    "python_stdlib.zip",
    "pyodide-lock.json",
)
# What the kernel loads from the lock at start (pyodide_kernel needs comm and ipython; completion needs jedi).
KERNEL_PACKAGES = ("micropip", "ipython", "jedi")
# Pure-Python wheels not in Pyodide's lock: name -> (version, depends, import names). Same versions as requirements.txt.
EXTRA_WHEELS = {
    "comm": ("0.2.3", ["traitlets"], ["comm"]),
    "jupyterlab_widgets": ("3.0.17", [], ["jupyterlab_widgets"]),
    "ipywidgets": ("8.1.9", ["comm", "ipython", "traitlets", "jupyterlab_widgets"], ["ipywidgets"]),
}
PRELOAD = ["harness", "ipywidgets"]
NOTEBOOKS = [
    *(f"notebooks/{n}" for n in sorted(p.name for p in (ROOT / "notebooks").glob("[01][0-9]_*.ipynb")))
]
READ_ONLY = [
    "notebooks/13_dbos.ipynb"
]  # served with its stored outputs and a line saying why it does not run here
CONTENTS = [
    *NOTEBOOKS,
    "notebooks/crash_lab.ipynb",
    "exercises/level1_crash_moments.ipynb",
    "exercises/level2_reversed_ledger.ipynb",
    "exercises/level2_repro.py",
    "solutions/level2_reversed_ledger.ipynb",
    "solutions/level2_repro.py",
]
NOTE = "browser/00_browser_edition.md"  # the browser edition's note, a notebook only the site carries


def sh(*argv: str, cwd: Path | None = None) -> None:
    subprocess.run(argv, check=True, cwd=cwd)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def pyodide_tarball() -> Path:
    tarball = CACHE / f"pyodide-{PYODIDE_VERSION}.tgz"
    if not tarball.exists():
        sh("npm", "pack", f"pyodide@{PYODIDE_VERSION}", "--pack-destination", str(CACHE), "--silent")
    return tarball


def pure_wheel(name: str, version: str) -> Path:
    """name==version as a py3-none-any wheel from PyPI, cached."""
    folder = CACHE / "wheels"
    norm = name.replace("-", "_").lower()
    found = [p for p in folder.glob("*.whl") if p.name.lower().startswith(f"{norm}-{version}-")]
    if not found:
        sh(
            sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check", "--no-deps",
            "--only-binary=:all:", "--python-version", "3.14", "-d", str(folder), f"{name}=={version}",
        )  # fmt: skip
        found = [p for p in folder.glob("*.whl") if p.name.lower().startswith(f"{norm}-{version}-")]
    if len(found) != 1 or not found[0].name.endswith("-none-any.whl"):
        raise SystemExit(f"site: expected one pure-Python wheel for {name}=={version}, found {found}")
    return found[0]


def harness_wheel() -> Path:
    """A wheel of this checkout's harness package (pure Python, no dependencies), written directly: no build
    backend to install, no build/ folder left in the repository, the same bytes for the same sources."""
    project = (ROOT / "pyproject.toml").read_text()
    meta = {
        k: re.search(rf'^{k} = "([^"]*)"', project, re.MULTILINE).group(1)
        for k in ("name", "version", "description")
    }
    meta["requires-python"] = re.search(r'^requires-python = "([^"]*)"', project, re.MULTILINE).group(1)
    name, version = meta["name"], meta["version"]
    dist = f"{name}-{version}.dist-info"
    files = {
        p.relative_to(ROOT).as_posix(): p.read_bytes()
        for p in sorted((ROOT / name).rglob("*"))
        if p.suffix in (".py", ".toml") and "__pycache__" not in p.parts
    }
    files[f"{dist}/METADATA"] = (
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\nSummary: {meta['description']}\n"
        f"Requires-Python: {meta['requires-python']}\n"
    ).encode()
    files[f"{dist}/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: scripts/site_build.py\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )
    record = [
        f"{path},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},{len(data)}"
        for path, data in files.items()
    ]
    files[f"{dist}/RECORD"] = ("\n".join([*record, f"{dist}/RECORD,,"]) + "\n").encode()
    wheel = CACHE / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as z:
        for path, data in files.items():
            z.writestr(zipfile.ZipInfo(path, date_time=(1980, 1, 1, 0, 0, 0)), data, zipfile.ZIP_DEFLATED)
    return wheel


def closure(lock: dict, names) -> list[str]:
    """The lock's keys of names and everything they depend on (depends are written as in metadata: prompt_toolkit)."""
    key = {k.replace("_", "-").lower(): k for k in lock["packages"]}
    seen: list[str] = []
    todo = list(names)
    while todo:
        name = key[todo.pop().replace("_", "-").lower()]
        if name not in seen:
            seen.append(name)
            todo.extend(lock["packages"][name]["depends"])
    return seen


def runtime(lite: Path) -> None:
    """static/pyodide/: the runtime, the start-up wheels and ours, and a lock file whose hashes match them."""
    target = lite / "static" / "pyodide"
    target.mkdir(parents=True)
    with tarfile.open(pyodide_tarball()) as tar:
        for name in RUNTIME_FILES:
            with tar.extractfile(f"package/{name}") as src, open(target / name, "wb") as dst:
                shutil.copyfileobj(src, dst)
    lock = json.loads((target / "pyodide-lock.json").read_text())
    for name in closure(lock, KERNEL_PACKAGES):
        entry = lock["packages"][name]
        if not entry["file_name"].endswith("-none-any.whl"):
            raise SystemExit(f"site: {name} is not pure Python in Pyodide's lock; it cannot come from PyPI")
        wheel = pure_wheel(name, entry["version"])
        shutil.copy(wheel, target / wheel.name)
        entry.update(file_name=wheel.name, sha256=sha256(wheel))
    ours = {name: (pure_wheel(name, v), deps, imports) for name, (v, deps, imports) in EXTRA_WHEELS.items()}
    ours["harness"] = (harness_wheel(), [], ["harness"])
    for name, (wheel, deps, imports) in ours.items():
        shutil.copy(wheel, target / wheel.name)
        key = name.replace("_", "-").lower()  # the lock's keys are canonical names (depends are resolved so)
        lock["packages"][key] = {
            "name": key,
            "version": wheel.name.split("-")[1],
            "file_name": wheel.name,
            "install_dir": "site",
            "sha256": sha256(wheel),
            "package_type": "package",
            "imports": imports,
            "depends": deps,
            "unvendored_tests": False,
        }
    (target / "pyodide-lock.json").write_text(json.dumps(lock, indent=1, sort_keys=True))


def contents(folder: Path) -> None:
    """The notebooks as they are in the repository (outputs included), and the note converted from its MyST source."""
    note = folder / "notebooks" / Path(NOTE).with_suffix(".ipynb").name
    note.parent.mkdir(parents=True)
    sh(sys.executable, "-m", "jupytext", "--quiet", "--to", "ipynb", "-o", str(note), str(ROOT / NOTE))
    for rel in [*CONTENTS, note.relative_to(folder).as_posix()]:
        source = note if rel == note.relative_to(folder).as_posix() else ROOT / rel
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        if not rel.endswith(".ipynb"):
            shutil.copy(source, folder / rel)
            continue
        nb = json.loads(source.read_text())
        (folder / rel).write_text(
            json.dumps(read_only(nb) if rel in READ_ONLY else for_the_browser(nb), ensure_ascii=False)
        )


def for_the_browser(nb: dict, keep_outputs: bool = False) -> dict:
    """A notebook as the site serves it: the Pyodide kernel, and no outputs (those stored in the repository come from
    a local kernel and real processes; in the browser the learner's run writes its own)."""
    nb["metadata"]["kernelspec"] = {
        "name": "python",
        "display_name": "Python (Pyodide)",
        "language": "python",
    }
    for cell in nb["cells"]:
        if cell["cell_type"] == "code" and not keep_outputs:
            cell["outputs"], cell["execution_count"] = [], None
    return nb


def read_only(nb: dict) -> dict:
    """A notebook the browser cannot run: its stored outputs kept, its cells locked, and a first cell saying why."""
    sys.path.insert(0, str(ROOT))
    from harness.texts import BROWSER_READ_ONLY

    nb = for_the_browser(nb, keep_outputs=True)
    note = {"cell_type": "markdown", "id": "browser-read-only", "metadata": {}, "source": BROWSER_READ_ONLY}
    nb["cells"].insert(0, note)
    for cell in nb["cells"]:
        cell.setdefault("metadata", {}).update(editable=False, deletable=False)
    return nb


def config(lite: Path) -> None:
    settings = {
        "pyodideUrl": "./static/pyodide/pyodide.mjs",
        "disablePyPIFallback": True,
        "loadPyodideOptions": {"packages": PRELOAD},
    }
    (lite / "jupyter-lite.json").write_text(
        json.dumps(
            {
                "jupyter-lite-schema-version": 0,
                "jupyter-config-data": {
                    "appName": "落ちても拾い直せるエージェントハーネス（ブラウザ版）",
                    "exposeAppInBrowser": "true",  # window.jupyterapp: how the tests run all cells
                    "litePluginSettings": {"@jupyterlite/pyodide-kernel-extension:kernel": settings},
                },
            },
            ensure_ascii=False,
            indent=1,
        )
    )
    # no news pop-up, no update check: the site never asks the internet for anything
    (lite / "overrides.json").write_text(
        json.dumps(
            {"@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False}}
        )
    )


def main() -> None:
    CACHE.mkdir(parents=True, exist_ok=True)
    lite = CACHE / "lite"
    shutil.rmtree(lite, ignore_errors=True)
    lite.mkdir()
    runtime(lite)
    config(lite)
    files = CACHE / "contents"
    shutil.rmtree(files, ignore_errors=True)
    contents(files)
    shutil.rmtree(OUT, ignore_errors=True)
    # a stale doit database makes the build skip steps and silently fall back to the CDN
    (lite / ".jupyterlite.doit.db").unlink(missing_ok=True)
    # run inside the lite folder: given as --lite-dir from elsewhere, its jupyter-lite.json is not merged
    sh(
        str(Path(sys.executable).parent / "jupyter-lite"), "build", "--contents", str(files), "--output-dir", str(OUT),
        cwd=lite,
    )  # fmt: skip
    size = sum(p.stat().st_size for p in OUT.rglob("*") if p.is_file())
    print(
        f"site: {OUT.relative_to(ROOT)}/ built, {size / 1e6:.1f} MB. Serve it: python3 -m http.server -d site"
    )


if __name__ == "__main__":
    main()
