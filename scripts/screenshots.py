"""Remake the README's screenshots: ``python scripts/screenshots.py`` (offline, ~1-2 min).

It runs the README's offline sweep into a fresh SQLite store in a temporary folder, writes the
HTML report of it, starts ``mlflow server`` on a free loopback port against that store, and has
headless Chromium take, at 1280 px wide, ``docs/images/mlflow_view.png`` (the sweep's saved
view, opened from the link the sweep prints, with no click), ``docs/images/mlflow_compare.png``
(the same view's chart mode), ``docs/images/traces_by_score.png`` (the traces view filtered
on a probe score through its filter form) and ``docs/images/report.png`` (the report). The
server and the browser are stopped whatever happens. So the images always show what the code
of the checkout logs and reports, not a hand-made view.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from browser import Browser, stop_group  # noqa: E402  (a sibling module; scripts/ is not a package)

from benchmark.tracking.views import OVERALL_CI_TAG  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
POLICIES = "none,truncate,observation_mask,tool_clear,anchor_index"  # the README's sweep
EXPERIMENT = "compaction-benchmark"
MLFLOW_HEIGHT = 1000  # the chart search's sections, two rows of charts
VIEW_HEIGHT = 640  # the runs table of a sweep's view: the page's first screen
TRACES_HEIGHT = 800  # the traces view filtered on a score
REPORT_HEIGHT = 1400  # the notes, the comparison, per-type and paired-difference tables


class ScreenshotError(Exception):
    """A missing tool or a failed step: printed as one line, exit 2."""


def find_tools() -> tuple[str, str]:
    """Chromium and the ``mlflow`` command beside this interpreter, or one line naming the gap."""
    chromium = "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None
    chromium = chromium or shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise ScreenshotError("chromium not found (Debian/Ubuntu: apt-get install -y chromium)")
    beside = Path(sys.executable).parent / "mlflow"
    mlflow = str(beside) if beside.exists() else shutil.which("mlflow")
    if mlflow is None:
        raise ScreenshotError("the mlflow command was not found (pip install -e . installs it)")
    return chromium, mlflow


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_step(what: str, args: list[str], work: Path) -> None:
    """Run one ``python -m ...`` step in the checkout; its output goes to ``work/<what>.log``."""
    log = work / f"{what}.log"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR": "false"}
    with log.open("w") as out:
        proc = subprocess.run(
            [sys.executable, *args], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT
        )
    if proc.returncode != 0:
        tail = log.read_text().strip().splitlines()[-1:] or ["no output"]
        raise ScreenshotError(f"{what} failed (exit {proc.returncode}): {tail[0]}")


def sweep_and_report(work: Path, policies: str, ui_url: str) -> Path:
    """The offline sweep into ``work/mlruns`` and its report; returns the report's folder."""
    store = work / "mlruns"
    # A dated sweep folder, as Hydra makes by default, so the sweep id shown is a real one.
    sweep_dir = f"{work}/multirun/${{now:%Y-%m-%d}}/${{now:%H-%M-%S}}"
    run_step(
        "sweep",
        [
            "-m",
            "benchmark",
            "-m",
            f"policy={policies}",
            f"tracking.store_dir={store}",
            f"cache.dir={work / 'cache'}",
            f"hydra.sweep.dir={sweep_dir}",
        ],
        work,
    )
    out = work / "report"
    run_step(
        "report",
        ["-m", "benchmark.report", "--store-dir", str(store), "--out", str(out)]
        + ["--ui-url", ui_url],
        work,
    )
    return out


