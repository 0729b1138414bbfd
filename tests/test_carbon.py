"""Hourly grid carbon and market-based Scope 2 (issue 21; issue 17's market-based factors).

Hand-built months (tests/allocation_fixtures.py) with grid-hourly and instruments files
ingested by their real readers: each GPU-hour takes its zone's intensity for that hour, else the
annual factor, and is counted; instruments cover energy by zone and period within their volume,
the residual mix the rest, and what they cannot do is a finding."""
from __future__ import annotations

import csv
import dataclasses
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from core.errors import InputError
from pipelines.config import Config, SupplierFactor, load_config
from pipelines.ingest import ingest
from pipelines.stages import VALIDATED, contract_failures
from pipelines.warehouse import connect
from tests.allocation_fixtures import M0, Charge, GpuHour, build, run_after_gpu_hours
from tests.conftest import DATA, ingest_json

WEEK = DATA / "grid" / "electricity-maps_US-MIDA-PJM_week_2026-10.csv"
LIFE_CYCLE = "Carbon intensity gCO₂eq/kWh (Life cycle)"
DIRECT = "Carbon intensity gCO₂eq/kWh (direct)"
NS, NODE = {"llm": "research"}, {"ip-1": "i-node"}
CONFIG = Config(namespace_teams=NS, hosts=NODE)
# The billed node colocated ([scopes]): its electricity is the organisation's (Scope 2), which
# instruments and supplier factors can cover; a cloud instance's cannot (the last test)
OWNED = dataclasses.replace(CONFIG, ownership={("resources", "i-node"): "colocation"})
HOURS = 200        # a week of data covers the first 168


def energy(h: int) -> float:
    return 0.2 + 0.013 * (h % 7)


def gpu(hours: int, host: str = "ip-1") -> list[GpuHour]:
    return [GpuHour(host, "GPU-a", h, energy(h), 0.9, {"llm": 120}) for h in range(hours)]


def month(tmp: Path, hours: int, config: Config = CONFIG, files: tuple[Path, ...] = (), charges=None):
    """A billed node running `hours` GPU-hours from the month's start, with grid/instrument files."""
    con = build(tmp, charges if charges is not None else [Charge("100.00", {"team": "research"}, "i-node", gpu_hours=float(hours))],
                gpu(hours), config)
    if files:
        load(con, config, *files)
    return con


def load(con, config: Config, *files: Path) -> None:
    """Ingest with the real readers, then rebuild (file ids above the fixture's charges' id 1)."""
    con.execute("select nextval('file_id_seq')")      # the fixture's charges carry file id 1
    ingest(con, list(files), config=config)
    run_after_gpu_hours(con, config)


def series(path: Path, column: str) -> dict[datetime, float]:
    with open(path, newline="", encoding="utf-8") as fh:
        return {datetime.strptime(r["Datetime (UTC)"], "%Y-%m-%d %H:%M:%S"): float(r[column]) for r in csv.DictReader(fh)}


def zone_factors(con, zone: str = "aws:us-east-1") -> tuple[float, float, float]:
    return con.execute("select pue, intensity_g_per_kwh, residual_g_per_kwh from int_zone_factors where zone = ?", [zone]).fetchone()


@pytest.fixture(scope="module")
def week(tmp_path_factory):
    return month(tmp_path_factory.mktemp("week"), HOURS, files=(WEEK,))


