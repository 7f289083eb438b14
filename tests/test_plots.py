"""make figures: every figure script is drawn, and a missing CSV is a skip."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pandas as pd
import pytest

from plots import all as all_figures
from plots import style

NOT_FIGURES = {"__init__", "all", "style", "figures", "sweep"}


def test_every_figure_script_is_drawn() -> None:
    scripts = {p.stem for p in style.PLOTS.glob("*.py")} - NOT_FIGURES
    assert set(all_figures.FIGURES) == scripts


def test_a_figure_without_results_is_skipped_and_its_old_pictures_go(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    figures = tmp_path / "figures"
    figures.mkdir()
    for name in ("syscall.png", "syscall.pdf", "syscall.provenance.json", "c3_arm32_qemu.md",
                 "other.png"):
        (figures / name).write_text("from an earlier drawing")
    # Every figure: what has no results is skipped, and that is not an error.
    assert all_figures.main(["--results", str(tmp_path), "--out", str(figures)]) == 0
    assert "skipped syscall" in caplog.text
    assert "python -m experiments run c4-uaccess" in caplog.text
    # A picture of results the folder no longer has is not left behind.
    left = {p.name for p in figures.iterdir()}
    assert "other.png" in left
    assert not left & {"syscall.png", "syscall.pdf", "syscall.provenance.json", "c3_arm32_qemu.md"}
    # A figure asked for by name and not drawn is an error.
    assert all_figures.main(["syscall", "--results", str(tmp_path), "--out",
                             str(figures)]) == 1


def test_a_figure_whose_results_hold_part_of_an_experiment_is_skipped(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Results of a few runs (a run stopped half-way, or runs chosen by name)
    skip the figures they cannot fill, in one line, and draw the others."""
    caplog.set_level(logging.INFO)
    results = tmp_path / "results"
    results.mkdir()
    numa = pd.read_csv(style.RESULTS / "c5-contpte-numa.csv", keep_default_na=False)
    numa[numa["workload"] == "exit-node0"].to_csv(results / "c5-contpte-numa.csv", index=False)
    (results / "syscall.csv").write_bytes((style.RESULTS / "syscall.csv").read_bytes())
    out = tmp_path / "figures"
    assert all_figures.main(["--results", str(results), "--out", str(out)]) == 0
    assert "skipped c5_contpte_numa: its results lack part of what it draws" in caplog.text
    assert "python -m experiments run c5-contpte-numa c5-contpte-mix" in caplog.text
    assert (out / "syscall.png").is_file() and not (out / "c5_contpte_numa.png").exists()


