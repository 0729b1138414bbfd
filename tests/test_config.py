"""meterbook.toml is checked, not trusted: a typo stops with its line and the nearest name, a
wrong type says what is expected, `config check` shows what the file maps and what it misses,
the --help example is a real file, and commands that read a warehouse never create one."""
from __future__ import annotations

import textwrap
from datetime import datetime
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from core.errors import InputError
from pipelines.cli import main
from pipelines.config import example_text, load_config
from tests.conftest import DATA, ingest_json
from tests.telemetry_fixtures import Trace, write_prom_text
from tests.test_environment_errors import said

EXAMPLE = Path(__file__).resolve().parents[1] / "pipelines" / "meterbook.example.toml"


def line_of(text: str, starts: str) -> int:
    return next(i for i, ln in enumerate(text.splitlines(), 1) if ln.startswith(starts))


def test_hosts_misspelled_stops_with_its_line_and_the_right_name(tmp_path, monkeypatch):
    """Issue 14: [host] for [hosts] was ignored and moved 1,701.06 USD from research to platform."""
    text = example_text().replace("\n[hosts]", "\n[host]")
    monkeypatch.chdir(tmp_path)
    Path("meterbook.toml").write_text(text, encoding="utf-8")
    res = CliRunner().invoke(main, ["config", "check", "--config", "meterbook.toml"])
    assert res.exit_code == 1
    assert res.output == (f"Error: meterbook.toml: unknown section [host] (line {line_of(text, '[host]')}). "
                          "Did you mean [hosts]?\n")


def test_a_number_in_quotes_says_which_key_and_what_is_expected(tmp_path):
    text = example_text().replace("interval_s = 30 ", 'interval_s = "30"')
    (tmp_path / "meterbook.toml").write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as exc:
        load_config(tmp_path / "meterbook.toml")
    assert str(exc.value) == (f'{tmp_path / "meterbook.toml"}: [telemetry] interval_s = "30": expected a number, not a string '
                              f"(line {line_of(text, 'interval_s')}). Write it without quotes: interval_s = 30")


