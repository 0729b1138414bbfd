"""Invariants of job_month over random months (issue 22): no GPU-hour is claimed twice, a job's
work is neither lost nor doubled by its split over teams and months, jobs never receive more of
a team's energy or cost than the team has, and jobs that claim all of a team's GPU time receive
exactly its team_month."""
from __future__ import annotations

import tempfile
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipelines.config import Config
from tests.allocation_fixtures import M0, Charge, GpuHour
from tests.test_allocation_properties import unique_hours
from tests.test_jobs import build, with_work

NAMESPACES = {"ns-r": "research", "ns-s": "search", "ns-x": None}   # ns-x maps to no team
HOSTS = {"ip-1": "i-1", "ip-2": "i-2"}
CFG = Config(namespace_teams={k: v for k, v in NAMESPACES.items() if v}, hosts=HOSTS, default_zone="aws:us-east-1")

cents = st.integers(min_value=0, max_value=10**6).map(lambda c: Decimal(c) / 100)
# GPU-hours are billed on i-1 only, which always has telemetry: every billed GPU-hour is then
# observed or idle on a GPU a job can claim (billed hours with no telemetry go to the owner by
# the allocation's rules, which a job's claim cannot mirror for untagged nodes).
charge = st.builds(
    lambda cost, team, res, kind: Charge(
        str(-cost if kind == "credit" else cost), {"team": team} if team else {}, res,
        category={"usage": "Usage", "credit": "Credit", "tax": "Tax"}[kind],
        gpu_hours=24.0 if res == "i-1" and kind == "usage" else None, service="Support" if kind == "tax" else "EC2"),
    cents, st.sampled_from(["research", "search", None]), st.sampled_from(["i-1", "i-2", None]),
    st.sampled_from(["usage", "usage", "credit", "tax"]))
gpu_hour = st.builds(
    lambda host, gpu, hour, kwh, pods: GpuHour(host, f"GPU-{host}-{gpu}", hour, kwh, 0.5, pods),
    st.sampled_from(list(HOSTS)), st.integers(0, 1), st.integers(0, 5), st.floats(0, 2, allow_nan=False),
    st.dictionaries(st.sampled_from(list(NAMESPACES) + [None]), st.integers(1, 120), min_size=1, max_size=3))
extra_job = st.tuples(st.sampled_from(list(NAMESPACES) + list(HOSTS)), st.integers(0, 5), st.integers(1, 6),
                      st.sampled_from(["", "*-0", "nothing-*"]))


def iso(hour: int) -> str:
    return (M0 + timedelta(hours=hour)).strftime("%Y-%m-%dT%H:%M:%SZ")


def work_rows(extra: list[tuple]) -> list[str]:
    """A job per host over every hour (they claim all GPU time, busy or idle), and overlapping extras."""
    rows = [f"all-{h},training,,,{h},,,{iso(0)},{iso(6)},1e9,,1e9,,bf16," for h in HOSTS]
    for i, (where, start, length, pod) in enumerate(extra):
        place = f"{where},{pod},,,," if where in NAMESPACES else f",,{where},,,"
        rows.append(f"x{i},serving,{place}{iso(start)},{iso(start + length)},1e9,,1e8,1e4,fp16,")
    return rows


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(charges=st.lists(charge, min_size=1, max_size=6), hours=st.lists(gpu_hour, max_size=10),
       extra=st.lists(extra_job, max_size=3))
def test_jobs_split_without_double_counting_and_add_up_to_their_teams(charges, hours, extra):
    hours = unique_hours([GpuHour("ip-1", "GPU-ip-1-0", 0, 0.3, 0.5, {"ns-r": 60, None: 60})] + hours)
    with tempfile.TemporaryDirectory() as tmp:
        con = build(Path(tmp), charges, hours, CFG)
        with_work(Path(tmp), con, work_rows(extra), CFG)
        twice = con.execute("""
            select c.gpu_uuid, c.hour_start
            from (select gpu_uuid, hour_start, sum(gpu_hours) as claimed from int_job_claims
                  where basis = 'telemetry' group by all) c
            join (select gpu_uuid, hour_start, sum(gpu_hours_observed) as h from int_gpu_workloads group by all) w
                using (gpu_uuid, hour_start)
            where c.claimed > w.h + 1e-9""").fetchall()
        assert twice == []
        lost = con.execute("""
            select w.job_id from (select job_id, sum(tokens) as t from work_log group by all) w
            left join (select job_id, sum(tokens) as t from job_month group by all) j using (job_id)
            where abs(coalesce(j.t, 0) - w.t) > 1e-6 * w.t""").fetchall()
        assert lost == []
        by_team = con.execute("""
            select j.team, j.h, j.kwh, j.co2e, j.cost, t.kwh, t.co2e, t.cost
            from (select team, sum(gpu_hours) as h, sum(facility_energy_kwh) as kwh, sum(co2e_kg) as co2e,
                         sum(effective_cost) as cost from job_month group by all) j
            join (select team, sum(facility_energy_kwh) as kwh, sum(co2e_kg) as co2e, sum(effective_cost)::double as cost
                  from team_month group by all) t using (team)
            where j.h > 0""").fetchall()
        for team, _, kwh, co2e, cost, t_kwh, t_co2e, t_cost in by_team:
            # the all-host jobs claim every GPU-hour: each team with job hours is covered whole
            assert abs(kwh - t_kwh) <= 1e-6 * max(1, t_kwh), team
            assert abs(co2e - t_co2e) <= 1e-6 * max(1, t_co2e), team
            assert abs(cost - t_cost) <= 1e-6 * max(1, abs(t_cost)), team
