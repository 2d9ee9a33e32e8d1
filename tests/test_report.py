"""``python -m benchmark.report`` over real offline runs in a real MLflow store."""

from __future__ import annotations

import contextlib
import html
import io
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import SMALL, compose_config

from benchmark.report.__main__ import main
from benchmark.report.load import client_for, load_table
from benchmark.scoring import metric_names
from benchmark.tracking.run_colours import colour_at

OLD_SWEEP = "/runs/multirun/2025-01-01/09-00-00"
SWEEP = "/runs/multirun/2025-01-01/10-00-00"
EXPERIMENT = "compaction-benchmark"


def _job(store: Path, policy: str, run_name: str | None = None) -> None:
    from benchmark.__main__ import run

    overrides = [*SMALL, f"policy={policy}", "tracking=mlflow", f"tracking.store_dir={store}"]
    if run_name:
        overrides.append(f"tracking.run_name={run_name}")
    with contextlib.redirect_stdout(io.StringIO()):  # the scorecards
        run(compose_config(overrides))


def _report(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    """An older sweep of one bare run (metrics only, no per-probe table), then a sweep of
    three offline jobs: none, truncate, and none again under another name (sweep tags set
    here, as a multirun would)."""
    from benchmark.tracking.mlflow_store import prepare_store

    store = tmp_path_factory.mktemp("report") / "mlruns"
    experiment_id = prepare_store(store, EXPERIMENT)
    client = client_for(None, store)
    old = client.create_run(
        experiment_id,
        run_name="truncate@synthetic",
        tags={"policy": "truncate", "sweep": OLD_SWEEP, "sweep_overrides": "policy=truncate"},
    )
    for name, value in {
        "headline/overall": 1.5,
        "probes/total": 10,
        "tokens/after": 900,
        "headline/more/kept_fraction": 0.2,
    }.items():
        client.log_metric(old.info.run_id, name, value)
    client.set_terminated(old.info.run_id)
    jobs = [("none", None), ("truncate", None), ("none", "none-copy")]
    for policy, name in jobs:
        _job(store, policy, name)
    runs = [r for r in client.search_runs([experiment_id]) if "sweep" not in r.data.tags]
    assert len(runs) == len(jobs)
    for run in runs:
        client.set_tag(run.info.run_id, "sweep", SWEEP)
        client.set_tag(run.info.run_id, "sweep_overrides", "policy=none,truncate")
    return store


@pytest.fixture(scope="module")
def report(store: Path) -> dict:
    out = store.parent / "report"
    code, stdout, stderr = _report(
        ["--store-dir", str(store), "--out", str(out), "--probe-type", "recall"]
    )
    assert code == 0, stderr
    return {
        "out": out,
        "stdout": stdout,
        "comparison": json.loads((out / "comparison.json").read_text()),
    }


def test_default_is_the_latest_sweep_with_one_row_per_run_and_cis(report):
    comparison = report["comparison"]
    assert comparison["kind"] == "sweep" and comparison["source"] == SWEEP
    rows = {r["label"]: r for r in comparison["rows"]}
    assert sorted(rows) == ["none-copy", "none@synthetic", "truncate@synthetic"]
    assert len(comparison["dimensions"]) == 5  # offline: instruction_following not measured
    for row in rows.values():
        overall = row["overall"]
        assert overall["low"] <= overall["value"] <= overall["high"]
        assert all(cell["low"] is not None for cell in row["dimensions"].values())
        assert row["probes"] > 0 and row["failures"] == 0 and row["cost_usd"] == 0
        assert 0 < row["kept_fraction"] <= 1 and row["compression_ratio"] >= 1
    assert rows["truncate@synthetic"]["kept_fraction"] < rows["none@synthetic"]["kept_fraction"]
    # The table reaches the terminal, with the output paths.
    assert "| truncate@synthetic | 0." in report["stdout"]  # offline overall: 5 dimensions
    assert str(report["out"] / "report.html") in report["stdout"]


def test_reads_at_a_glance(report):
    """Reference first then best overall; scale, folded columns and few clusters stated;
    direction coloured; per-type and MLflow-run tables; short titles."""
    comparison = report["comparison"]
    rows = comparison["rows"]
    assert [r["policy"] for r in rows] == ["none", "none", "truncate"]  # reference first
    assert rows[0]["overall"]["value"] >= rows[1]["overall"]["value"]
    assert comparison["name"] == "2025-01-01_10-00-00" and comparison["suffix"] == ""
    assert set(comparison["probe_types"]) >= {"recall"}
    assert rows[0]["by_type"]["recall"]["value"] > 0
    md = " ".join((report["out"] / "report.md").read_text().split())
    assert md.startswith("# Compaction benchmark: sweep 2025-01-01_10-00-00 ")
    assert "Warning: the intervals rest on 2 cluster(s)" in md
    assert "Scores: 0-5 per rubric criterion" in md
    assert "**Reference**: `none`, the uncompacted control" in md
    assert "Same on every run, so not in the table: cost (USD) 0.0000, failures 0" in md
    assert "| failures |" not in md and "| cost (USD) |" not in md
    assert "## Mean score per probe type" in md and "## MLflow runs" in md
    assert all(r["run_id"] in md for r in rows)
    page = (report["out"] / "report.html").read_text()
    truncate = next(d for d in comparison["differences"] if d["label"] == "truncate@synthetic")
    assert f'<td class="down">{truncate["overall"]["mean"]:+.2f}<br>' in page  # worse: red
    assert page.count('<div class="scroll"><table>') == page.count("<table>")


def test_per_type_cells_are_the_runs_own_scores_with_their_intervals(store, report):
    """Each per-type cell is the run's metric type/<type> and its logged 95% CI, as MLflow
    shows them, in the Markdown and on the terminal alike."""
    client = client_for(None, store)
    md = (report["out"] / "report.md").read_text()
    types = report["comparison"]["probe_types"]
    assert types == ["recall", "artifact", "continuation", "decision"]
    for row in report["comparison"]["rows"]:
        metrics = client.get_run(row["run_id"]).data.metrics
        cells = []
        for ptype in types:
            name = metric_names.type_overall(ptype)
            low, high = metric_names.ci_names(name)
            expected = {"value": metrics[name], "low": metrics[low], "high": metrics[high]}
            assert row["by_type"][ptype] == expected
            cells.append(f"{metrics[name]:.2f} [{metrics[low]:.2f}, {metrics[high]:.2f}]")
        line = f"| {row['label']} | {' | '.join(cells)} |"
        assert line in md and line in report["stdout"]


def test_each_row_has_its_mlflow_run_colour(store, report):
    """A run's colour in the figures is the one MLflow shows it in (its runColor tag)."""
    from benchmark.tracking.run_colours import RUN_COLOR_TAG

    client = client_for(None, store)
    for row in report["comparison"]["rows"]:
        assert row["colour"] == client.get_run(row["run_id"]).data.tags[RUN_COLOR_TAG]
    colours = {r["policy"]: r["colour"] for r in report["comparison"]["rows"]}
    assert colours["none"] != colours["truncate"]


def test_the_page_opens_on_what_produced_the_numbers_and_ends_on_the_method(report):
    """Header block (answerer, judge and rubric, data, clusters), the short warning, the
    tables, the figures, then the Method section with every explanatory note; the same
    order in Markdown and HTML, and the header on the terminal too."""
    header = {line["name"]: line["value"] for line in report["comparison"]["header"]}
    assert header["Answerer"] == "extractive" and header["Judge"] == "reference"
    assert header["Rubric"].startswith("seed, 0-5 per criterion, 6 dimensions")
    assert "(instruction_following not measured)" in header["Rubric"]
    assert header["Data"].startswith("1 generated session per run (seed 0;")
    assert header["Clusters"] == "2 (transcript, compaction point) clusters per run"
    assert header["Runs"].startswith(f"3 runs of 2 policies (none, truncate), sweep `{SWEEP}`")
    md = (report["out"] / "report.md").read_text()
    page = html.unescape((report["out"] / "report.html").read_text())
    for name, value in header.items():
        assert f"- **{name}**: {value}" in md
        assert f"<li><b>{name}</b>: {value.replace('`', '')}</li>" in page
        assert f"{name}: {value}\n" in report["stdout"]
    order = [
        "Answerer",
        "Warning: the intervals rest on 2 cluster(s)",
        "Comparison",
        "Mean score per probe type",
        "Paired differences vs none",
        "Paired differences between every two configs",
        "Score vs tokens kept",
        "Rubric dimensions",
        "Method",
        "Scores: 0-5 per rubric criterion",
        "Same on every run, so not in the table",
        "Retention vs",
        "Per probe type: each run's score",
        "Paired differences: run minus",
        "No p-values: 2 cluster(s)",
    ]
    for text in (md, page):
        found = [text.find(part) for part in order]
        assert -1 not in found and found == sorted(found), list(zip(order, found, strict=True))
    assert md.count("## Method") == 1 and md.index("## Method") > md.index("![Rubric")


def test_run_ids_link_to_the_ui_of_a_tracking_server(report):
    from benchmark.report.compare import Comparison
    from benchmark.report.render import to_html, to_markdown

    comparison = Comparison.model_validate(report["comparison"])
    assert comparison.ui_url is None  # a local store: ids as text
    comparison.ui_url = "http://mlflow.example:5000"
    row = comparison.rows[0]
    url = f"http://mlflow.example:5000/#/experiments/{comparison.experiment_id}/runs/{row.run_id}"
    assert f'<a href="{url}">{row.run_id}</a>' in to_html(comparison)
    assert f"[{row.run_id}]({url})" in to_markdown(comparison)


def test_paired_differences_against_none_on_recall_probes(report):
    diffs = {d["label"]: d for d in report["comparison"]["differences"]}
    assert diffs["none@synthetic"]["is_reference"]  # the earliest run of the reference policy
    truncate = diffs["truncate@synthetic"]
    assert truncate["reference_label"] == "none@synthetic"
    overall = truncate["overall"]
    assert overall["mean"] < 0 and overall["low"] <= overall["mean"] <= overall["high"]
    # Two compaction points: two clusters, too few to test, however large the difference.
    assert overall["clusters"] == 2 and overall["p_value"] is None
    assert not overall["significant"]
    copy = diffs["none-copy"]["overall"]
    assert not copy["significant"] and copy["low"] <= 0 <= copy["high"]
    assert copy["n"] == truncate["overall"]["n"] > 0  # the same recall probes, paired
    assert set(diffs["none-copy"]["dimensions"]) == set(report["comparison"]["dimensions"])


def test_every_two_runs_are_compared_not_only_against_the_reference(report):
    """Three runs, three pairs (in row order, the later minus the earlier), paired on the
    recall probes as the differences against none are; in every output."""
    comparison = report["comparison"]
    order = [r["label"] for r in comparison["rows"]]
    pairs = {(p["label"], p["reference_label"]): p for p in comparison["pairs"]}
    assert list(pairs) == [(order[1], order[0]), (order[2], order[0]), (order[2], order[1])]
    against_none = {d["label"]: d for d in comparison["differences"]}
    truncate = pairs[("truncate@synthetic", "none@synthetic")]["overall"]
    assert truncate == against_none["truncate@synthetic"]["overall"]  # same method, same probes
    copy = pairs[("truncate@synthetic", "none-copy")]["overall"]  # not the reference
    assert copy["mean"] < 0 and copy["low"] <= copy["mean"] <= copy["high"]
    assert copy["n"] == truncate["n"] and copy["clusters"] == 2 and copy["p_value"] is None
    heading = "Paired differences between every two configs"
    md = (report["out"] / "report.md").read_text()
    assert f"## {heading}" in md and f"{heading}:" in report["stdout"]
    row = f"| truncate@synthetic | none-copy | {copy['n']} (2 clusters) | {copy['mean']:+.2f} ["
    assert row in md
    assert f"<h2>{heading}</h2>" in (report["out"] / "report.html").read_text()


def test_retention_against_the_control_run(report):
    rows = {r["label"]: r for r in report["comparison"]["rows"]}
    assert rows["none@synthetic"]["retention"]["value"] == 1.0  # the control keeps everything
    assert rows["none-copy"]["retention"]["value"] == pytest.approx(1.0)
    truncate = rows["truncate@synthetic"]["retention"]
    assert 0 <= truncate["low"] <= truncate["value"] <= truncate["high"]
    assert truncate["value"] < 1
    markdown = (report["out"] / "report.md").read_text()
    assert "retention vs none" in markdown and "Retention vs `none`" in markdown


def test_a_two_cluster_report_shows_no_p_value_and_says_why(report):
    out = report["out"]
    texts = {
        "stdout": report["stdout"],
        "md": (out / "report.md").read_text(),
        "html": html.unescape((out / "report.html").read_text()),
    }
    for name, text in texts.items():
        assert "p=" not in text and "p<" not in text, name
        assert not re.search(r"[\d\]] \*", text) and 'class="sig"' not in text, name
        flat = " ".join(text.split())
        if name != "stdout":  # the notes are in the files, the terminal gets the tables
            assert "No p-values: 2 cluster(s) (< 5)" in flat, name
            assert "cluster jackknife t" in flat, name


def test_files_and_self_contained_html(report):
    out = report["out"]
    for name in ("report.md", "report.html", "pareto.png", "dimensions.png", "comparison.json"):
        assert (out / name).is_file(), name
    for png in ("pareto.png", "dimensions.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page = (out / "report.html").read_text()
    assert page.count('src="data:image/png;base64,') == 2
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)
    assert "<script" not in page and "@import" not in page and "url(" not in page
    assert "truncate@synthetic" in page and "Paired differences" in page
    md = (out / "report.md").read_text()
    assert "![Score vs tokens kept](pareto.png)" in md and "| none-copy |" in md


def test_report_is_logged_as_its_own_run(store, report, tmp_path):
    client = client_for(None, store)
    exp = client.get_experiment_by_name(EXPERIMENT)
    runs = client.search_runs([exp.experiment_id], filter_string="tags.report = 'true'")
    assert [r.info.run_name for r in runs] == [f"report:{SWEEP}"]
    assert runs[0].data.tags["sweep"] == SWEEP and runs[0].info.status == "FINISHED"
    logged = {a.path for a in client.list_artifacts(runs[0].info.run_id)}
    assert logged == {"report.md", "report.html", "pareto.png", "dimensions.png", "comparison.json"}
    # No UI address known: the logged Markdown links its plots by name, as the local one.
    md = Path(client.download_artifacts(runs[0].info.run_id, "report.md", str(tmp_path)))
    assert "![Score vs tokens kept](pareto.png)" in md.read_text()


def test_with_the_ui_address_the_logged_markdown_loads_its_plots_from_it(store, tmp_path):
    """MLflow's Markdown view prints a relative image link as text; an absolute one loads."""
    ui = "http://127.0.0.1:5000"
    copy = shutil.copytree(store, tmp_path / "mlruns")  # the shared store keeps one report run
    code, out, err = _report(["--store-dir", str(copy), "--out", str(tmp_path), "--ui-url", ui])
    assert code == 0, err
    run_id = re.search(r"MLflow run ([0-9a-f]{32})", out).group(1)
    client = client_for(None, copy)
    md = Path(client.download_artifacts(run_id, "report.md", str(tmp_path / "logged"))).read_text()
    assert f"![Score vs tokens kept]({ui}/get-artifact?path=pareto.png&run_uuid={run_id})" in md
    assert f"[{run_id}]" not in md  # the report run is not a row; the rows' ids are links
    assert f"({ui}/#/experiments/" in md
    assert "![Score vs tokens kept](pareto.png)" in (tmp_path / "report.md").read_text()


def test_results_table_format(store, report):
    """What ``mlflow.log_table`` leaves is what the report reads: columns + data rows."""
    client = client_for(None, store)
    rows = load_table(client, report["comparison"]["rows"][0]["run_id"])
    assert rows and {"probe_id", "transcript", "point", "type", "score"} <= set(rows[0])
    assert any(k.startswith("d/") for k in rows[0])


def test_experiment_and_sweep_selection(store, report, tmp_path):
    code, _, err = _report(
        [EXPERIMENT, "--store-dir", str(store), "--out", str(tmp_path), "--no-log"]
    )
    assert code == 0, err
    comparison = json.loads((tmp_path / "comparison.json").read_text())
    assert comparison["kind"] == "experiment" and len(comparison["rows"]) == 4  # no report run
    bare = next(r for r in comparison["rows"] if r["probes"] == 10)  # the run without a table
    assert bare["label"].startswith("truncate@synthetic #")  # same name, no params to tell
    # No runColor tag: the palette's colour of its place in the table.
    assert bare["colour"] == colour_at(comparison["rows"].index(bare))
    diff = next(d for d in comparison["differences"] if d["run_ids"] == [bare["run_id"]])
    assert diff["overall"] is None and diff["note"] == "no probes scored in both runs"
    code, _, err = _report(["09-00-00", "--store-dir", str(store), "--out", str(tmp_path)])
    assert code == 0, err
    comparison = json.loads((tmp_path / "comparison.json").read_text())
    assert comparison["source"] == OLD_SWEEP and len(comparison["rows"]) == 1
    # No `none` run in that sweep: the default reference is skipped, an explicit one is not.
    assert comparison["differences"] == [] and "no paired differences" in err
    code, _, err = _report(["09-00-00", "--store-dir", str(store), "--reference", "none"])
    assert code == 2 and "no run of reference policy 'none'" in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["no-such-sweep"], "unknown sweep or experiment 'no-such-sweep'"),
        (["--reference", "codex"], "no run of reference policy 'codex'"),
        (["--experiment", "elsewhere"], "no experiment 'elsewhere'"),
    ],
)
def test_errors_are_one_line(store, report, args, message):
    code, out, err = _report([*args, "--store-dir", str(store), "--no-log"])
    assert code == 2 and out == ""
    assert err.startswith("error: ") and message in err and err.count("\n") == 1


