"""Given/expect tests for the allocation engine: a hand-written month per rule, literal results."""
from __future__ import annotations

from decimal import Decimal as D

import pytest

from pipelines.config import Config, TeamRule
from tests.allocation_fixtures import Charge, GpuHour, build, lines, team_amounts

NS = {"llm": "research", "embed": "search"}
NODE = {"ip-1": "i-node"}


def node_hours(pattern: list[str | None]) -> list[GpuHour]:
    """One GPU, one hour per entry: namespace or None (idle), 1 kWh busy, 0.1 kWh idle."""
    return [GpuHour("ip-1", "GPU-a", h, 1.0 if ns else 0.1, 0.9 if ns else 0.0, {ns: 120})
            for h, ns in enumerate(pattern)]


def test_shared_node_is_split_70_30_by_telemetry(tmp_path):
    con = build(tmp_path, [Charge("100.00", {"team": "platform"}, "i-node", gpu_hours=10.0)],
                node_hours(["llm"] * 7 + ["embed"] * 3), Config(namespace_teams=NS, hosts=NODE))
    assert lines(con) == {("research", "telemetry_split", D("70.00")), ("search", "telemetry_split", D("30.00"))}
    assert team_amounts(con, "gpu_hours") == {"research": D("7.000"), "search": D("3.000")}
    assert team_amounts(con, "it_energy_kwh") == {"research": D("7.000"), "search": D("3.000")}


def test_idle_is_shared_proportionally_over_the_node_users(tmp_path):
    con = build(tmp_path, [Charge("100.00", {"team": "platform"}, "i-node", gpu_hours=10.0)],
                node_hours(["llm"] * 6 + ["embed"] * 2 + [None] * 2), Config(namespace_teams=NS, hosts=NODE))
    assert lines(con) == {("research", "telemetry_split", D("60.00")), ("search", "telemetry_split", D("20.00")),
                          ("research", "idle:proportional", D("15.00")), ("search", "idle:proportional", D("5.00"))}
    # idle energy (2 x 0.1 kWh) follows the same rule
    assert lines(con, "it_energy_kwh") >= {("research", "idle:proportional", D("0.150")),
                                           ("search", "idle:proportional", D("0.050"))}


def test_idle_left_unallocated_when_configured(tmp_path):
    cfg = Config(namespace_teams=NS, hosts=NODE, allocation={"idle": "unallocated"})
    con = build(tmp_path, [Charge("100.00", {"team": "platform"}, "i-node", gpu_hours=10.0)],
                node_hours(["llm"] * 8 + [None] * 2), cfg)
    assert lines(con) == {("research", "telemetry_split", D("80.00")), ("unallocated", "idle:unallocated", D("20.00"))}


def test_untagged_line_is_left_unallocated(tmp_path):
    con = build(tmp_path, [Charge("40.00", {"team": "research"}, "i-a"), Charge("12.34", {}, "i-untagged")], [], Config())
    assert lines(con) == {("research", "direct", D("40.00")), ("unallocated", "untagged:unallocated", D("12.34"))}


def test_credit_follows_its_charge(tmp_path):
    con = build(tmp_path, [Charge("100.00", {"team": "research"}, "i-a"), Charge("300.00", {"team": "search"}, "i-b"),
                           Charge("-40.00", {}, "i-a", category="Credit", line_item_type="Credit")], [], Config())
    assert lines(con) == {("research", "direct", D("100.00")), ("search", "direct", D("300.00")),
                          ("research", "credits:follows", D("-40.00"))}


def test_credit_on_a_service_follows_that_services_charges(tmp_path):
    con = build(tmp_path, [Charge("100.00", {"team": "research"}, "i-a"), Charge("300.00", {"team": "search"}, "i-b"),
                           Charge("-40.00", {}, None, category="Credit")], [], Config())
    assert lines(con) >= {("research", "credits:follows", D("-10.00")), ("search", "credits:follows", D("-30.00"))}


def test_shared_services_proportional_and_even_round_to_the_cent_and_conserve(tmp_path):
    charges = [Charge("100.00", {"team": "a"}, "i-a"), Charge("100.00", {"team": "b"}, "i-b"),
               Charge("100.00", {"team": "c"}, "i-c"), Charge("100.00", {}, None, service="AWS Support", category="Purchase")]
    con = build(tmp_path, charges, [], Config())
    shared = sorted(a for t, r, a in lines(con) if r == "shared_services:proportional")
    assert shared == [D("33.33"), D("33.33"), D("33.34")] and sum(shared) == D("100.00")


def test_weights_rule(tmp_path):
    cfg = Config(allocation={"shared_services": "weights"}, weights={"a": 3.0, "b": 1.0})
    con = build(tmp_path, [Charge("10.00", {}, None, service="AWS Support", category="Purchase")], [], cfg)
    assert lines(con) == {("a", "shared_services:weights", D("7.50")), ("b", "shared_services:weights", D("2.50"))}


def test_sub_cent_residue_stays_on_the_largest_line(tmp_path):
    con = build(tmp_path, [Charge("10.00", {"team": "a"}, "i-a"), Charge("30.00", {"team": "b"}, "i-b"),
                           Charge("1.0001", {}, None, service="Tax", category="Tax")], [], Config())
    got = {t: a for t, r, a in lines(con) if r.startswith("shared")}
    assert got == {"a": D("0.25"), "b": D("0.7501")}