@pytest.mark.parametrize("toml, message", [
    ('[teams]\ntag_key = ["team"]', "unknown key tag_key in [teams] (line 2). Did you mean tag_keys?"),
    ('[teams]\ntag_keys = "team"', '[teams] tag_keys = "team": expected an array of strings, not a string (line 2)'),
    ('[teams.namespace]\nllm = "research"', "unknown section [teams.namespace] (line 1). Did you mean [teams.namespaces]?"),
    ("[teams.namespaces]\nllm = 3", "[teams.namespaces] llm = 3: expected a string, not a number (line 2)"),
    ('[teams.accounts]\n"4444" = 1', '[teams.accounts] 4444 = 1: expected a string, not a number (line 2). Quote it'),
    ('[[teams.rules]]\nfield = "namespace"\npattern = "^a"\nteam = "x"\n[[teams.rules]]\nfield = "service"\npatern = "b"',
     "unknown key patern in [[teams.rules]] #2 (line 7). Did you mean pattern?"),
    ('[teams]\nrules = { field = "service" }', "[teams] rules is a table (line 2)"),
    ('[allocation]\nidle = "proportionl"', '(line 2). Did you mean "proportional"?'),
    ('[allocation]\nidel = "even"', "unknown key idel in [allocation] (line 2). Did you mean idle?"),
    ('[allocation]\nweights = { research = "3" }', '[allocation.weights] research = "3": expected a number, not a string (line 2)'),
    ("[allocation.weight]\nresearch = 3", "unknown section [allocation.weight] (line 1). Did you mean [allocation.weights]?"),
    ("[hosts]\nip-10-0-1-11 = 1", "[hosts] ip-10-0-1-11 = 1: expected a string, not a number (line 2)"),
    ("[telemetry]\ninterval_s = 0", "[telemetry] interval_s = 0: expected a number from 1 to 86400 "
                                    "(config_interval_s_min, config_interval_s_max) (line 2)"),
    ("[telemetry]\ngap_multiple = true", "[telemetry] gap_multiple = true: expected a number, not a boolean (line 2)"),
    ('[carbon.market_intensity]\n"aws:us-east-1" = 379.0',
     "unknown section [carbon.market_intensity] (line 1). Did you mean [carbon.market_intensity_g_per_kwh]?"),
    ('[carbon.market_intensity_g_per_kwh]\n"aws:us-east-1" = "379"', "expected a number, not a string (line 2)"),
    ("[findings]\nlow_util_treshold = 0.4", "unknown key low_util_treshold in [findings] (line 2). Did you mean low_util_threshold?"),
    ("[findings]\nreconciliation_gap_tolerance_fraction = 0.1", "unknown key reconciliation_gap_tolerance_fraction in [findings]"),
    ('tag_keys = ["team"]', "unknown key tag_keys at the top level (line 1). Did you mean tag_keys under [teams]?"),
    # issue 36: a sub-second interval turned every scrape into a gap and moved money between teams
    ("[telemetry]\ninterval_s = 1e-300", "[telemetry] interval_s = 1e-300: expected a number from 1 to 86400 "
                                         "(config_interval_s_min, config_interval_s_max) (line 2). e.g. interval_s = 30"),
    ("[telemetry]\ninterval_s = 86401", "interval_s = 86401: expected a number from 1 to 86400"),
    ("[telemetry]\ninterval_s = nan", "interval_s = nan: expected a number from 1 to 86400"),
    ("[telemetry]\ngap_multiple = 0.5", "gap_multiple = 0.5: expected a number from 1 to 1000 "
                                        "(config_gap_multiple_min, config_gap_multiple_max) (line 2)"),
    ("[allocation]\nweights = { research = inf }", "[allocation.weights] research = inf: expected a number from 0 to 1e+12 "
                                                   "(config_number_max) (line 2)"),
    ("[allocation]\nweights = { research = 1e300 }", "research = 1e+300: expected a number from 0 to 1e+12"),
    ('[carbon.market_intensity_g_per_kwh]\n"aws:us-east-1" = 5000',
     "aws:us-east-1 = 5000: expected a number from 0 to 1200 (config_intensity_max) (line 2)"),
    ('[[carbon.supplier_factors]]\nzone = "z"\ng_per_kwh = 1\nsource = "s"\nyear = 20250',
     "[[carbon.supplier_factors]] #1 year = 20250: expected a number from 1990 to 2100 (config_year_max) (line 5)"),
    ("[findings]\nlow_util_threshold = -1e13", "low_util_threshold = -10000000000000.0: expected a number between -1e+12 and 1e+12"),
    ("[whatif]\nshift_window_h = 1e13", "shift_window_h = 10000000000000.0: expected a number from 0 to 1e+12"),
])
def test_every_section_is_checked(tmp_path, toml, message):
    path = tmp_path / "m.toml"
    path.write_text(toml + "\n", encoding="utf-8")
    with pytest.raises(InputError) as exc:
        load_config(path)
    assert message in str(exc.value)


@pytest.mark.parametrize("pattern, problem", [
    ("^(?=plat)", "invalid perl operator: (?="), ("(a)\\1", "invalid escape sequence: \\1"),
    ("plat\\Z", "invalid escape sequence: \\Z"),
])
def test_a_rule_python_accepts_and_duckdb_refuses_stops_config_check(tmp_path, pattern, problem):
    """Python's re compiles all three; DuckDB's RE2, which runs the rules, does not, and the report
    stopped with a traceback. Checked where the config is loaded, so every command refuses it."""
    import re
    re.compile(pattern)
    cfg = tmp_path / "meterbook.toml"
    cfg.write_text(f"[[teams.rules]]\nfield = \"namespace\"\npattern = '{pattern}'\nteam = \"platform\"\n", encoding="utf-8")
    res = CliRunner().invoke(main, ["config", "check", "--config", str(cfg)])
    assert res.exit_code == 1
    assert res.output == (f"Error: {cfg}: [[teams.rules]] #1 pattern is not a regular expression DuckDB can run "
                          f"(line 2; {pattern}: {problem}). Fix the pattern (RE2 syntax: no look-around, "
                          "back-references or \\Z; use $ for the end)\n")