def test_missing_store_is_one_line_and_not_created(tmp_path):
    code, out, err = _report(["--store-dir", str(tmp_path / "none")])
    assert code == 2 and out == "" and err.startswith("error: no MLflow store at")
    assert not (tmp_path / "none").exists()


def _chromium() -> str | None:
    if Path("/usr/bin/chromium").exists():
        return "/usr/bin/chromium"
    return shutil.which("chromium")


def _run_chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    chromium = _chromium()
    if chromium is None:
        pytest.skip("chromium not installed (apt-get install chromium)")
    proc = subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--enable-logging=stderr",
            "--v=0",
            f"--window-size={WIDTH},2000",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "HOME": str(tmp_path)},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "ERR_" not in proc.stderr, proc.stderr[-2000:]
    return proc


WIDTH = 1280
# Appended to a copy of the page (the report itself has no script): after layout, how wide
# the page scrolls and where each table's scrolling box ends, written into the DOM.
MEASURE = """<script>
window.addEventListener("load", () => {
  const out = document.createElement("pre");
  out.id = "measure";
  out.textContent = JSON.stringify({
    viewport: window.innerWidth,
    page: document.documentElement.scrollWidth,
    boxes: [...document.querySelectorAll("table")].map(
      t => Math.ceil(t.parentElement.getBoundingClientRect().right)),
    title: document.title,
    h1: document.querySelector("h1").textContent,
  });
  document.body.appendChild(out);
});
</script>"""


