"""The what-if replay of a month (issue 21): one test per lever on a small hand-built month, the
shift lever's guarantees as a property of its SQL model, and `meterbook whatif` on the demo."""
from __future__ import annotations

import json
from datetime import datetime, timedelta

import duckdb
import pytest
from click.testing import CliRunner
from hypothesis import example, given, settings
from hypothesis import strategies as st

from core.sql import read_sql
from core.units import G_PER_KG
from pipelines.cli import main
from pipelines.config import Config
from pipelines.stages import VALIDATED, contract_failures
from pipelines.warehouse import add_macros
from tests.allocation_fixtures import Charge, GpuHour, build, run_after_gpu_hours
from tests.pdf_helpers import cli

M0 = datetime(2026, 10, 1)
MONTH_H = 31 * 24


# ---- the shift lever's SQL model, on its own --------------------------------------------------

def insert(con: duckdb.DuckDBPyConnection, sql: str, rows: list[list]) -> None:
    if rows:                # executemany refuses an empty list
        con.executemany(sql, rows)


def shift_model(job: dict[int, float], other: dict[int, float], hourly: dict[int, float], annual: float, window_h: int) -> list[tuple]:
    """int_whatif_shift.sql over literal inputs: a deferrable job (hour -> IT kWh), a workload that
    is not deferrable, the zone's hourly intensities (hour -> g/kWh) and its annual factor."""
    con = duckdb.connect()
    add_macros(con)
    con.execute(f"set variable g_per_kg = {G_PER_KG}")
    con.execute("create table ref_assumptions as select 'whatif_shift_window_h' as assumption_id, 24.0 as value")
    con.execute("create table cfg_whatif as select 'shift_window_h' as param, ?::double as value", [window_h])
    con.execute("create table cfg_deferrable as select 'namespace' as kind, 'train' as name")
    con.execute("""create table int_zone_factors as select 'z' as zone, ?::double as intensity_g_per_kwh,
                   ?::double * 0.9 as intensity_g_per_kwh_low, ?::double * 1.1 as intensity_g_per_kwh_high,
                   1.2 as pue, 1.1 as pue_low, 1.3 as pue_high""", [annual, annual, annual])
    con.execute("create table int_grid_hours (zone varchar, hour_start timestamp, intensity_g_per_kwh double)")
    insert(con, "insert into int_grid_hours values ('z', ?, ?)", [[M0 + timedelta(hours=h), g] for h, g in hourly.items()])
    con.execute("""create table int_gpu_hour_carbon (month varchar, zone varchar, namespace varchar, pod varchar, team varchar,
                   hour_start timestamp, is_idle boolean, energy_kwh double, facility_energy_kwh double, co2e_kg double,
                   co2e_kg_low double, co2e_kg_high double)""")
    for ns, hours in (("train", job), ("serve", other)):
        insert(con, "insert into int_gpu_hour_carbon values ('2026-10', 'z', ?, 'p-0', 't', ?, false, ?, ?, ?, ?, ?)",
               [[ns, M0 + timedelta(hours=h), e, e * 1.2, e * 1.2 * hourly.get(h, annual) / G_PER_KG, 0.0, 1e9]
                for h, e in hours.items()])
    return con.execute(f"select from_hour, to_hour, window_end, energy_kwh, co2e_kg_before, co2e_kg_after from "
                       f"({read_sql('20_intermediate', 'int_whatif_shift.sql')}) order by from_hour").fetchall()


def test_a_shifted_job_takes_the_cleanest_hours_of_its_window_largest_energy_first():
    hourly = {0: 500, 1: 400, 2: 300, 3: 100, 4: 200, 5: 600, 6: 50, 7: 10}      # hour 7 is past the window
    rows = shift_model({0: 1.0, 1: 2.0, 2: 3.0}, {3: 9.0}, hourly, 400.0, window_h=4)
    moved = {f.hour: t.hour for f, t, *_ in rows}
    assert moved == {2: 6, 1: 3, 0: 4}             # 3 kWh -> 50 g, 2 kWh -> 100 g, 1 kWh -> 200 g
    assert sum(r[5] for r in rows) == pytest.approx(1.2 * (3 * 50 + 2 * 100 + 1 * 200) / 1000)


def test_without_hourly_data_a_job_stays_in_its_own_hours():
    rows = shift_model({10: 1.0, 11: 2.0}, {}, {}, 400.0, window_h=12)
    assert {t.hour for _, t, *_ in rows} == {10, 11}
    assert sum(r[5] for r in rows) == pytest.approx(sum(r[4] for r in rows))