def test_hourly_matched_co2e_is_each_hours_energy_times_its_intensity(week):
    pue, annual, _ = zone_factors(week)
    hourly = series(WEEK, LIFE_CYCLE)
    expected = sum(energy(h) * pue * hourly.get(M0 + timedelta(hours=h), annual) / 1000 for h in range(HOURS))
    got = week.execute("""select co2e_hourly_kg, co2e_kg, facility_energy_kwh, facility_energy_kwh_hourly, hours_hourly,
                                 hours_annual, series_hours from carbon_month""").fetchone()
    assert got[0] == pytest.approx(expected, rel=1e-12)                  # exact, to double precision
    assert got[1] == pytest.approx(sum(energy(h) for h in range(HOURS)) * pue * annual / 1000, rel=1e-12)   # annual as before
    assert got[3] == pytest.approx(sum(energy(h) for h in range(168)) * pue, rel=1e-12)
    assert got[4:] == (168, HOURS - 168, 168)                            # hours without data fall back, counted
    assert dict(week.execute("select intensity_tier, count(*) from int_gpu_hour_carbon group by all").fetchall()) == \
        {"hourly": 168, "annual": HOURS - 168}
    # the chargeback's team figure is the same energy allocated, to the gram
    assert week.execute("select sum(co2e_hourly_kg) from team_month").fetchone()[0] == pytest.approx(expected, abs=1e-3)
    for table in ("carbon_month", "market_basis_month", "team_month", "findings_month"):
        assert contract_failures(week.cursor(), table, VALIDATED[table]) == [], table


def test_the_direct_factors_are_used_when_configured(tmp_path):
    config = Config(namespace_teams=NS, hosts=NODE, hourly_factor_type="direct")
    con = month(tmp_path, 30, config, (WEEK,))
    pue, _, _ = zone_factors(con)
    direct = series(WEEK, DIRECT)
    expected = sum(energy(h) * pue * direct[M0 + timedelta(hours=h)] / 1000 for h in range(30))
    assert con.execute("select co2e_hourly_kg from carbon_month").fetchone()[0] == pytest.approx(expected, rel=1e-12)


def test_a_site_mapped_in_config_takes_its_grid_zones_series_and_its_countrys_residual_mix(tmp_path):
    """An on-premises site: [carbon.grid_zones] names its grid; an operator's plain series (15-minute
    rows averaged, a direct row ignored under life-cycle factors); the grid zone's prefix names its
    country, so the country's residual mix prices its market-based CO2e."""
    config = Config(namespace_teams=NS, default_zone="onprem:lab-1", grid_zones={"onprem:lab-1": "US-CAL-CISO"})
    con = month(tmp_path, 6, config, (DATA / "grid" / "operator_ciso_hourly.csv",), charges=[])
    pue, annual, residual = zone_factors(con, "onprem:lab-1")
    us, = con.execute("""select arg_max(value, year) from ref_grid_intensity
                         where basis = 'residual_mix' and zone_kind = 'country' and zone_id = 'US'""").fetchone()
    assert residual == us
    assert con.execute("select country from int_zone_factors where zone = 'onprem:lab-1'").fetchone() == ("US",)
    hourly = {0: 212.4, 1: 198.0, 2: (150.25 + 160.75) / 2, 3: 140.0}       # 04:00 is direct, 05:00 rejected
    expected = sum(energy(h) * pue * hourly.get(h, annual) / 1000 for h in range(6))
    row = con.execute("""select co2e_hourly_kg, hours_hourly, hours_annual, market_status, co2e_market_kg, facility_energy_kwh
                         from carbon_month where zone = 'onprem:lab-1'""").fetchone()
    assert row[0] == pytest.approx(expected, rel=1e-12) and row[1:3] == (4, 2)
    assert row[3] == "available" and row[4] == pytest.approx(row[5] * us / 1000, rel=1e-9)
    assert con.execute("select count(*) from findings_month where finding = 'market_factor_missing'").fetchone() == (0,)