def test_the_help_example_is_the_shipped_file_and_parses_when_pasted(tmp_path):
    """What --help prints, copied from the terminal (indented, blank lines or not), is the file."""
    help_text = CliRunner().invoke(main, ["--help"], terminal_width=80).output
    first = example_text().splitlines()[0]
    pasted = textwrap.dedent(help_text[help_text.index(first) - 2:])   # from the example's first line, as indented
    assert max(map(len, example_text().splitlines())) > 80        # not re-wrapped although wider
    (tmp_path / "pasted.toml").write_text(pasted, encoding="utf-8")
    parsed, shipped = load_config(tmp_path / "pasted.toml"), load_config(EXAMPLE)
    fields = ("tag_keys", "namespace_teams", "account_teams", "team_rules", "allocation", "weights", "hosts",
              "interval_s", "gap_multiple", "default_zone", "market_intensity", "findings")
    assert {f: getattr(parsed, f) for f in fields} == {f: getattr(shipped, f) for f in fields}
    assert shipped.hosts and shipped.team_rules and shipped.weights and shipped.findings   # every section shown


@pytest.fixture(scope="module")
def small_warehouse(tmp_path_factory) -> Path:
    """Three FOCUS lines and two namespaces on one host, one namespace mapped and one not."""
    root = tmp_path_factory.mktemp("cfg")
    start = datetime(2026, 10, 14)
    traces = [Trace(f"GPU-{i}", start, 30, [300.0] * 240, extra_labels=f',namespace="{ns}",pod="{ns}-0"')
              for i, ns in enumerate(["llm-pretrain", "notebooks"])]
    prom = write_prom_text(root / "node-a.prom", traces)
    ingest_json(root / "wh.duckdb", DATA / "focus" / "focus_1.2_minimal.csv", prom)
    return root / "wh.duckdb"


def test_config_check_prints_the_mappings_and_what_matches_nothing(small_warehouse, tmp_path):
    cfg = tmp_path / "meterbook.toml"
    cfg.write_text('[teams.namespaces]\nllm-pretrain = "research"\nghost-ns = "vision"\n'
                   '[hosts]\nnode-b = "i-0zzz"\n[[teams.rules]]\nfield = "service"\npattern = "^Amazon S3$"\nteam = "data"\n',
                   encoding="utf-8")
    res = CliRunner().invoke(main, ["config", "check", "--config", str(cfg), "--warehouse", str(small_warehouse)])
    assert res.exit_code == 0, res.output
    out = res.output.splitlines()
    for line in ["Tag keys, first match wins: team, cost-center, project", "Namespace -> team: 2", "  llm-pretrain -> research",
                 "Host -> billed resource: 1", "  node-b -> i-0zzz", "Rules, in order, after tag keys: 1",
                 "  1. service matches ^Amazon S3$ -> data", "  resolved by tag:team: 2 lines",
                 "    credits: 1 lines, USD -5.00: shared over teams (proportional)",
                 "Telemetry namespaces: 2; with no team: 1", "  notebooks (2 GPU-hours seen)",
                 "Telemetry hosts: 1; matching no billed resource ([hosts], instance id label or host name): 1",
                 "  node-a (4 GPU-hours seen)",
                 "Config entries that match nothing in the warehouse: 4",
                 "  [hosts] node-b -> i-0zzz: no charge for this resource", "  [hosts] node-b: no such host in telemetry",
                 "  [teams.namespaces] ghost-ns: no such namespace in telemetry"]:
        assert line in out, f"{line!r} not in:\n{res.output}"
    assert any(ln.startswith("  [[teams.rules]] #1 (service ~ ^Amazon S3$): resolves nothing") for ln in out)
    assert out[0] == f"Config: {cfg} (sha256 {__import__('hashlib').sha256(cfg.read_bytes()).hexdigest()})"


