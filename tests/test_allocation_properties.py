"""Invariants of the allocation over random months: for every meter and every rule, the lines of
allocation_lines sum exactly to the source total, and a line has the sign of its source (so
only credits and refunds make negative allocations). Whatever mix of sharing modes the GPUs
are in (whole, MIG, time-sliced, fractional), the teams' totals are the bill, the measured
energy and the GPU-hours observed."""
from __future__ import annotations

import tempfile
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.vocabulary import CATEGORIES, CHARGE_BY, MIG_SLICES, MIG_UNUSED, RULES, SHARING_MODES
from pipelines.config import Config
from tests.allocation_fixtures import Charge, GpuHour, build

TEAMS = ["research", "search", "vision"]
NAMESPACES = {"ns-r": "research", "ns-s": "search", "ns-x": None}   # ns-x maps to no team
RESOURCES = ["i-1", "i-2", "i-3"]
HOSTS = {"ip-1": "i-1", "ip-2": "i-2"}

cents = st.integers(min_value=0, max_value=10**7).map(lambda c: Decimal(c) / 10000)   # sub-cent too

charge = st.builds(
    lambda cost, team, res, kind, gh: Charge(
        str(-cost if kind == "credit" else cost), {"team": team} if team else {}, res,
        category={"usage": "Usage", "credit": "Credit", "fee": "Purchase", "tax": "Tax"}[kind],
        commitment_id="sp-1" if kind == "fee" else None, gpu_hours=gh if res and kind == "usage" else None,
        service="Support" if kind == "tax" else "EC2"),
    cents, st.sampled_from(TEAMS + [None]), st.sampled_from(RESOURCES + [None]),
    st.sampled_from(["usage", "usage", "credit", "fee", "tax"]), st.sampled_from([None, 1.0, 24.0]))

gpu_hour = st.builds(
    lambda host, gpu, hour, kwh, util, pods: GpuHour(host, f"GPU-{host}-{gpu}", hour, kwh, util, pods),
    st.sampled_from(list(HOSTS) + ["ip-unmapped"]), st.integers(0, 1), st.integers(0, 5),
    st.floats(0, 2, allow_nan=False), st.floats(0, 1, allow_nan=False),
    st.dictionaries(st.sampled_from(list(NAMESPACES) + [None]), st.integers(1, 120), min_size=1, max_size=3))

# a profile of the fixture's A100-SXM4-40GB, and one no table lists (split by time, not slices)
MIG_PROFILES = ["1g.5gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb", "9g.99gb"]
shared_hour = st.builds(
    lambda mode, host, gpu, hour, kwh, pods, profiles, percent, activity: GpuHour(
        host, f"GPU-{host}-{gpu}", hour, kwh, 0.5, pods, mode=mode, profiles=profiles, percent=percent, activity=activity),
    st.sampled_from(SHARING_MODES), st.sampled_from(list(HOSTS) + ["ip-unmapped"]), st.integers(0, 1), st.integers(0, 5),
    st.floats(0, 2, allow_nan=False),
    st.dictionaries(st.sampled_from(list(NAMESPACES) + [None]), st.integers(1, 120), min_size=1, max_size=3),
    st.dictionaries(st.sampled_from(list(NAMESPACES)), st.sampled_from(MIG_PROFILES), max_size=3),
    st.dictionaries(st.sampled_from(list(NAMESPACES)), st.sampled_from([0.0, 10.0, 25.0, 50.0, 100.0]), max_size=3),
    st.dictionaries(st.sampled_from(list(NAMESPACES)), st.floats(0, 1, allow_nan=False), max_size=3))

config = st.builds(
    lambda rules, w, sharing: Config(namespace_teams={k: v for k, v in NAMESPACES.items() if v}, hosts=HOSTS,
                                     allocation=dict(zip(CATEGORIES, rules)), weights=w, default_zone="aws:us-east-1",
                                     sharing=dict(zip(("charge_by", "mig_slices", "mig_unused"), sharing))),
    st.tuples(*[st.sampled_from(RULES)] * len(CATEGORIES)),
    st.dictionaries(st.sampled_from(TEAMS), st.floats(0.5, 5), min_size=1, max_size=3),
    st.tuples(st.sampled_from(CHARGE_BY), st.sampled_from(MIG_SLICES), st.sampled_from(MIG_UNUSED)))