def test_a_mapped_sites_location_factor_is_its_grids_else_its_countrys_never_the_worlds(tmp_path):
    """The GHG Protocol Scope 2 Guidance's location-based hierarchy: the zone's grid average, else
    its country's; the world's only for a zone nothing locates. A site on PJM (no PJM row in the
    reference data) takes the US average with its range, flagged as coarser than its grid; a site
    whose grid zone is a country (DE) takes that row, not flagged; an unmapped one, the world's."""
    config = Config(namespace_teams=NS, default_zone="onprem:lab-1",
                    grid_zones={"onprem:lab-1": "US-MIDA-PJM", "onprem:lab-2": "DE"},
                    whatif_regions=("onprem:lab-2", "onprem:nowhere"))
    con = month(tmp_path, 6, config, charges=[])

    def latest(kind: str, zone: str) -> tuple:
        return con.execute("""select arg_max(value, year), arg_max(low, year), arg_max(high, year), arg_max(coefficient_id, year)
                              from ref_grid_intensity where basis = 'location' and zone_kind = ? and zone_id = ?""",
                           [kind, zone]).fetchone()

    def factor(zone: str) -> tuple:
        return con.execute("""select intensity_g_per_kwh, intensity_g_per_kwh_low, intensity_g_per_kwh_high, intensity_id,
                                     intensity_fallback from int_zone_factors where zone = ?""", [zone]).fetchone()

    us, de, world = latest("country", "US"), latest("country", "DE"), latest("world", "WORLD")
    assert factor("onprem:lab-1") == (*us, True) and us[3] == "grid_intensity:country:US:2023:location"
    assert factor("onprem:lab-2") == (*de, False)
    assert factor("onprem:nowhere") == (*world, True)
    # the site's CO2e is its energy at that factor, and the factor is named among its assumptions
    pue = zone_factors(con, "onprem:lab-1")[0]
    co2e, kwh = con.execute("select co2e_kg, facility_energy_kwh from carbon_month where zone = 'onprem:lab-1'").fetchone()
    assert co2e == pytest.approx(kwh * us[0] / 1000, rel=1e-9) and kwh == pytest.approx(sum(energy(h) for h in range(6)) * pue)


def test_a_mapped_site_in_a_country_without_a_residual_mix_says_so(tmp_path):
    """Japan has no residual mix in the reference data: the market-based CO2e is not available and
    the reason names the country found, not a missing mapping."""
    config = Config(namespace_teams=NS, default_zone="onprem:lab-1", grid_zones={"onprem:lab-1": "JP-TK"})
    con = month(tmp_path, 6, config, charges=[])
    assert zone_factors(con, "onprem:lab-1")[2] is None
    status, reason, market = con.execute("""select market_status, market_reason, co2e_market_kg
                                            from carbon_month where zone = 'onprem:lab-1'""").fetchone()
    assert status == "not available" and market is None
    assert "no residual mix for onprem:lab-1 (country JP)" in reason and "not known" not in reason
    kwh, na = con.execute("select sum(facility_energy_kwh), sum(facility_energy_kwh_market_na) from team_month").fetchone()
    assert na == pytest.approx(kwh, abs=1e-3) and na > 0
    assert con.execute("select subject from findings_month where finding = 'market_factor_missing'").fetchall() == [("onprem:lab-1",)]


def instruments_file(path: Path, rows: list[tuple]) -> Path:
    """instrument_id, type, zone, period_start, period_end, mwh, g_per_kwh, source"""
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["instrument_id", "type", "zone", "period_start", "period_end", "mwh", "g_per_kwh", "source", "year"])
        w.writerows([(*r, 2026) for r in rows])
    return path


def test_an_instrument_for_half_the_energy_halves_the_zones_figure_down_to_the_residual_mix(tmp_path):
    con = month(tmp_path, 48, OWNED)
    kwh, market = con.execute("select facility_energy_kwh, co2e_market_kg from carbon_month").fetchone()
    _, _, residual = zone_factors(con)
    assert market == pytest.approx(kwh * residual / 1000, rel=1e-12)      # nothing declared: the residual mix
    half = kwh / 2 / 1000     # MWh
    load(con, OWNED, instruments_file(tmp_path / "i.csv", [("REC-1", "rec", "US-MIDA-PJM", "2026-10-01", "2026-10-31", half, 0, "PJM-GATS 1")]))
    got = con.execute("select co2e_market_kg, instrument_kwh, residual_kwh, market_status from carbon_month").fetchone()
    assert got[0] == pytest.approx(market / 2, rel=1e-9)
    assert got[1] == pytest.approx(kwh / 2, rel=1e-9) and got[2] == pytest.approx(kwh / 2, rel=1e-9) and got[3] == "available"
    basis = con.execute("select claim_kind, source, year from market_basis_month order by claim_kind").fetchall()
    assert basis[0][0] == "instrument" and basis[0][1] == "PJM-GATS 1" and basis[0][2] == 2026
    assert basis[1][0] == "residual_mix" and "Green-e" in basis[1][1] and basis[1][2] == 2018
    assert con.execute("select count(*) from findings_month where finding like 'instrument%'").fetchone()[0] == 0