def test_an_unknown_figure_names_the_valid_ones(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        all_figures.main(["no_such_figure"])
    assert "valid: syscall" in capsys.readouterr().err



def test_every_experiment_is_timed_under_one_claim_of_the_guide() -> None:
    from experiments import spec
    from plots import host_times

    listed = [name for claim in host_times.CLAIMS for name in claim.experiments]
    assert len(listed) == len(set(listed))
    assert set(listed) == set(spec.available())


def test_every_claim_of_the_index_has_its_page() -> None:
    from plots import host_times

    for claim in host_times.CLAIMS:
        assert (style.REPO_ROOT / claim.page).is_file(), claim.page


def test_each_figure_reads_the_experiments_the_table_names(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every figure drawn from the committed results loads exactly the
    experiments plots/figures.py gives it."""
    import importlib

    from experiments import spec
    from plots import figures

    loaded: list[str] = []
    load = style.Folders.load

    def recording(self: style.Folders, name: str):  # type: ignore[no-untyped-def]
        loaded.append(name)
        return load(self, name)

    monkeypatch.setattr(style.Folders, "load", recording)
    folders = style.Folders(style.RESULTS, tmp_path)
    known = set(spec.available())
    for figure in figures.FIGURES:
        assert set(figure.experiments + figure.traces) <= known, figure
        if not figure.experiments:
            continue
        loaded.clear()
        importlib.import_module(f"plots.{figure.name}").main(folders)
        style.plt.close("all")
        # Beside an experiment's CSV, its QEMU reference runs' (NAME-qemu).
        qemu = {f"{name}-qemu" for name in figure.experiments}
        assert set(figure.experiments) <= set(loaded) <= set(figure.experiments) | qemu, \
            figure.name


def test_a_simulation_two_experiments_share_is_counted_once() -> None:
    import pandas as pd

    from plots import host_times

    sweep = pd.Series({"a": 60.0, "b": 120.0})
    default = pd.Series({"a": 60.0})
    table = host_times.claim_table({"c1-sctlr": default, "c1-sctlr-sweep": sweep})
    assert "| C1 what-if | `python -m experiments run c1-sctlr c1-sctlr-sweep` | 2 | 3.0 | 2.0 |" \
        in table
    assert "| everything | `make EXPERIMENTS=all` | 2 | 3.0 | 2.0 |" in table


def test_selftest_rows_name_only_the_kernel_arguments_runs_differ_in() -> None:
    import pandas as pd

    from plots import selftests

    def run(cpu: str, mode: str, verdict: str, failed: str) -> list[dict[str, object]]:
        common = {"cpu": cpu, "core": "" if cpu == "atomic" else "neoverse-v2",
                  "kernel_args": f"kasan=on kasan.mode={mode}", "variant": "kasan-hw",
                  "features": "mte", "workload": "kunit-kasan", "gem5_version": "v24",
                  "gem5_build": "g", "kernel_build": "k", "kernel_variant": "kasan-hw",
                  "host_seconds": 10}
        return [{**common, "metric": m, "value": v} for m, v in (
            ("verdict", verdict), ("subtests_passed", 2), ("subtests_failed", int(bool(failed))),
            ("subtests_skipped", 0), ("failed_cases", failed))]

    frame = pd.DataFrame(run("atomic", "sync", "pass", "") + run("o3", "sync", "fail", "a;b")
                         + run("atomic", "async", "pass", ""))
    text = selftests.table(frame)
    assert "| kunit-kasan `kasan.mode=sync` | pass (2/0/0) | fail (2/1/0: a, b) |" in text
    assert "| kunit-kasan `kasan.mode=async` | pass (2/0/0) | not run |" in text
    assert "command line has `kasan=on`" in text


def test_the_committed_figures_are_what_the_committed_results_draw(tmp_path: Path) -> None:
    """Every file in plots/out is redrawn from results/ byte for byte (the PDFs
    carry no date and the venv is locked), and none is left over."""
    assert all_figures.main(["--results", str(style.RESULTS), "--out", str(tmp_path)]) == 0
    drawn = {p.name for p in tmp_path.iterdir()}
    # The verdict table comes from publish/, not from a figure script.
    committed = {p.name for p in style.OUT.iterdir()} - {"verdicts.md"}
    assert committed == drawn, "make publish, or remove what no figure script writes"
    differ = [name for name in sorted(drawn)
              if (style.OUT / name).read_bytes() != (tmp_path / name).read_bytes()]
    assert not differ, f"stale committed figures (make publish): {differ}"


def test_every_figure_fits_its_paper_width_embeds_its_fonts_and_overlaps_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Drawn for a column (3.5 in) or a page (7 in) of a two-column paper, and
    re-laid for the other width (``<name>.column.pdf`` or ``<name>.page.pdf``),
    each saved picture no wider than its width; TrueType fonts embedded in
    every PDF (no Type 3); no text over another, no legend over a text or bar,
    at either width."""
    from PIL import Image

    found: dict[str, list[str]] = {}
    widths: dict[str, float] = {}
    save, relay = style.Folders.save, style.for_other_width

    def checked(self: style.Folders, fig: style.plt.Figure, name: str) -> list[Path]:
        found[name] = style.collisions(fig)
        widths[name] = fig.get_figwidth()
        fig.hardening_name = name
        return save(self, fig, name)

    def relaid(fig: style.plt.Figure) -> str:
        width = relay(fig)
        found[f"{fig.hardening_name}.{width}"] = style.collisions(fig)
        return width

    monkeypatch.setattr(style.Folders, "save", checked)
    monkeypatch.setattr(style, "for_other_width", relaid)
    assert all_figures.main(["--results", str(style.RESULTS), "--out", str(tmp_path)]) == 0
    assert found and len(found) == 2 * len(widths)
    assert not {name: c for name, c in found.items() if c}
    for name, declared in widths.items():
        column = declared <= style.COLUMN_LIMIT_IN
        limit = style.COLUMN_LIMIT_IN if column else style.PAGE_LIMIT_IN
        picture = Image.open(tmp_path / f"{name}.png")
        assert picture.size[0] / picture.info["dpi"][0] <= limit + 0.01, name
        other, other_limit = ((f"{name}.page.pdf", style.PAGE_LIMIT_IN) if column
                              else (f"{name}.column.pdf", style.COLUMN_LIMIT_IN))
        for pdf_name in (f"{name}.pdf", other):
            pdf = (tmp_path / pdf_name).read_bytes()
            assert b"/FontFile2" in pdf and b"/Type3" not in pdf, pdf_name
        # The re-laid picture has no PNG to measure: its PDF page is its size
        # (with the 0.02 in that savefig pads either side).
        box = re.search(rb"/MediaBox \[ *0 0 ([0-9.]+)", (tmp_path / other).read_bytes())
        assert box and float(box.group(1)) / 72 <= other_limit + 0.05, other


@pytest.fixture
def drawn_collisions(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What style.collisions finds in every figure a test then draws; each
    figure is also held to the page's width."""
    found: list[str] = []
    save = style.Folders.save

    def checked(self: style.Folders, fig: style.plt.Figure, name: str) -> list[Path]:
        found.extend(style.collisions(fig))
        assert fig.get_figwidth() <= style.PAGE_LIMIT_IN
        return save(self, fig, name)

    monkeypatch.setattr(style.Folders, "save", checked)
    return found


def test_a_sensitivity_check_draws_each_arms_effect_per_setting(
        tmp_path: Path, drawn_collisions: list[str]) -> None:
    """Until its runs are committed, the sensitivity figure is held to the
    paper width and collision rules on rows of its shape."""
    from plots import sensitivity

    checks = tmp_path / "checks" / "sensitivity"
    checks.mkdir(parents=True)
    rows = [{"experiment": "c4-uaccess-isb", "variant": variant, "params": params,
             "workload": workload, "metric": "ns_per_iteration", "value": ns * scale,
             "gem5_build": "g1", "kernel_build": "k1"}
            for workload in ("longpath", "getdents")
            for params, scale in (("", 1.0), ("sysreg.isb_latency=13", 1.2),
                                  ("sysreg.isb_latency=26", 1.4))
            for variant, ns in (("baseline", 100.0), ("pan-per-access", 300.0),
                                ("pan-per-access-isb", 900.0), ("pan-batched-isb", 120.0))]
    pd.DataFrame(rows).to_csv(checks / "c4-uaccess-isb.csv", index=False)
    sensitivity.main(style.Folders(tmp_path, tmp_path / "out"))
    assert not drawn_collisions
    table = (tmp_path / "out" / "c4_uaccess_isb.md").read_text()
    assert ("| longpath | ISB +13 cycles | 120.0 | 144.0 | 360.0 | 1,080.0 | +20.0% | +200.0% "
            "| +800.0% |") in table
    pd.DataFrame(rows + rows[:1]).to_csv(checks / "c4-uaccess-isb.csv", index=False)
    with pytest.raises(RuntimeError, match="two runs of"):
        sensitivity.main(style.Folders(tmp_path, tmp_path / "out"))



def test_the_isb_check_gives_cycles_per_isb_above_the_loop(tmp_path: Path) -> None:
    from plots import sysreg_isb

    check = tmp_path / sysreg_isb.CHECK
    check.parent.mkdir(parents=True)
    rows = [{"experiment": "sysreg-isb", "core": core, "params": params, "workload": workload,
             "metric": "cycles_per_iteration", "value": loop + (extra + isb if workload == "isb"
                                                                else 0)}
            for core, loop, isb in (("cortex-a76", 2.0, 13.0), ("neoverse-v1", 1.5, 11.0))
            for params, extra in (("", 0), ("sysreg.isb_latency=13", 13))
            for workload in ("nop", "isb")]
    pd.DataFrame(rows).to_csv(check, index=False)
    sysreg_isb.main(style.Folders(tmp_path, tmp_path / "out"))
    table = (tmp_path / "out" / "sysreg_isb.md").read_text()
    assert "| 0 (the model's) | 13.0 | 11.0 |" in table
    assert "| +13 | 26.0 | 24.0 |" in table
    pd.DataFrame(rows + rows[:1]).to_csv(check, index=False)
    with pytest.raises(RuntimeError, match="two runs of"):
        sysreg_isb.main(style.Folders(tmp_path, tmp_path / "out"))


def test_mte_instructions_nets_out_the_loop_and_sets_published_figures_beside(
        tmp_path: Path, drawn_collisions: list[str]) -> None:
    from plots import mte_instructions

    runs = {"loop": (1.0, 0, 0), "irg": (11.0, 16000, 0), "stg-one": (21.0, 0, 16000),
            "ldr-untagged": (5.0, 0, 0), "ldr-sync": (5.5, 0, 0)}
    rows = [{"experiment": "mte-instructions", "core": core, "workload": workload,
             "metric": metric, "value": value * scale, "gem5_build": "g1", "kernel_build": "k1"}
            for core, scale in (("cortex-x3", 1.0), ("neoverse-v2", 2.0))
            for workload, (cycles, serializing, at_head) in runs.items()
            for metric, value in (("cycles_per_iteration", cycles),
                                  ("serializing_instructions", serializing),
                                  ("nonspeculative_instructions", at_head),
                                  ("iterations", 16000 / scale))]
    pd.DataFrame(rows).to_csv(tmp_path / "mte-instructions.csv", index=False)
    mte_instructions.main(style.Folders(tmp_path, tmp_path / "out"))
    assert not drawn_collisions
    table = (tmp_path / "out" / "mte_instructions.md").read_text()
    assert ("| `irg` | latency | 10.00 | 20.00 | 1.00 / 0.00 |  | X3 2, A715 2, A510 3 (FINK-MSC); "
            "V2 guide 2, the model's input (LLVM-V2) |") in table
    assert "| `ldr-sync` | latency | 4.50 | 9.00 | 0.00 / 0.00 | +10.0% / +10.0% |" in table
    assert "| `stg-one` | throughput | 20.00 | 40.00 | 0.00 / 1.00 |" in table
    assert "`loop`" not in table
    pd.DataFrame(rows + rows[:1]).to_csv(tmp_path / "mte-instructions.csv", index=False)
    with pytest.raises(RuntimeError, match="two runs of"):
        mte_instructions.main(style.Folders(tmp_path, tmp_path / "out"))

def test_collisions_finds_overlapping_texts_and_a_legend_over_a_bar() -> None:
    fig, axis = style.figure()
    axis.bar([0, 1], [10, 9], label="a bar")
    axis.set_xticks([0, 1], ["first label", "second"])
    assert style.collisions(fig) == []
    axis.text(0, 5, "over")
    axis.text(0, 5, "here")
    axis.legend(loc="upper left")
    found = style.collisions(fig)
    assert "text 'over' over text 'here'" in found
    assert any(c.startswith("legend over a bar") for c in found)
    style.plt.close(fig)
    # A figure's own legend over a panel's bars.
    fig, axis = style.figure()
    axis.bar([0, 1, 2], [10, 9, 8], label="a bar")
    fig.legend(loc="center")
    assert any(c.startswith("legend over a bar") for c in style.collisions(fig))
    style.plt.close(fig)
    # A bar of a missing value is not drawn, so a legend where it would be is free.
    fig, axis = style.figure()
    axis.bar([0, 5], [10, float("nan")], label="a bar")
    axis.set_xlim(-1, 6)
    axis.set_ylim(0, 11)
    axis.legend(loc="center", bbox_to_anchor=(0.9, 0.5))
    assert style.collisions(fig) == []
    style.plt.close(fig)


def test_a_figures_builds_are_in_its_files_not_its_picture(tmp_path: Path) -> None:
    import json

    from PIL import Image

    frame = pd.DataFrame({"gem5_version": ["v24"], "gem5_build": ["g1"], "kernel_build": ["k1"],
                          "repo_commit": ["c1"], "value": [1.0]})
    fig, axis = style.figure()
    axis.plot([0, 1], [0, 1])
    style.add_provenance(fig, frame)
    assert not fig.texts, "provenance drawn into the picture"
    written = style.Folders(tmp_path, tmp_path).save(fig, "example")
    assert {p.name for p in written} == {"example.pdf", "example.png", "example.page.pdf",
                                          "example.provenance.json"}
    builds = json.loads((tmp_path / "example.provenance.json").read_text())["builds"]
    assert builds == {"gem5_version": ["v24"], "gem5_build": ["g1"], "kernel_build": ["k1"],
                      "repo_commit": ["c1"]}
    assert json.loads(Image.open(tmp_path / "example.png").info["Description"]) == builds
    assert b"repo_commit" in (tmp_path / "example.pdf").read_bytes()
    assert b"repo_commit" in (tmp_path / "example.page.pdf").read_bytes()


def test_the_register_table_names_timed_operations_and_listed_sources() -> None:
    """Every operation the per-register table reads is one the microbenchmark
    times, and every source key it cites is explained in the sources page."""
    import tomllib

    from plots import sysreg_registers

    definition = tomllib.loads((style.REPO_ROOT / "experiments/definitions/"
                                "sysreg-microbench.toml").read_text())
    timed = {w["name"] for w in definition["workloads"]}
    sources = (style.REPO_ROOT / "docs/parameter-sources.md").read_text()
    for register in sysreg_registers.registers():
        assert set(register.reads + register.writes) <= timed, register.name
        for key in register.source.split(", "):
            assert f"| `{key}` |" in sources, (register.name, key)


def test_a_register_entry_with_an_unknown_key_fails_naming_the_valid_ones(
        tmp_path: Path) -> None:
    from plots import sysreg_registers

    listing = tmp_path / "registers.toml"
    listing.write_text('[[register]]\nname = "TCR_EL1"\nread = ["mrs_tcr_el1"]\n'
                       'used_by = "x"\nrule = "y"\nsource = "ARM-SYNC"\n')
    with pytest.raises(ValueError, match=r"unknown key\(s\) \['read'\]; valid: .*'reads'"):
        sysreg_registers.registers(listing)


def test_mte_workloads_pairs_each_mode_with_its_own_sample_of_the_baseline(
        tmp_path: Path, drawn_collisions: list[str]) -> None:
    from plots import mte_workloads

    # ns per operation: sample 1's layout is slower in every mode alike.
    base = {"access": 10.0, "churn": 20.0, "kv": 5.0, "memset": 2.0}
    extra = {"untagged": 0.0, "none": 0.10, "sync": 0.12, "async": 0.11, "asymm": 0.12}
    rows = [{"experiment": "mte-workloads", "core": "cortex-x3", "workload": f"{p}-{m}",
             "sample": sample, "metric": metric, "value": value,
             "gem5_build": "g1", "kernel_build": "k1"}
            for p, ns in base.items() for m, share in extra.items() for sample in (0, 1)
            for metric, value in (("ns_per_iteration", ns * (1 + share) * (1 + sample)),
                                  ("iterations", 1000.0),
                                  ("instructions", 1000.0 * (100 + 10 * share)),
                                  ("serializing_instructions", 0.0),
                                  ("serialize_stall_cycles", 0.0),
                                  ("l1d_misses", 50.0),
                                  ("tag_checked_misses", 0.0))]
    pd.DataFrame(rows).to_csv(tmp_path / "mte-workloads.csv", index=False)
    mte_workloads.main(style.Folders(tmp_path, tmp_path / "out"))
    assert not drawn_collisions
    table = (tmp_path / "out" / "mte_workloads.md").read_text()
    # Paired by sample, so the layouts' 2x cancels: exactly +10% / +12% / +1.82%.
    assert "| churn | untagged | +10.00% [+10.00, +10.00] | +12.00% [+12.00, +12.00] |" in table
    assert "| churn | none | | +1.82% [+1.82, +1.82] |" in table
    assert "| Cortex-X3 | sync | +11.5% | FINK-MSC |" in table


def test_the_mte_table_pairs_each_mode_with_checks_off_of_its_own_sample() -> None:
    from plots import mte

    rows = pd.DataFrame([
        {"core": "c", "workload": workload, "timing": "tag_cache", "metric": "ns_per_iteration",
         "sample": sample, "value": value}
        for workload, values in (("access-none", (10.0, 20.0, 30.0)),
                                 ("access-sync", (11.0, 21.0, 30.0)))
        for sample, value in zip("012", values)])
    median, low, high = mte.paired_cost(rows, "c", "tag_cache", "sync")
    assert (round(median, 6), round(low, 6), round(high, 6)) == (5.0, 0.0, 10.0)
    assert mte.percent(-0.001) == "+0.0" and mte.percent(-0.26) == "-0.3"