def unique_hours(hours: list[GpuHour]) -> list[GpuHour]:
    seen, out = set(), []
    for h in hours:
        if (h.gpu, h.hour) not in seen:
            seen.add((h.gpu, h.hour))
            out.append(h)
    return out


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(charges=st.lists(charge, min_size=1, max_size=8), hours=st.lists(st.one_of(gpu_hour, shared_hour), max_size=10), cfg=config)
def test_every_meter_is_conserved_exactly_and_signs_follow_the_source(charges, hours, cfg):
    with tempfile.TemporaryDirectory() as tmp:
        con = build(Path(tmp), charges, unique_hours(hours), cfg)
        # per source group and meter: allocated = source, exactly (DECIMAL)
        bad = con.execute("""
            select s.source_group, s.meter, s.amount, coalesce(sum(l.amount), 0)
            from int_alloc_sources s left join allocation_lines l using (source_group, meter)
            group by all having s.amount <> coalesce(sum(l.amount), 0)""").fetchall()
        assert bad == []
        # and against the raw inputs: every cent of the bill, every GPU-hour of telemetry
        billed = con.execute("select sum(billed_cost) from charges").fetchone()[0]
        allocated = con.execute("select sum(amount) from allocation_lines where meter = 'billed_cost'").fetchone()[0]
        assert allocated == billed
        observed = con.execute("select coalesce(sum(coverage), 0) from int_gpu_hours").fetchone()[0]
        obs_alloc = con.execute("select coalesce(sum(amount), 0) from allocation_lines where meter = 'gpu_hours_observed'").fetchone()[0]
        assert abs(float(obs_alloc) - observed) < 1e-9
        # every measured kWh of every GPU-hour, however its GPU was shared, lands on a team
        measured = con.execute("select coalesce(sum(energy_kwh), 0) from int_gpu_hours").fetchone()[0]
        kwh_alloc = con.execute("select coalesce(sum(amount), 0) from allocation_lines where meter = 'it_energy_kwh_measured'").fetchone()[0]
        assert abs(float(kwh_alloc) - measured) < 1e-6
        # and each GPU-hour is split whole: its shares of cost and of energy each sum to 1
        unsplit_hours = con.execute("""select gpu_uuid, hour_start from int_gpu_shares group by all
                                       having abs(sum(share) - 1) > 1e-9 or abs(sum(energy_share) - 1) > 1e-9""").fetchall()
        assert unsplit_hours == []
        # team_month, summed over teams, equals the invoice
        assert con.execute("select sum(billed_cost) from team_month").fetchone()[0] == billed
        # signs: a line is never of the opposite sign of its source group (credits negative by construction)
        wrong_sign = con.execute("select count(*) from allocation_lines where amount * source_amount < 0").fetchone()[0]
        assert wrong_sign == 0
        negative_non_credit = con.execute("""select count(*) from allocation_lines l
            where l.amount < 0 and l.meter not like '%cost' """).fetchone()[0]
        assert negative_non_credit == 0
        # the drill-down (allocation_day: by day, resource, namespace, billing row) adds up to
        # every allocation line exactly, and so to team_month to the cent, Wh and gram
        unsplit = con.execute("""
            select l.source_group, l.team, l.rule, l.meter, l.amount, coalesce(sum(d.amount), 0)
            from allocation_lines l left join allocation_day d using (month, source_group, team, rule, meter)
            group by all having l.amount <> coalesce(sum(d.amount), 0)""").fetchall()
        assert unsplit == []


MIXED_MONTH = [
    Charge("100.0049", {"team": "research"}, "i-1", gpu_hours=24.0), Charge("33.33", {}, "i-3", gpu_hours=1.0),
    Charge("12.3456", {}, None, service="Support", category="Purchase"), Charge("7.77", {}, None, category="Tax"),
    Charge("50.00", {}, None, category="Purchase", commitment_id="sp-1"), Charge("-9.99", {}, "i-1", category="Credit"),
    Charge("-1.01", {}, None, service="Other", category="Credit"), Charge("20.00", {"team": "vision"}, "i-2", gpu_hours=2.0),
]
MIXED_HOURS = [GpuHour("ip-1", "GPU-1", h, 0.4, 0.5, {"ns-r": 60, "ns-s": 30, None: 30}) for h in range(3)] + \
    [GpuHour("ip-unmapped", "GPU-9", 0, 0.2, 0.1, {"ns-x": 120})]


@pytest.mark.parametrize("rule", RULES)
def test_each_rule_conserves_every_meter_on_a_mixed_month(tmp_path, rule):
    cfg = Config(namespace_teams={k: v for k, v in NAMESPACES.items() if v}, hosts=HOSTS,
                 allocation=dict.fromkeys(CATEGORIES, rule), weights={"research": 2.0, "search": 1.0})
    con = build(tmp_path, MIXED_MONTH, MIXED_HOURS, cfg)
    per_meter = con.execute("""select s.meter, sum(s.amount), (select sum(amount) from allocation_lines l where l.meter = s.meter)
                               from int_alloc_sources s group by s.meter""").fetchall()
    assert per_meter and all(src == alloc for _, src, alloc in per_meter)
    assert con.execute("select sum(amount) from allocation_lines where meter = 'billed_cost'").fetchone()[0] == \
        con.execute("select sum(billed_cost) from charges").fetchone()[0]
    used = {r for (r,) in con.execute("select distinct rule from allocation_lines").fetchall()}
    assert any(r.endswith(":" + rule) for r in used)
