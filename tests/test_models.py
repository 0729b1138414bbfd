"""The build order is derived from the models' own reads: every model after what it reads, a cycle
or a read of nothing fails before anything is written."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipelines.models import Model, ModelGraphError, build_order, sql_reads, unprovided_reads
from pipelines.stages import MARTS, stages


def test_every_model_builds_after_what_it_reads():
    order = stages()
    position = {m.name: i for i, m in enumerate(order)}
    for m in order:
        assert all(position[r] < position[m.name] for r in m.reads if r in position), m.name
    # the registry of marts and the graph agree: a mart file is a model
    assert set(MARTS) - {"contract_findings"} <= set(position)
    assert position["int_gpu_hours"] < position["int_gpu_workloads"] < position["allocation_lines"] < position["team_month"]
    assert position["int_scaling_fits"] < position["findings_month"]


def test_ctes_shadow_tables_and_are_not_reads():
    sql = "with charges as (select * from raw_lines) select * from charges join ref_pue using (zone)"
    assert sql_reads(sql) == {"raw_lines", "ref_pue"}


def test_a_cycle_is_named():
    models = [Model("a", "30_marts", frozenset({"b"})), Model("b", "30_marts", frozenset({"c"})),
              Model("c", "30_marts", frozenset({"a"})), Model("d", "30_marts", frozenset())]
    with pytest.raises(ModelGraphError, match="a -> b -> c -> a"):
        build_order(models)
    with pytest.raises(ModelGraphError, match="reads itself"):
        build_order([Model("x", "30_marts", frozenset({"x"}))])


def test_a_read_of_nothing_is_found():
    models = [Model("team_month", "30_marts", frozenset({"allocation_line", "charges"}))]
    assert unprovided_reads(models, ["charges"]) == [("team_month", "allocation_line")]


names = st.sampled_from([f"m{i}" for i in range(8)])


@given(st.dictionaries(names, st.frozensets(names, max_size=3), min_size=1))
def test_any_acyclic_graph_is_ordered_and_any_cyclic_one_refused(graph):
    # keep only edges to lower-numbered models: acyclic by construction
    acyclic = [Model(n, "30_marts", frozenset(r for r in reads if r < n)) for n, reads in graph.items()]
    order = [m.name for m in build_order(acyclic)]
    assert sorted(order) == sorted(graph)
    assert all(order.index(r) < order.index(m.name) for m in acyclic for r in m.reads if r in graph)
    assert order == [m.name for m in build_order(list(reversed(acyclic)))], "order does not depend on listing"
    # one edge back from the lowest model to the highest closes a cycle through any path between them
    lo, hi = min(graph), max(graph)
    if lo != hi and any(lo in m.reads for m in acyclic if m.name == hi):
        cyclic = [Model(m.name, m.folder, m.reads | {hi}) if m.name == lo else m for m in acyclic]
        with pytest.raises(ModelGraphError):
            build_order(cyclic)