def start_server(mlflow: str, store: Path, port: int, work: Path) -> subprocess.Popen:
    """``mlflow server`` in its own process group, so stopping it stops its workers too."""
    log = (work / "server.log").open("w")
    options = f"--host 127.0.0.1 --port {port} --workers 1".split()
    return subprocess.Popen(
        [mlflow, "server", *options, "--backend-store-uri", f"sqlite:///{store / 'mlflow.db'}"],
        cwd=work,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def wait_until_up(url: str, proc: subprocess.Popen, timeout: float = 180.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ScreenshotError(f"mlflow server exited with code {proc.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2) as resp:
                if resp.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise ScreenshotError(f"mlflow server did not answer at {url} within {timeout:.0f} s")


def experiment_id(url: str) -> str:
    query = urllib.parse.urlencode({"experiment_name": EXPERIMENT})
    get = f"{url}/api/2.0/mlflow/experiments/get-by-name?{query}"
    with urllib.request.urlopen(get, timeout=10) as resp:
        return json.load(resp)["experiment"]["experiment_id"]


# Page scripts for MLflow 3.x's experiment page. Each returns true once it has acted, so
# ``wait_for`` retries it until the React UI has drawn what it needs.
CI_CELLS = f'.ag-cell[col-id="tags.`{OVERALL_CI_TAG}`"]'
HAS_CI = f"""(() => {{ const cells = document.querySelectorAll('{CI_CELLS}');
  return cells.length > 0 && [...cells].every(c => c.innerText.trim()); }})()"""
CLOSE_ASSISTANT = """(() => {  // the assistant side panel takes a third of the width
  const b = document.querySelector('button[aria-label="Close"]');
  if (!b) return false; b.click(); return true; })()"""
FILTER_CHARTS = """(() => {  // type into "Search metric charts" (React needs the native setter)
  const i = document.querySelector('input[placeholder="Search metric charts"]');
  if (!i) return false;
  Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value").set.call(i, %s);
  i.dispatchEvent(new Event("input", {bubbles: true})); return true; })()"""


# The traces view (MLflow 3.x): its filter form, driven as a person does it. Its selects open
# on pointer events, so they get real mouse clicks (``press``), not element.click().
TRACES_PAGE = "/#/experiments/{}/traces"
FILTERS = "document.querySelector('[data-component-id=\"web-shared.traces-table.filter.trigger\"]')"
CENTRE = """(() => { const el = %s; if (!el) return null; el.scrollIntoView({block: "center"});
  const r = el.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()"""
SCROLL_TO_SCORES = """[...document.querySelectorAll('div')]  // the table's own sideways scroll
  .filter(e => e.scrollWidth > e.clientWidth + 20 && e.clientWidth > 600)
  .forEach(e => { e.scrollLeft = e.scrollWidth; })"""
SHOWN_PROBES = """JSON.stringify([...document.body.innerText.matchAll(/"probe_id": "([^"]+)"/g)]
  .map(m => m[1]).sort())"""


def with_text(selector: str, text: str) -> str:
    """A page expression: the first element of ``selector`` whose text is ``text``."""
    found = f"[...document.querySelectorAll({json.dumps(selector)})]"
    return f"{found}.find(e => e.innerText?.trim() === {json.dumps(text)})"


async def press(browser: Browser, element: str, what: str) -> None:
    """A real mouse click on ``element``."""
    x, y = await browser.wait_for(CENTRE % element, what, 30)
    for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
        await browser.call(
            "Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1
        )
    await asyncio.sleep(0.5)


async def filter_traces_on_score(
    b: Browser, page: str, value: str, height: int | None = None
) -> None:
    """Open the traces view at ``page`` and filter it on the Feedback ``score`` = ``value``."""
    await b.open(page, height)
    await b.wait_for(f"{FILTERS} && {SHOWN_PROBES} !== '[]'", "the traces table")
    await b.js("document.querySelector('button[aria-label=Close]')?.click()")  # assistant
    await b.js(f"{FILTERS}.click()")
    await press(b, with_text("[role=dialog] [role=combobox]", "State"), "the field select")
    await press(b, with_text("[role=option]", "Feedback"), "the Feedback field")
    name = "[...document.querySelectorAll('[role=dialog] *')]"
    name += ".find(e => !e.children.length && e.innerText?.trim() === 'Feedback name')"
    await press(b, name, "the feedback name box")
    await b.call("Input.insertText", text="score")
    await press(b, with_text("[role=option]", "score"), "the score feedback")
    await press(b, "document.querySelector('[role=dialog] input[placeholder=Value]')", "value")
    await b.call("Input.insertText", text=value)
    await press(b, with_text("[role=dialog] button", "Apply filters"), "Apply filters")


def view_link(work: Path, url: str) -> str:
    """The sweep's saved view, as the sweep's last lines print it, on this server."""
    found = re.search(r"https?://\S+viewStateShareKey=\S+", (work / "sweep.log").read_text())
    if found is None:
        raise ScreenshotError("the sweep printed no saved view link (see sweep.log)")
    return re.sub(r"^https?://[^/]+", url, found.group(0))


async def take_shots(
    chromium: str, url: str, report: Path, out: Path, charts: str, trace_score: str
) -> None:
    link = view_link(report.parent, url)
    async with Browser(chromium, VIEW_HEIGHT) as b:
        # The sweep's view as its link opens it: no click, MLflow's assistant panel open.
        await b.open(link)
        await b.wait_for(HAS_CI, "the runs with their overall and interval")
        await asyncio.sleep(2)
        await b.screenshot(out / "mlflow_view.png", VIEW_HEIGHT)

        # Its chart mode, with the assistant panel closed (one click) so the charts have room.
        await b.open(f"{link}&compareRunsMode=CHART", MLFLOW_HEIGHT)
        await b.wait_for(CLOSE_ASSISTANT, "the assistant panel's close button")
        if charts:
            await b.wait_for(FILTER_CHARTS % json.dumps(charts), "the chart search box")
        await b.wait_for("document.querySelectorAll('svg.main-svg').length > 0", "a chart")
        await asyncio.sleep(3)  # let the charts finish drawing
        await b.call("Input.dispatchMouseEvent", type="mouseMoved", x=2, y=2)  # no hover bar
        await asyncio.sleep(1)
        await b.screenshot(out / "mlflow_compare.png", MLFLOW_HEIGHT)

        # The probes that lost everything: the traces view filtered on score 0.
        page = url + TRACES_PAGE.format(experiment_id(url))
        await filter_traces_on_score(b, page, trace_score, TRACES_HEIGHT)
        await asyncio.sleep(3)
        await b.js(f"{with_text('button', 'Got it')}?.click()")  # a first visit's tip box
        await b.js(SCROLL_TO_SCORES)
        await asyncio.sleep(1)
        await b.call("Input.dispatchMouseEvent", type="mouseMoved", x=2, y=2)
        await b.screenshot(out / "traces_by_score.png", TRACES_HEIGHT)

        await b.open((report / "report.html").resolve().as_uri(), REPORT_HEIGHT)
        await b.wait_for("document.readyState === 'complete'", "the report")
        await b.screenshot(out / "report.png", REPORT_HEIGHT)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=ROOT / "docs" / "images", help="image folder")
    p.add_argument("--policies", default=POLICIES, help=f"the sweep (default: {POLICIES})")
    p.add_argument(
        "--charts",
        default="",
        help="text typed into MLflow's chart search, choosing the charts shown "
        "(default: the view's own, 'headline'; e.g. 'overall')",
    )
    p.add_argument(
        "--trace-score", default="0", help="the score the traces view is filtered on (default 0)"
    )
    p.add_argument("--keep", action="store_true", help="keep the temporary folder and say where")
    args = p.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="shots-"))
    server = None
    try:
        chromium, mlflow = find_tools()
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        print(f"sweep {args.policies} and its report in {work} ...", flush=True)
        report = sweep_and_report(work, args.policies, url)
        server = start_server(mlflow, work / "mlruns", port, work)
        wait_until_up(url, server)
        print(f"mlflow server at {url}; screenshots ...", flush=True)
        asyncio.run(take_shots(chromium, url, report, args.out, args.charts, args.trace_score))
    except (ScreenshotError, RuntimeError) as exc:
        print(f"error: {exc} (logs in {work})", file=sys.stderr)
        args.keep = True
        return 2
    finally:
        if server is not None:
            stop_group(server)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    for name in ("mlflow_view.png", "mlflow_compare.png", "traces_by_score.png", "report.png"):
        print(f"wrote {args.out / name} ({(args.out / name).stat().st_size // 1024} KB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
