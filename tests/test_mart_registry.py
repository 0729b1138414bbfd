"""Every mart the build writes has a contract: a pandera model in pipelines.stages.VALIDATED, or
a line in NOT_VALIDATED that says where it is checked instead. A new mart in neither fails here,
as does a registry entry for a table nothing builds."""
from __future__ import annotations


def test_every_mart_is_validated_or_says_why_not():
    from pipelines.stages import MARTS, NOT_VALIDATED, VALIDATED
    assert sorted(set(MARTS) - set(VALIDATED) - set(NOT_VALIDATED)) == []
    assert set(VALIDATED) & set(NOT_VALIDATED) == set()


def test_every_registry_entry_is_a_table_the_build_writes():
    from pipelines.stages import MARTS, NOT_VALIDATED, VALIDATED, stages
    built = {m.name for m in stages()} | set(MARTS)
    assert sorted((set(VALIDATED) | set(NOT_VALIDATED)) - built) == []