job_hours = st.dictionaries(st.integers(0, MONTH_H - 1), st.floats(0.01, 5), min_size=1, max_size=8)
intensities = st.dictionaries(st.integers(0, MONTH_H - 1), st.floats(0, 900), max_size=60)


@settings(max_examples=25, deadline=None)
@given(job=job_hours, hourly=intensities, annual=st.floats(50, 800), window_h=st.integers(1, 48))
@example(job={0: 0.125, 1: 0.125, 2: 0.125}, hourly={}, annual=50.062215289977075, window_h=1)  # CI on cf35c52
def test_shifting_never_leaves_the_window_nor_changes_the_energy_and_never_costs_more(job, hourly, annual, window_h):
    rows = shift_model(job, {h: 1.0 for h in list(hourly)[:3]}, hourly, annual, window_h)
    first, last = M0 + timedelta(hours=min(job)), M0 + timedelta(hours=max(job))
    month_end = M0 + timedelta(hours=MONTH_H - 1)
    assert sorted(r[0] for r in rows) == sorted(M0 + timedelta(hours=h) for h in job)      # every hour of the job, once
    assert len({r[1] for r in rows}) == len(rows)                                            # one hour of work per hour
    for _, to, window_end, *_ in rows:
        assert first <= to <= window_end == min(last + timedelta(hours=window_h), month_end)
    assert sum(r[3] for r in rows) == pytest.approx(sum(job.values()), rel=1e-12)           # energy unchanged
    # never dirtier; each row's before is a dsum(), decimal(38, 12): rounded to 1e-12 kg apiece
    assert sum(r[5] for r in rows) <= sum(r[4] for r in rows) * (1 + 1e-12) + 1e-12 * len(rows)


# ---- region, utilization and Spot on a small billed month ---------------------------------------

NS, NODE = {"llm": "research"}, {"ip-1": "i-node"}
CONFIG = Config(namespace_teams=NS, hosts=NODE, whatif={"util_target": 0.8, "spot_share": 0.5},
                whatif_regions=("aws:eu-north-1",))


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """One on-demand p4d.24xlarge in us-east-1 (billed 24 GPU-hours), its GPU 40 % busy."""
    hours = [GpuHour("ip-1", "GPU-a", h, 0.25, 0.4, {"llm": 120}) for h in range(24)]
    con = build(tmp_path_factory.mktemp("whatif"), [Charge("240.00", {"team": "research"}, "i-node", gpu_hours=24.0)], hours, CONFIG)
    con.execute("update charges set instance_type = 'p4d.24xlarge'")
    run_after_gpu_hours(con, CONFIG)
    return con


def lever(con, name: str) -> dict:
    cur = con.execute("select * from whatif_month where lever = ?", [name])
    rows = [dict(zip([d[0] for d in cur.description], r)) for r in cur.fetchall()]
    assert len(rows) == 1, rows
    return rows[0]


def factors(con, zone: str) -> tuple:
    return con.execute("select pue, intensity_g_per_kwh from int_zone_factors where zone = ?", [zone]).fetchone()


def test_region_lever_prices_energy_and_co2e_the_month_in_the_target_region(small):
    r = lever(small, "region")
    price = dict(small.execute("""select region, value from ref_instance_prices
                                  where instance_type = 'p4d.24xlarge' and region in ('us-east-1', 'eu-north-1')""").fetchall())
    (pue_here, g_here), (pue_there, g_there) = factors(small, "aws:us-east-1"), factors(small, "aws:eu-north-1")
    it = 24 * 0.25
    assert r["scenario"] == "aws:eu-north-1" and r["subject"] == "i-node"
    assert r["cost_usd_delta"] == pytest.approx(240 * (price["eu-north-1"] / price["us-east-1"] - 1), rel=1e-9)
    assert r["energy_kwh_delta"] == pytest.approx(it * (pue_there - pue_here), rel=1e-9)
    assert r["co2e_kg_delta"] == pytest.approx(it * (pue_there * g_there - pue_here * g_here) / 1000, rel=1e-9)


def test_utilization_lever_frees_the_hours_the_work_does_not_need_at_idle_power(small):
    r = lever(small, "utilization")
    idle_w = small.execute("select value from ref_gpu_specs where gpu_model = 'A100-SXM4-40GB' and metric = 'idle_w'").fetchone()[0]
    pue, g = factors(small, "aws:us-east-1")
    freed = 24 * (1 - 0.4 / 0.8)
    assert r["scenario"] == "utilization 80%"
    assert r["cost_usd_delta"] == pytest.approx(-freed * 240 / 24, rel=1e-9)
    assert r["energy_kwh_delta"] == pytest.approx(-freed * idle_w * pue / 1000, rel=1e-9)
    assert r["co2e_kg_delta"] == pytest.approx(-freed * idle_w * pue / 1000 * g / 1000, rel=1e-9)


