"""The browser edition, measured: site size, cold load to notebook 01 fully run, and each notebook run in Chromium.

    bash scripts/site.sh && .venv/bin/python bench/site_load.py [NOTEBOOK ... | kill]

Each notebook is opened in a fresh browser context (empty cache and storage: a first visit), served by
`python3 -m http.server` on 127.0.0.1, with every request to another host refused. "cold" is from opening the URL to
the last cell of notebook 01 done, kernel start included; "run" is the time from run-all to the last cell done, in a
kernel already started. A notebook whose cells raise is reported as FAILED with its error. "kill" times the Crash
Lab's real kill: from the click on 実行 (② with 本物のキル) until the page has restarted the kernel and reopened the lab.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import site_browser as sb
from playwright.sync_api import sync_playwright

READ_ONLY = {"notebooks/13_dbos.ipynb"}  # shown with its desktop outputs; it does not run in Pyodide
DEFAULT = [
    *(
        path
        for p in sorted((sb.SITE / "files" / "notebooks").glob("*.ipynb"))
        if (path := f"notebooks/{p.name}") not in READ_ONLY
    ),
    "exercises/level1_crash_moments.ipynb",
    "exercises/level2_reversed_ledger.ipynb",
    "solutions/level2_reversed_ledger.ipynb",
    "kill",
]


def main(paths: list[str]) -> None:
    size = sum(p.stat().st_size for p in sb.SITE.rglob("*") if p.is_file())
    print(f"site size: {size / 1e6:.1f} MB ({size / 2**20:.1f} MiB)")
    with sb.served() as base, sync_playwright() as p, sb.offline_browser(p) as (browser, refused):
        for path in paths:
            context, page = sb.new_page(browser, refused)
            if path == "kill":  # the Crash Lab's real kill: click to the lab reopened in a restarted kernel
                sb.open_notebook(page, base, "notebooks/crash_lab.ipynb")
                sb.run_all(page)
                page.wait_for_selector(".lab-view-effects", timeout=120_000)
                t0 = time.monotonic()
                sb.real_kill_at_moment_two(page)
                print(
                    f"crash lab real kill: {time.monotonic() - t0:.1f} s from the click to the lab reopened"
                )
                context.close()
                continue
            t0 = time.monotonic()
            reloads = sb.open_notebook(page, base, path)
            t1 = time.monotonic()
            cells = sb.run_all(page)
            t2 = time.monotonic()
            errors = [o for c in cells for o in c["outputs"] if o["output_type"] == "error"]
            verdict = f"FAILED {errors[0]['ename']}: {errors[0]['evalue'][:200]}" if errors else "ok"
            verdict += f" after {reloads} reload(s) of a kernel stuck connecting" if reloads else ""
            print(
                f"{path}: cold {t2 - t0:.1f} s (kernel ready {t1 - t0:.1f} s), run {t2 - t1:.1f} s, {verdict}"
            )
            context.close()
    print("requests refused (to other hosts):", refused or "none")


if __name__ == "__main__":
    main(sys.argv[1:] or DEFAULT)
