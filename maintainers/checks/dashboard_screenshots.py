"""Screenshots of the dashboard of the synthetic 20-run history at 1280 px: `python -m maintainers.checks.dashboard_screenshots`.

The history is maintainers/support/dashboard_history.py's (five cases, one 3% slower and failing
from run 7 on, one 4% slower and accepted at run 12, run 15 recorded as failed), recorded in a new
SQLite store (or the empty one --history names), written by `python -m kernelwatch.history site`, and
photographed in Debian's headless Chromium (driven by Playwright, as tests/history/test_site_browser.py
does) in a window 1280 px wide: the index (docs/dashboard-index.png), the failing case's page
(docs/dashboard-case.png) and the page of the case whose correctness check went less accurate at run 7 and was
accepted at run 8 (docs/dashboard-accuracy.png: its accuracy chart under its time chart). Each page is checked first: no console error, nothing fetched, no wider
than the window. Run it through `tox exec -e unit -- python -m maintainers.checks.dashboard_screenshots`.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import shutil
import sys
import tempfile
from pathlib import Path

from maintainers.environment import NO_ENVIRONMENT, needs, summary

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("KERNELWATCH_CHROMIUM", "/usr/bin/chromium")
TOOL = "maintainers.checks.dashboard_screenshots"


def photograph(site: Path, pages: dict[str, Path], width: int, chromium: str) -> list[str]:
    """Save each page of `site` as its PNG ({page: png}), full length, in a window `width` px wide; the problems seen."""
    from playwright.sync_api import sync_playwright

    problems: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, headless=True,
                                             args=["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"])
        try:
            # a short window: a full-page screenshot is then as long as the page, no blank below it
            page = browser.new_page(viewport={"width": width, "height": 400})
            page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
            page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
            page.on("request", lambda r: None if r.url.startswith(("file:", "data:")) else problems.append(
                f"fetched {r.url}"))
            for name, png in pages.items():
                page.goto((site / name).as_uri(), wait_until="load")
                wide = page.evaluate("document.documentElement.scrollWidth")
                if wide > width:
                    problems.append(f"{name} is {wide} px wide in a {width} px window")
                page.screenshot(path=str(png), full_page=True)
        finally:
            browser.close()
    return problems


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog=f"python -m {TOOL}", description=summary(__doc__))
    parser.add_argument("--out", type=Path, default=ROOT / "docs",
                        help="the folder of dashboard-index.png, dashboard-case.png and dashboard-accuracy.png "
                             "(default docs/)")
    parser.add_argument("--width", type=int, default=1280, help="the window's width in px (default 1280)")
    parser.add_argument("--history", metavar="URL", help="an empty store to record the history in (default: a new "
                                                         "SQLite file, removed afterwards)")
    parser.add_argument("--keep-site", type=Path, metavar="DIR", help="also keep the whole site in DIR")
    args = parser.parse_args(argv)
    if args.width < 320:
        parser.error(f"--width must be at least 320 px, not {args.width}")
    needs(TOOL, "playwright", "sqlalchemy", "ruptures")
    chromium = CHROMIUM if os.path.exists(CHROMIUM) else shutil.which(CHROMIUM)
    if not chromium:
        print(f"python -m {TOOL} needs Chromium at {CHROMIUM} (apt-get install -y chromium, or set "
              f"KERNELWATCH_CHROMIUM)", file=sys.stderr)
        return NO_ENVIRONMENT

    from kernelwatch.history.cli import main as history
    from kernelwatch.history.site import case_page_name
    from maintainers.support.dashboard_history import ACCURACY_CASE, STEPPED_CASE, record_dashboard_history
    from maintainers.support.synthetic_history import case_name

    with tempfile.TemporaryDirectory() as scratch:
        url = args.history or f"sqlite:///{Path(scratch) / 'history.sqlite'}"
        record_dashboard_history(url, accuracy=True)
        site = args.keep_site or Path(scratch) / "site"
        with contextlib.redirect_stdout(io.StringIO()):  # the command prints its index's path: a scratch folder
            status = history(["site", str(site), "--history", url])
        if status != 0:
            print(f"python -m {TOOL}: the site command failed", file=sys.stderr)
            return 1
        args.out.mkdir(parents=True, exist_ok=True)
        pages = {"index.html": args.out / "dashboard-index.png",
                 f"cases/{case_page_name(case_name(STEPPED_CASE))}": args.out / "dashboard-case.png",
                 f"cases/{case_page_name(case_name(ACCURACY_CASE))}": args.out / "dashboard-accuracy.png"}
        problems = photograph(site, pages, args.width, chromium)
    for problem in problems:
        print(problem, file=sys.stderr)
    for png in pages.values():
        print(png)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