def test_spot_lever_saves_the_discount_less_the_work_redone(small):
    r = lever(small, "spot")
    a = dict(small.execute("""select assumption_id, value from ref_assumptions where assumption_id in
                              ('spot_discount_gpu', 'spot_interruptions_per_month', 'spot_lost_hours_per_preemption')""").fetchall())
    rework = a["spot_interruptions_per_month"] / MONTH_H * a["spot_lost_hours_per_preemption"]
    assert r["cost_usd_delta"] == pytest.approx(240 * 0.5 * ((1 - a["spot_discount_gpu"]) * (1 + rework) - 1), rel=1e-9)
    kwh, co2e = small.execute("select facility_energy_kwh, co2e_hourly_kg from carbon_month").fetchone()
    assert r["energy_kwh_delta"] == pytest.approx(kwh * 0.5 * rework, rel=1e-9)
    assert r["co2e_kg_delta"] == pytest.approx(co2e * 0.5 * rework, rel=1e-9)
    assert r["cost_usd_delta_low"] <= r["cost_usd_delta"] <= r["cost_usd_delta_high"] < 0
    assert contract_failures(small.cursor(), "whatif_month", VALIDATED["whatif_month"]) == []


# ---- the demo, through the CLI -----------------------------------------------------------------

@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    root = tmp_path_factory.mktemp("whatif_demo")
    d, wh = root / "demo", root / "wh.duckdb"
    cli("demo", "--month", "2026-10", "--out", str(d))
    cli("ingest", *(str(d / x) for x in ("billing", "dcgm", "codecarbon", "grid", "instruments")), "--warehouse", str(wh))
    return {"wh": wh, "config": d / "meterbook.toml"}


def test_whatif_on_the_demo_prints_every_levers_deltas(demo):
    res = CliRunner().invoke(main, ["whatif", "--month", "2026-10", "--warehouse", str(demo["wh"]), "--config", str(demo["config"]),
                                    "--json"])
    assert res.exit_code == 0, res.output
    ctx = json.loads(res.stdout)
    levers = {lv["lever"]: lv["scenarios"] for lv in ctx["levers"]}
    assert set(levers) == {"region", "shift", "utilization", "spot", "scaling"} and all(levers.values())
    assert {s["scenario"] for s in levers["region"]} == {"aws:us-west-2", "aws:eu-north-1", "aws:ca-central-1"}
    shift = levers["shift"][0]
    assert shift["co2e_kg_delta"] < 0 and shift["energy_kwh_delta"] == 0    # cleaner hours, the same energy
    assert {r["subject"] for r in shift["rows"]} == {"llm-finetune/finetune-7b-0", "search-embed/embed-batch-0"}
    for lv in levers.values():
        for s in lv:
            for m in ("cost_usd_delta", "energy_kwh_delta", "co2e_kg_delta"):
                assert s[m + "_low"] - 1e-9 <= s[m] <= s[m + "_high"] + 1e-9, (s["scenario"], m)
    text = CliRunner().invoke(main, ["whatif", "--month", "2026-10", "--warehouse", str(demo["wh"]), "--config",
                                     str(demo["config"]), "--region", "aws:eu-north-1", "--util-target", "0.9"]).output
    assert "aws:eu-north-1" in text and "aws:us-west-2" not in text and "utilization 90%" in text
    for name in ("region", "shift", "utilization", "spot", "scaling"):
        assert f"\n{name} " in text


def test_scaling_lever_is_the_fitted_curve_at_k_star(demo):
    con = duckdb.connect(str(demo["wh"]), read_only=True)
    f = dict(zip(("t1", "s", "c", "k", "k_opt", "price"), con.execute(
        "select t1_h, serial_fraction, comm_fraction, k_used, k_opt, price_usd_per_gpu_h from int_scaling_fits").fetchone()))

    def cost(k: int) -> float:
        return f["price"] * k * f["t1"] * (f["s"] + (1 - f["s"]) / k + f["c"] * (k - 1))
    delta = con.execute("select cost_usd_delta from whatif_month where lever = 'scaling'").fetchone()[0]
    assert delta == pytest.approx(cost(f["k_opt"]) - cost(f["k"]), rel=1e-9)


def test_whatif_names_the_months_it_has(demo):
    res = CliRunner().invoke(main, ["whatif", "--month", "2026-03", "--warehouse", str(demo["wh"]), "--config", str(demo["config"])])
    assert res.exit_code == 1 and "months in the warehouse: 2026-10" in res.output