def test_over_claimed_unmatched_and_twice_declared_instruments_are_findings(tmp_path):
    con = month(tmp_path, 24, OWNED)
    kwh = con.execute("select facility_energy_kwh from carbon_month").fetchone()[0]
    # a year of certificates: October holds 31/365 of them, three times the month's energy
    year_mwh = 3 * kwh / 1000 * 365 / 31
    load(con, OWNED, instruments_file(tmp_path / "a.csv", [
        ("GO-1", "rec", "US", "2026-01-01", "2026-12-31", year_mwh, 0, "M-RETS batch 7"),      # the US market covers us-east-1
        ("PPA-FR", "ppa", "FR", "2026-10-01", "2026-10-31", 1.0, 12, "EDF PPA 2026")]),
        instruments_file(tmp_path / "b.csv", [("GO-1", "rec", "US", "2026-01-01", "2026-12-31", 1.0, 0, "M-RETS batch 7")]))
    assert con.execute("select co2e_market_kg from carbon_month").fetchone()[0] == pytest.approx(0, abs=1e-9)
    found = {f: (s, v) for f, s, v in con.execute("select finding, subject, value from findings_month").fetchall()}
    assert found["instrument_overclaimed"][0] == "GO-1" and found["instrument_overclaimed"][1] == pytest.approx(2 * kwh, rel=1e-9)
    assert found["instrument_unmatched"] == ("PPA-FR", pytest.approx(1000.0))
    assert found["instrument_duplicate"][0].startswith("GO-1 (declared again")


def test_an_annual_instrument_gives_a_month_the_same_claim_whatever_else_is_loaded(tmp_path):
    """Its volume is spread over its period: September's consumption takes nothing of October's share."""
    rec = [("REC-Y", "rec", "aws:us-east-1", "2026-01-01", "2026-12-31", 0.05, 0, "registry 1")]
    config = dataclasses.replace(OWNED, default_zone="aws:us-east-1")     # September's hours are billed nowhere
    october = month(tmp_path / "oct", 48, config, (instruments_file(tmp_path / "i.csv", rec),))
    both = build(tmp_path / "both", [Charge("100.00", {"team": "research"}, "i-node", gpu_hours=48.0)],
                 gpu(48) + [GpuHour("ip-1", "GPU-a", -h, 1.0, 0.9, {"llm": 120}) for h in range(1, 49)], config)
    load(both, config, tmp_path / "i.csv")
    sql = "select * from market_basis_month where month = '2026-10' order by claim"
    assert both.execute(sql).fetchall() == october.execute(sql).fetchall()
    assert both.execute("select count(distinct month) from carbon_month").fetchone()[0] == 2


def test_a_declared_supplier_factor_keeps_its_source_and_a_bare_one_says_it_has_none(tmp_path):
    (tmp_path / "m.toml").write_text('[[carbon.supplier_factors]]\nzone = "US-MIDA-PJM"\ng_per_kwh = 250\n'
                                     'source = "Utility fuel mix 2025"\nyear = 2025\n'
                                     '[carbon.market_intensity_g_per_kwh]\n"aws:us-east-1" = 100\n', encoding="utf-8")
    config = load_config(tmp_path / "m.toml")
    con = month(tmp_path, 12, dataclasses.replace(OWNED, supplier_factors=config.supplier_factors,
                                                 market_intensity=config.market_intensity))
    kwh, market = con.execute("select facility_energy_kwh, co2e_market_kg from carbon_month").fetchone()
    assert market == pytest.approx(kwh * 250 / 1000, rel=1e-12)          # declared first, it covers all
    rows = con.execute("select claim, source, year, applied_kwh from market_basis_month order by claim").fetchall()
    assert rows[0][1:3] == ("Utility fuel mix 2025", 2025) and rows[0][3] == pytest.approx(kwh, rel=1e-12)
    assert rows[1][0] == "config:aws:us-east-1" and "no source or year declared" in rows[1][1] and rows[1][2] is None