def test_html_renders_in_headless_chromium_at_1280px(report, tmp_path):
    shot = tmp_path / "shot.png"
    page = report["out"] / "report.html"
    _run_chromium(tmp_path, f"--screenshot={shot}", page.resolve().as_uri())
    assert shot.is_file() and shot.stat().st_size > 20_000

    import matplotlib.image

    pixels = matplotlib.image.imread(shot)[..., :3]
    assert pixels.shape[:2] == (2000, WIDTH)
    # Not blank, and something drawn in every band of the page.
    for band in (pixels[:600], pixels[600:1300], pixels[1300:]):
        assert band.std() > 0.05


def _wide_page(report: dict) -> str:
    """The fixture's report with twice the dimensions and long labels, as a sweep over several
    keys gives: wider than 1280 px unless its tables scroll in their own box."""
    from benchmark.report.compare import Comparison
    from benchmark.report.render import to_html

    comparison = Comparison.model_validate(report["comparison"])
    extra = {f"{d}_again": d for d in comparison.dimensions}
    comparison.dimensions += list(extra)
    for i, row in enumerate(comparison.rows):
        row.label += f" (compaction.points={i}, transcript.seed={i}, policy.budget={1000 * i})"
        row.dimensions.update({new: row.dimensions[old] for new, old in extra.items()})
        row.cost_usd += i  # no longer constant: a column more
    return to_html(comparison)