def test_a_config_typo_stops_the_report_before_anything_is_written(small_warehouse, tmp_path):
    cfg = tmp_path / "meterbook.toml"
    cfg.write_text('[host]\nnode-a = "i-0a5000000000002"\n', encoding="utf-8")
    res = CliRunner().invoke(main, ["report", "chargeback", "--month", "2026-10", "--warehouse", str(small_warehouse),
                                    "--config", str(cfg), "--out", str(tmp_path / "out")])
    assert res.exit_code == 1 and "unknown section [host] (line 1). Did you mean [hosts]?" in res.output
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", [
    ["report", "chargeback", "--month", "2026-10"], ["report", "audit", "--month", "2026-10"],
    ["export", "focus", "--month", "2026-10"], ["validate"], ["config", "check"], ["build"],
])
def test_a_missing_warehouse_is_an_error_and_nothing_is_created(tmp_path, command):
    """Issue 14: a misspelled --warehouse created an empty one and reported "months: none"."""
    wh = tmp_path / "build" / "meterbok.duckdb"
    res = CliRunner().invoke(main, [*command, "--warehouse", str(wh)])
    assert res.exit_code == 1
    assert f"Error: {wh}: warehouse not found" in res.output and "meterbook ingest" in res.output
    assert list(tmp_path.iterdir()) == []


def test_ingest_still_creates_a_warehouse(tmp_path):
    wh = tmp_path / "new" / "wh.duckdb"
    ingest_json(wh, DATA / "focus" / "focus_1.2_minimal.csv")
    assert wh.is_file()


def test_a_warehouse_from_before_invoices_gains_them_on_open(tmp_path):
    """Older warehouses have no charges.invoice_id and no invoices table: opening one adds both,
    its lines keep a null invoice id, and the month still reconciles (to the loaded exports)."""
    wh = tmp_path / "old.duckdb"
    ingest_json(wh, DATA / "focus" / "focus_1.2_minimal.csv")
    with duckdb.connect(str(wh)) as con:
        con.execute("alter table charges drop column invoice_id")
        con.execute("drop table invoices")
        # as such a meterbook left it: without the sha256 of the DDL it was made by
        con.execute("comment on table source_files is null")
    from pipelines.stages import run_stages
    from pipelines.warehouse import connect
    with connect(wh, create=False) as con:
        assert con.execute("select count(*), count(invoice_id) from charges").fetchone() == (3, 0)
        run_stages(con, load_config(None))
        assert con.execute("select basis, invoice_id, status from reconciliation").fetchall() == [
            ("loaded exports", None, "reconciled")]


def test_reports_name_the_config_they_used(small_warehouse, tmp_path, monkeypatch):
    """The config's sha256 in provenance.json and the footer; none given: a warning on page 1
    that names the spend left without a team."""
    import json

    from pypdf import PdfReader
    monkeypatch.setattr("pipelines.progress.TICK_S", 0.05)   # progress lines as on a slow machine
    res = CliRunner().invoke(main, ["report", "chargeback", "--month", "2026-10", "--warehouse", str(small_warehouse),
                                    "--out", str(tmp_path / "out")])
    assert res.exit_code == 0, res.output
    assert said(res.stderr)[0].startswith("Note: no --config"), res.stderr   # after any progress lines
    pdf = PdfReader(tmp_path / "out" / "chargeback.pdf")
    first = " ".join(pdf.pages[0].extract_text().split())
    assert "No meterbook.toml was given (--config)" in first
    assert "mappings; 4.0 observed GPU-hours have no team" in first, first
    assert "config none: defaults" in first
    assert json.loads(pdf.attachments["provenance.json"][0])["config_sha256"] is None


def test_config_check_lists_the_supplier_factors_the_build_applies(tmp_path):
    """A supplier factor the reports use is never shown as 'none'; a legacy one says it has no source."""
    cfg = tmp_path / "meterbook.toml"
    cfg.write_text('[[carbon.supplier_factors]]\nzone = "aws:us-east-1"\ng_per_kwh = 290.0\n'
                   'source = "Utility fuel mix disclosure"\nyear = 2025\n'
                   '[carbon.market_intensity_g_per_kwh]\n"aws:us-west-2" = 80.0\n', encoding="utf-8")
    res = CliRunner().invoke(main, ["config", "check", "--config", str(cfg)])
    assert res.exit_code == 0, res.output
    out = res.output.splitlines()
    at = out.index("Market-based supplier factors (after instruments): 2")
    assert out[at + 1] == "  aws:us-east-1 290 g/kWh, Utility fuel mix disclosure (2025)"
    assert out[at + 2].startswith("  aws:us-west-2 80 g/kWh, meterbook.toml [carbon.market_intensity_g_per_kwh]: no source")