@pytest.mark.parametrize("toml, message", [
    ('[[carbon.supplier_factors]]\nzone = "aws:us-east-1"\ng_per_kwh = 250\nsource = "x"\n', "lacks year"),
    ('[carbon]\nhourly_factor_type = "marginal"\n', "expected one of lifecycle, direct"),
    ("[whatif]\nutil_target = 80\n", "expected a fraction, at most 1"),
    ('[whatif]\nregion = ["aws:us-west-2"]\n', "Did you mean regions?"),
])
def test_carbon_and_whatif_config_is_checked(tmp_path, toml, message):
    (tmp_path / "m.toml").write_text(toml, encoding="utf-8")
    with pytest.raises(InputError, match=message):
        load_config(tmp_path / "m.toml")


def test_both_electricity_maps_layouts_and_bad_rows_are_read_and_located(tmp_path):
    wh = tmp_path / "wh.duckdb"
    files = ingest_json(wh, DATA / "grid" / "electricity-maps_2023-layout.csv", DATA / "grid" / "electricity-maps_bad_rows.csv",
                        DATA / "grid" / "operator_ciso_hourly.csv", DATA / "instruments" / "instruments_bad_rows.csv")["files"]
    assert [(f["kind"], f["format_version"], f["rows_loaded"], f["rows_rejected"]) for f in files] == [
        ("grid-hourly", "electricity-maps", 3, 0), ("grid-hourly", "electricity-maps", 1, 5),
        ("grid-hourly", "plain", 6, 1), ("instruments", "instruments-csv", 2, 5)]
    con = connect(wh, read_only=True)
    assert con.execute("select count(*), count(distinct row_number) from grid_hours where file_id = 1").fetchone() == (6, 3)
    rejects = {(r, c, k) for r, c, k in con.execute("select row_number, column_name, check_name from rejects").fetchall()}
    assert {(2, "Datetime (UTC)", "parses_as_timestamp"), (3, "zone", "not_nullable"),
            (4, "intensity_g_per_kwh", "greater_than_or_equal_to(0)"), (5, "Carbon intensity", "not_nullable"),
            (6, "carbon_free_pct", "in_range(0, 100, True, True)"), (7, "basis", "is_known_basis"),
            (3, "instrument_id", "not_nullable"), (4, "type", "is_known_type"), (5, "period_end", "after_period_start"),
            (6, "mwh", "not_nullable"), (7, "source", "not_nullable")} <= rejects
    assert con.execute("select volume_mwh, period_end from instruments where instrument_id = 'SUP-1'").fetchone() == \
        (None, datetime(2027, 1, 1))          # an inclusive end date covers its whole day