@pytest.mark.parametrize("wide", [False, True])
def test_no_table_overflows_and_no_title_is_a_path(report, tmp_path, wide):
    measured = tmp_path / "measured.html"
    text = _wide_page(report) if wide else (report["out"] / "report.html").read_text()
    measured.write_text(text.replace("</body>", MEASURE + "</body>"))
    dom = _run_chromium(tmp_path, "--dump-dom", measured.resolve().as_uri()).stdout
    found = re.search(r'<pre id="measure">(.*?)</pre>', dom, re.S)
    assert found, dom[-2000:]
    m = json.loads(html.unescape(found.group(1)))
    assert m["viewport"] == WIDTH
    assert m["page"] <= m["viewport"], m  # nothing makes the page scroll sideways
    assert len(m["boxes"]) >= 4 and max(m["boxes"]) <= m["viewport"], m
    for name in ("title", "h1"):
        assert "/" not in m[name] and SWEEP not in m[name], m[name]
        assert m[name].endswith("2025-01-01_10-00-00"), m[name]


def test_next_action_probes_show_their_control_agreement_beside_them(tmp_path):
    """A report over runs with next-action probes: the per-type table has the answers
    scored against the control's answer right after the log-scored column, and says so."""
    from benchmark.report.compare import AGREEMENT_COLUMN
    from benchmark.tracking.mlflow_store import prepare_store

    store = tmp_path / "mlruns"
    experiment_id = prepare_store(store, EXPERIMENT)
    for policy in ("none", "truncate"):
        from benchmark.__main__ import run

        overrides = [*SMALL, f"policy={policy}", "probe.types=[recall,next_action]"]
        overrides += ["tracking=mlflow", f"tracking.store_dir={store}"]
        with contextlib.redirect_stdout(io.StringIO()):
            run(compose_config(overrides))
    client = client_for(None, store)
    for logged in client.search_runs([experiment_id]):
        client.set_tag(logged.info.run_id, "sweep", SWEEP)
    out = tmp_path / "report"
    code, _, stderr = _report(["--store-dir", str(store), "--out", str(out)])
    assert code == 0, stderr
    comparison = json.loads((out / "comparison.json").read_text())
    types = comparison["probe_types"]
    assert types[types.index("next_action") + 1] == AGREEMENT_COLUMN
    by_run = {row["label"]: row["by_type"] for row in comparison["rows"]}
    assert by_run["none"][AGREEMENT_COLUMN]["value"] == 5.0  # uncompacted: the same answer
    truncate = by_run["truncate"][AGREEMENT_COLUMN]
    assert 0 <= truncate["low"] <= truncate["value"] <= truncate["high"] <= 5
    assert f"`{AGREEMENT_COLUMN}` against the answer" in (out / "report.md").read_text()