@pytest.mark.parametrize("charge, team", [
    (Charge("1", {"project": "imagenet-v2"}, "i-x"), "vision"),                         # rule on a tag
    (Charge("1", {}, "i-x", service="Amazon SageMaker"), "ml-platform"),               # rule on the service
    (Charge("1", {}, "i-x", account="999900001111"), "finance"),                       # account mapping
    (Charge("1", {"team": "search", "project": "imagenet"}, "i-x"), "search"),         # tag keys win
])
def test_team_resolution_order(tmp_path, charge, team):
    cfg = Config(tag_keys=("team",), account_teams={"999900001111": "finance"},
                 team_rules=(TeamRule("tag", "project", "^imagenet", "vision"), TeamRule("service", None, "SageMaker", "ml-platform")))
    con = build(tmp_path, [charge], [], cfg)
    assert team_amounts(con) == {team: D("1.00")}


def test_namespace_rule_resolves_a_team(tmp_path):
    cfg = Config(hosts=NODE, team_rules=(TeamRule("namespace", None, "^llm", "research"),))
    con = build(tmp_path, [Charge("10.00", {"team": "platform"}, "i-node", gpu_hours=2.0)], node_hours(["llm-a", "llm-b"]), cfg)
    assert lines(con) == {("research", "telemetry_split", D("10.00"))}


def test_team_month_keeps_report_columns_and_sums_to_source(tmp_path):
    con = build(tmp_path, [Charge("100.00", {"team": "platform"}, "i-node", gpu_hours=10.0),
                           Charge("5.00", {}, "i-u")], node_hours(["llm"] * 6 + ["embed"] * 2 + [None] * 2),
                Config(namespace_teams=NS, hosts=NODE))
    cols = {r[0] for r in con.execute("describe team_month").fetchall()}
    for c in ("month", "team", "currency", "billed_cost", "effective_cost", "list_cost", "gpu_hours", "gpu_hours_observed",
              "idle_gpu_hours", "util_mean", "it_energy_kwh", "facility_energy_kwh", "co2e_kg", "assumption_ids",
              "billed_cost_direct", "billed_cost_idle", "idle_cost", "effective_gpu_hours", "cost_per_effective_gpu_hour",
              "co2e_market_kg", "billed_cost_change"):
        assert c in cols
    total, idle, parts = con.execute("""select sum(billed_cost), sum(idle_gpu_hours),
        sum(billed_cost_direct + billed_cost_idle + billed_cost_shared + billed_cost_credits - billed_cost) from team_month""").fetchone()
    assert total == D("105.00") and idle == D("2.000") and parts == 0


@pytest.mark.parametrize("toml, message", [
    ('[allocation]\nidle = "fair"\n', r"\[allocation\] idle = \"fair\": expected one of proportional, even, weights, unallocated \(line 2\)"),
    ('[allocation]\nidle = "weights"\n', "has no weights"),
    ('[[teams.rules]]\nfield = "colour"\npattern = "x"\nteam = "a"\n', "is incomplete"),
    ('[[teams.rules]]\nfield = "service"\npattern = "(unclosed"\nteam = "a"\n', "not a regular expression"),
])
def test_bad_allocation_config_is_one_located_error(tmp_path, toml, message):
    from core.errors import InputError
    from pipelines.config import load_config
    p = tmp_path / "meterbook.toml"
    p.write_text(toml)
    with pytest.raises(InputError, match=message):
        load_config(p)


def test_config_reads_accounts_rules_allocation_market_and_findings(tmp_path):
    from pipelines.config import example_text, load_config
    p = tmp_path / "meterbook.toml"
    p.write_text(example_text())
    c = load_config(p)
    assert c.account_teams and c.team_rules[0] == TeamRule("tag", "project", "^imagenet", "vision")
    assert c.allocation["untagged"] == "unallocated" and c.weights and c.supplier_factors and c.findings and c.whatif


def test_market_based_co2e_where_a_factor_is_configured(tmp_path):
    """A configured factor covers the organisation's own electricity: the node colocated
    ([scopes]) takes it; the same node rented from the cloud, or no factor at all, takes the
    zone's residual mix (a provider's electricity is not the organisation's to claim)."""
    residual_sql = "select value from ref_grid_intensity where zone_id = 'aws:us-east-1' and basis = 'residual_mix'"
    charge = [Charge("10.00", {"team": "platform"}, "i-node", gpu_hours=2.0)]
    colocated = {("resources", "i-node"): "colocation"}
    for name, cfg, per_kwh in [
        ("colo", Config(namespace_teams=NS, hosts=NODE, market_intensity={"aws:us-east-1": 100.0}, ownership=colocated), 100.0),
        ("cloud", Config(namespace_teams=NS, hosts=NODE, market_intensity={"aws:us-east-1": 100.0}), None),
        ("none", Config(namespace_teams=NS, hosts=NODE), None),
    ]:
        con = build(tmp_path / name, charge, node_hours(["llm"] * 2), cfg)
        kwh, market = con.execute("select facility_energy_kwh, co2e_market_kg from team_month where team = 'research'").fetchone()
        g = per_kwh if per_kwh is not None else con.execute(residual_sql).fetchone()[0]
        assert market == pytest.approx(round(kwh * g / 1000, 3), abs=1e-3), name    # to the gram


def test_a_team_billed_in_two_currencies_counts_its_energy_once(tmp_path):
    """team_month has a row per currency; energy has none, so it sits on one of them only."""
    con = build(tmp_path, [Charge("100.00", {"team": "research"}, "i-node", gpu_hours=10.0),
                           Charge("50.00", {"team": "research"}, "i-other", currency="EUR")],
                node_hours(["llm"] * 10), Config(namespace_teams=NS, hosts=NODE))
    rows = con.execute("""select currency, billed_cost, it_energy_kwh, gpu_hours_observed from team_month
                          where team = 'research' order by currency""").fetchall()
    assert [(c, b) for c, b, *_ in rows] == [("EUR", D("50.00")), ("USD", D("100.00"))]
    assert sum(r[2] for r in rows) == pytest.approx(10.0) and sum(r[3] for r in rows) == pytest.approx(10.0)