def test_a_rec_covers_owned_energy_only_and_cloud_energy_on_the_same_grid_takes_the_residual_mix(tmp_path):
    """GHG Protocol Scope 2 Guidance (ch. 7, Quality Criteria): the organisation's instruments are
    claimed for electricity it buys. A cloud instance's (aws:us-east-1, billed) is the provider's,
    though on the same grid as an owned site (onprem:lab-1, unbilled GPUs, mapped to US-MIDA-PJM):
    a REC for the grid covers the owned site's energy and none of the cloud's."""
    config = Config(namespace_teams=NS, hosts=NODE, default_zone="onprem:lab-1", grid_zones={"onprem:lab-1": "US-MIDA-PJM"})
    con = build(tmp_path, [Charge("100.00", {"team": "research"}, "i-node", gpu_hours=24.0)],
                gpu(24) + gpu(24, host="ip-2"), config)
    kwh = dict(con.execute("select zone, facility_energy_kwh from carbon_month").fetchall())
    assert set(kwh) == {"aws:us-east-1", "onprem:lab-1"}
    # one REC for the grid, as much as both zones drew: enough for the owned site, the rest not claimed
    rec = (kwh["aws:us-east-1"] + kwh["onprem:lab-1"]) / 1000
    load(con, config, instruments_file(tmp_path / "i.csv", [("REC-G", "rec", "US-MIDA-PJM", "2026-10-01", "2026-10-31", rec, 0, "PJM-GATS 9")]))
    got = {z: (i, r, m) for z, i, r, m in con.execute("select zone, instrument_kwh, residual_kwh, co2e_market_kg from carbon_month").fetchall()}
    _, _, residual = zone_factors(con)
    assert got["onprem:lab-1"][0] == pytest.approx(kwh["onprem:lab-1"], rel=1e-9) and got["onprem:lab-1"][2] == pytest.approx(0, abs=1e-9)
    assert got["aws:us-east-1"][0] == 0 and got["aws:us-east-1"][1] == pytest.approx(kwh["aws:us-east-1"], rel=1e-9)
    assert got["aws:us-east-1"][2] == pytest.approx(kwh["aws:us-east-1"] * residual / 1000, rel=1e-9)
    # the scopes say the same: Scope 2 market-based is the owned site's, at the REC's 0 g/kWh
    scopes = dict(con.execute("select ownership, sum(co2e_market_kg) from team_energy_lines group by all").fetchall())
    assert scopes["on-premises"] == pytest.approx(0, abs=1e-9) and scopes["cloud"] == pytest.approx(got["aws:us-east-1"][2], rel=1e-9)
    (over,) = con.execute("select value from findings_month where finding = 'instrument_overclaimed'").fetchone()
    assert over == pytest.approx(kwh["aws:us-east-1"], rel=1e-9)      # the REC's volume left over: not claimed
    for table in ("carbon_month", "market_basis_month", "findings_month"):
        assert contract_failures(con.cursor(), table, VALIDATED[table]) == [], table


def test_a_zone_with_colocated_and_cloud_energy_claims_instruments_for_the_colocated_part(tmp_path):
    """One zone, two billed nodes, one of them colocated ([scopes]): the zone's Scope 2 and cloud
    energy are matched apart, and carbon_month's zone figure is their sum."""
    config = Config(namespace_teams=NS, hosts={"ip-1": "i-node", "ip-2": "i-colo"}, ownership={("resources", "i-colo"): "colocation"})
    con = build(tmp_path, [Charge("100.00", {"team": "research"}, "i-node", gpu_hours=24.0),
                           Charge("100.00", {"team": "research"}, "i-colo", gpu_hours=24.0)], gpu(24) + gpu(24, host="ip-2"), config)
    load(con, config, instruments_file(tmp_path / "i.csv", [("REC-Z", "rec", "aws:us-east-1", "2026-10-01", "2026-10-31", 1.0, 0, "registry 2")]))
    kwh, market, instrument, residual_kwh = con.execute(
        "select facility_energy_kwh, co2e_market_kg, instrument_kwh, residual_kwh from carbon_month").fetchone()
    scope = {s: (k, a) for s, k, a in con.execute("""select electricity_scope, claim_kind, applied_kwh from market_basis_month
                                                     where zone = 'aws:us-east-1'""").fetchall() if k == "instrument"}
    _, _, residual = zone_factors(con)
    assert list(scope) == ["Scope 2"] and instrument == pytest.approx(scope["Scope 2"][1], rel=1e-12)
    assert instrument == pytest.approx(kwh / 2, rel=1e-9) and residual_kwh == pytest.approx(kwh / 2, rel=1e-9)
    assert market == pytest.approx(kwh / 2 * residual / 1000, rel=1e-9)
    for table in ("carbon_month", "market_basis_month"):
        assert contract_failures(con.cursor(), table, VALIDATED[table]) == [], table


