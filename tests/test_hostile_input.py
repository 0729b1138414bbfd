"""Small hostile files (YAML aliases, deep nesting) stop with one Error line, quickly and in little
memory, in every command that reads them (sources/bounded.py, limits in sources/input_limits.csv)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipelines.demo import DISCLOSURE
from sources.bounded import LimitError, limit, load_json, load_toml, load_yaml
from tests.conftest import DATA, ROOT, run_cli

BOMB = DATA / "hostile" / "disclosure_alias_bomb.yaml"
DEPTH = 20_000     # far past Python's recursion limit (1000) and DuckDB's JSON depth (128)

# One command in a fresh interpreter, timed and measured after its imports; the address space is
# capped so that a regression fails here instead of taking the machine (the unbounded parse took
# 13.8 GB).
MEASURE = """
import json, resource, sys, time
resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
from pipelines.cli import main
import pipelines.reconstruct.cli, pipelines.ingest  # imports are not the parse
t0 = time.perf_counter()
try:
    main(sys.argv[1:], standalone_mode=False)
    code = 0
except SystemExit as exc:
    code = exc.code
except BaseException as exc:
    code = repr(exc)
# VmHWM, not getrusage's ru_maxrss: Linux carries ru_maxrss across exec from the forked copy of
# the parent (a pytest worker of several hundred MB); VmHWM is this program's own peak.
peak_kb = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(json.dumps({"code": code, "s": time.perf_counter() - t0, "rss_mb": peak_kb / 1024}))
"""


def measured(*args: str) -> tuple[dict, str]:
    proc = subprocess.run([sys.executable, "-c", MEASURE, *args], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.stdout.strip(), proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr


def test_alias_bomb_stops_in_under_a_second_below_200_mb(tmp_path):
    got, err = measured("reconstruct", str(BOMB))
    assert got["code"] == 1, (got, err[-2000:])
    assert err.strip().splitlines() == [
        f"Error: {BOMB}: YAML anchor &a: meterbook reads no anchors or aliases (line 4). Write each value out where it is used"]
    assert got["s"] < 1 and got["rss_mb"] < 200, got


def test_alias_bomb_costs_ingest_no_more_than_an_ordinary_file(tmp_path):
    """Ingest pays about half a second to open a warehouse and load the reference data whatever
    the file (more on a busy machine): the bomb may add a second to what the demo disclosure takes."""
    plain = tmp_path / "demo.yaml"
    plain.write_text(DISCLOSURE, encoding="utf-8")
    base, _ = measured("ingest", str(plain), "--warehouse", str(tmp_path / "plain.duckdb"))
    got, err = measured("ingest", str(BOMB), "--warehouse", str(tmp_path / "wh.duckdb"))
    assert got["code"] == 1 and base["code"] == 0, (got, base, err[-2000:])
    assert err.strip().splitlines() == [
        f"Error: {BOMB}: YAML anchor &a: meterbook reads no anchors or aliases (line 4). Write each value out where it is used"]
    assert got["s"] < base["s"] + 1 and got["rss_mb"] < 200, (got, base)


def _deep_yaml_flow(tmp: Path) -> Path:
    p = tmp / "deep_flow.yaml"
    p.write_text("model: x\nsource: " + "[" * DEPTH + "\n")
    return p


def _deep_yaml_blocks(tmp: Path) -> Path:
    p = tmp / "deep_blocks.yaml"
    p.write_text("model: x\nsource:\n" + "- " * DEPTH + "x\n")
    return p


def _deep_card(tmp: Path) -> Path:
    p = tmp / "deep_card.md"
    p.write_text("---\nco2_eq_emissions: 17\nmodel-index: " + "[" * DEPTH + "\n---\n# A model\n")
    return p


@pytest.mark.parametrize("make", [_deep_yaml_flow, _deep_yaml_blocks, _deep_card])
@pytest.mark.parametrize("command", ["ingest", "reconstruct"])
def test_deep_yaml_is_one_error_line(tmp_path, make, command):
    path = make(tmp_path)
    extra = ["--warehouse", str(tmp_path / "wh.duckdb")] if command == "ingest" else []
    code, _, err = run_cli(command, str(path), *extra)
    assert code == 1 and "Traceback" not in err
    [line] = err.strip().splitlines()
    assert line.startswith(f"Error: {path}: the YAML document nests more than 64 levels deep (nesting_depth_max) (line ")
    assert line.endswith("). Flatten the document; no meterbook input needs that depth")


def test_deep_json_disclosure_is_one_error_line_in_reconstruct(tmp_path):
    """JSON is YAML: a disclosure written as JSON is read by the same bounded loader."""
    path = tmp_path / "deep.json"
    path.write_text('{"model": "x", "source": ' + "[" * DEPTH + "\n")
    code, _, err = run_cli("reconstruct", str(path))
    assert code == 1 and "Traceback" not in err
    assert err.strip().splitlines() == [
        f"Error: {path}: the YAML document nests more than 64 levels deep (nesting_depth_max) (line 1). "
        "Flatten the document; no meterbook input needs that depth"]


def test_deep_json_lines_are_one_error_line(tmp_path):
    path = tmp_path / "work.jsonl"
    path.write_text('{"job_id": ' + "[" * DEPTH + "\n")
    code, _, err = run_cli("ingest", str(path), "--warehouse", str(tmp_path / "wh.duckdb"))
    assert code == 1 and "Traceback" not in err
    assert err.strip().splitlines() == [
        f"Error: {path}: the first JSON record nests more than 64 levels deep (nesting_depth_max) (line 1). "
        "Flatten the document; no meterbook input needs that depth"]


@pytest.mark.parametrize("command", [["config", "check"], ["ingest", str(BOMB.parent.parent / "disclosures" / "published")]])
def test_deep_toml_config_is_one_error_line(tmp_path, command):
    config = tmp_path / "meterbook.toml"
    config.write_text("[telemetry]\ninterval_s = 30\n\n[teams]\ntag_keys = " + "[" * 5000 + "\n")
    extra = ["--warehouse", str(tmp_path / "wh.duckdb")] if command[0] == "ingest" else []
    code, _, err = run_cli(*command, "--config", str(config), *extra)
    assert code == 1 and "Traceback" not in err
    assert err.strip().splitlines() == [
        f"Error: {config}: the TOML document nests more than 64 levels deep (nesting_depth_max) (line 5). "
        "Flatten the document; no meterbook input needs that depth"]
    assert not (tmp_path / "wh.duckdb").exists()


# ---- the loader itself ---------------------------------------------------------------------------

@pytest.mark.parametrize("load, text", [
    (load_yaml, "a: " + "[" * 65 + "]" * 65), (load_yaml, "a:\n" + "- " * 65 + "x"),
    (load_toml, "a = " + "[" * 65 + "]" * 65), (load_toml, "a = " + "{b = " * 65 + "1" + "}" * 65),
    (load_json, "[" * 65 + "]" * 65), (load_json, '{"a": ' * 65 + "1" + "}" * 65),
])
def test_one_level_past_the_limit_is_refused(load, text):
    assert limit("nesting_depth_max") == 64
    with pytest.raises(LimitError, match="nesting_depth_max"):
        load(text)


@pytest.mark.parametrize("load, text, expected", [
    (load_yaml, "a: " + "[" * 63 + "]" * 63, None), (load_toml, 'a = "[[[[' + "[" * 70 + '"', {"a": "[[[[" + "[" * 70}),
    (load_toml, "# " + "[" * 70 + "\na = 1", {"a": 1}), (load_json, '["' + "[" * 70 + '"]', ["[" * 70]),
    (load_toml, 'a = """\n' + "{" * 70 + '"""', {"a": "{" * 70}),
])
def test_brackets_in_strings_and_comments_do_not_count(load, text, expected):
    got = load(text)
    if expected is not None:
        assert got == expected


def test_a_document_past_the_size_limit_is_refused_before_parsing():
    most = int(limit("structured_bytes_max"))
    with pytest.raises(LimitError, match="structured_bytes_max"):
        load_yaml("a: " + "x" * most)


@pytest.mark.parametrize("text", ["a: &x 1\nb: 2", "a: 1\nb: *x", "a: !!str &x 1"])
def test_anchors_and_aliases_are_refused(text):
    with pytest.raises(Exception, match="anchor|alias|undefined"):
        load_yaml(text)


@given(depth=st.integers(min_value=1, max_value=3000), kinds=st.lists(st.sampled_from("[{"), min_size=1, max_size=8))
@settings(max_examples=60, deadline=None)
def test_any_nesting_parses_below_the_limit_and_is_refused_above_it(depth, kinds):
    """JSON, TOML and YAML nested `depth` deep (arrays and tables mixed): the parser's own value up
    to nesting_depth_max, a LimitError past it, never a RecursionError."""
    opens = [kinds[i % len(kinds)] for i in range(depth)]
    json_text = "".join('{"k": ' if o == "{" else "[" for o in opens) + "1" + "".join("}" if o == "{" else "]" for o in reversed(opens))
    toml_text = "a = " + "".join("{k = " if o == "{" else "[" for o in opens) + "1" + "".join("}" if o == "{" else "]" for o in reversed(opens))
    # the limit counts brackets and braces (and YAML's blocks); a document's own top level may add one
    for load, text in ((load_json, json_text), (load_toml, toml_text), (load_yaml, "a: " + json_text)):
        if depth < 64:
            assert load(text) is not None
        elif depth > 64:
            with pytest.raises(LimitError):
                load(text)


def test_a_card_locates_its_front_matter_problem_by_the_file_line():
    from sources.disclosure_format import parse_hf_card
    with pytest.raises(LimitError) as exc:
        parse_hf_card("---\nco2_eq_emissions: 17\nx: &a 1\n---\n# A model\n")
    assert exc.value.where == "line 3"
