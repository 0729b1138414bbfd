"""GHG scopes by who owns the hardware (int_resource_ownership, scope_month): given a few billed
and unbilled resources and a [scopes] table, the ownership, its source and the scopes expected.
GHG Protocol Scope 2 Guidance (2015) ch. 5; Corporate Value Chain (Scope 3) Standard (2011) ch. 5."""
from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from core.sql import read_sql
from pipelines.config import Config, load_config
from pipelines.stage_inputs import apply_config
from pipelines.warehouse import add_macros

CLOUD, OWNED_ELECTRICITY = "Scope 3, category 1", "Scope 2"
# owned GPUs' amortised embodied CO2e: in no scope. Labelled Scope 3, category 2, a user filed a
# monthly depreciation as capital goods, which the Scope 3 Standard counts whole in the year of
# acquisition, never amortised
BESIDE = "not in a scope (an amortised share, reported beside the inventory)"


def ownership(config: Config, month: str = "2026-10") -> dict[str | None, tuple]:
    con = duckdb.connect()
    add_macros(con)
    apply_config(con, config)
    # November's bill names dgx-7: October's scopes must not move for it
    con.execute("""create table int_charges_teams as select * from (values
        ('2026-10', 'i-aws', 'AWS', '111122223333'), ('2026-10', 'i-aws', 'AWS', '111122223333'),
        ('2026-10', 'i-colo', 'AWS', '999988887777'), ('2026-10', 'vm-1', 'Azure', 'sub-1'),
        ('2026-10', 'hpc-lab:idle', 'owned', 'hpc-lab'),
        ('2026-11', 'dgx-7', 'AWS', '111122223333')) t(month, resource_id, provider, account)""")
    con.execute("""create table int_energy_base as select * from (values ('2026-10', 'i-aws'), ('2026-10', 'i-colo'),
                   ('2026-10', 'dgx-7'), ('2026-10', null), ('2026-11', 'dgx-7')) t(month, resource_id)""")
    rows = con.execute(read_sql("20_intermediate", "int_resource_ownership.sql")).fetchall()
    return {r[1]: r[4:] for r in rows if r[0] == month}


def test_billed_by_a_cloud_is_a_purchased_service_and_unbilled_gpus_are_owned():
    got = ownership(Config())
    assert got["i-aws"] == ("cloud", "billed by the cloud provider AWS", CLOUD, CLOUD)
    assert got["vm-1"][0] == "cloud"
    # a host [hosts] maps to no billed resource, and telemetry of no resource: the organisation's own
    for rid in ("dgx-7", None):
        assert got[rid] == ("on-premises", "no cloud bill covers these GPUs", OWNED_ELECTRICITY, BESIDE)
    assert len(got) == 6, "one row per resource, none twice, the unbilled row always there"
    # an owned cluster's cost pool is charge lines of provider 'owned', not a cloud's bill
    assert got["hpc-lab:idle"] == ("on-premises", "an owned cluster, charged back from its cost pool", OWNED_ELECTRICITY,
                                   BESIDE)
    assert ownership(Config(), "2026-11")["dgx-7"][0] == "cloud"      # billed that month: that month's ownership


def test_scopes_config_overrides_narrowest_first(tmp_path: Path):
    config = tmp_path / "meterbook.toml"
    config.write_text('[scopes]\nresources = { "i-aws" = "cloud" }\naccounts = { "111122223333" = "on-premises", '
                      '"999988887777" = "colocation" }\nproviders = { "azure" = "on-premises" }\n', encoding="utf-8")
    got = ownership(load_config(config))
    assert got["i-aws"][:2] == ("cloud", "meterbook.toml [scopes] resources")          # the resource beats its account
    assert got["i-colo"] == ("colocation", "meterbook.toml [scopes] accounts", OWNED_ELECTRICITY, BESIDE)
    assert got["vm-1"][:2] == ("on-premises", "meterbook.toml [scopes] providers")   # providers match in any case


def test_a_misspelt_ownership_stops_with_the_choices(tmp_path: Path):
    from core.errors import InputError
    config = tmp_path / "meterbook.toml"
    config.write_text('[scopes]\naccounts = { "111122223333" = "on-prem" }\n', encoding="utf-8")
    with pytest.raises(InputError, match="expected one of cloud, colocation, on-premises"):
        load_config(config)