CLOUD_SUPPLIER = SupplierFactor("aws:us-east-1", 250.0, "Utility fuel mix 2025", 2025)


def test_a_supplier_factor_naming_only_cloud_energy_is_a_finding_that_says_why(tmp_path):
    """A supplier factor for a cloud zone covered that zone's energy until instruments and
    supplier factors were kept to owned and colocation energy; since then it applies to nothing
    and the market-based figure moved to the residual mix with no word: an upgrading user filed
    a changed Scope 2 market-based figure without knowing why. The finding names the factor and
    the cloud energy it cannot cover."""
    con = month(tmp_path, 12, dataclasses.replace(CONFIG, supplier_factors=(CLOUD_SUPPLIER,)))
    kwh, market = con.execute("select facility_energy_kwh, co2e_market_kg from carbon_month").fetchone()
    _, _, residual = zone_factors(con)
    assert market == pytest.approx(kwh * residual / 1000, rel=1e-9)     # the factor covers none of it
    (subject, value, detail), = con.execute("""select subject, value, detail from findings_month
                                               where finding = 'supplier_factor_unmatched'""").fetchall()
    assert subject == "config:aws:us-east-1" and value == pytest.approx(kwh, rel=1e-9)
    assert f"supplier factor for aws:us-east-1 (250.0 g/kWh, Utility fuel mix 2025) applies to no energy this month: " \
           f"the {kwh:.1f} kWh in aws:us-east-1 are cloud GPUs' electricity" in detail
    # colocated, the same factor covers the node's energy: no finding
    owned = month(tmp_path / "owned", 12, dataclasses.replace(OWNED, supplier_factors=(CLOUD_SUPPLIER,)))
    assert owned.execute("select count(*) from findings_month where finding = 'supplier_factor_unmatched'").fetchone() == (0,)
    assert owned.execute("select co2e_market_kg from carbon_month").fetchone()[0] == pytest.approx(kwh * 250 / 1000, rel=1e-9)


def test_config_check_names_a_supplier_factor_that_applies_to_no_energy(tmp_path):
    """`meterbook config check` against a built warehouse: the factor for a cloud-only zone is a
    config entry that matches nothing, with the energy it cannot cover and why."""
    from pipelines.config_check import against_warehouse
    config = dataclasses.replace(CONFIG, supplier_factors=(CLOUD_SUPPLIER, SupplierFactor("US", 300.0, "Other utility", 2025)))
    con = month(tmp_path, 12, config)
    kwh = con.execute("select facility_energy_kwh from carbon_month").fetchone()[0]
    lines = against_warehouse(con, config)
    # (the fixture's host has no telemetry parts: [hosts] ip-1 is listed too)
    at = lines.index("Config entries that match nothing in the warehouse: 3")
    assert [ln for ln in lines[at + 1:] if "supplier_factors" in ln] == [
        f"  [[carbon.supplier_factors]] US: applies to no energy in the last build (2026-10): the {kwh:,.1f} kWh in aws:us-east-1 are cloud "
        "GPUs' electricity, the provider's to claim (supplier factors cover owned and colocation GPUs only), so they take "
        "the residual mix",
        f"  [[carbon.supplier_factors]] aws:us-east-1: applies to no energy in the last build (2026-10): the {kwh:,.1f} kWh in aws:us-east-1 "
        "are cloud GPUs' electricity, the provider's to claim (supplier factors cover owned and colocation GPUs only), so "
        "they take the residual mix"]
    owned = dataclasses.replace(OWNED, supplier_factors=config.supplier_factors)   # the node colocated: both cover it
    assert not [ln for ln in against_warehouse(month(tmp_path / "owned", 12, owned), owned) if "supplier_factors" in ln]
