"""A GPU-hour read across a month boundary is in the reading month's fingerprint by its content
(not by its file, which belongs to the other month): a restated hour of October that November's
first hours are computed from rebuilds November. Only those hours' content is hashed."""
from __future__ import annotations

import duckdb
import pytest

from pipelines import month_scope
from pipelines.warehouse import create_tables


@pytest.fixture
def con():
    con = duckdb.connect()
    con.execute("set TimeZone = 'UTC'")
    create_tables(con)
    con.execute("insert into source_files (file_id, path, sha256, kind, rows_read, rows_loaded, rows_rejected, status, loaded_at) "
                "values (1, 'oct.prom', 'a', 'dcgm', 4, 4, 0, 'loaded', now()), (2, 'nov.prom', 'b', 'dcgm', 4, 4, 0, 'loaded', now())")
    # one GPU scraped every hour from October 31 20:00 to November 1 03:00, energy at every hour
    con.execute("insert into gpu_hour_parts (file_id, gpu_uuid, hour_start, n_scrapes, first_ts, last_ts, n_energy, last_energy_mj) "
                "select case when h < timestamp '2026-11-01' then 1 else 2 end, 'GPU-1', h, 1, h, h, 1, 1.0 "
                "from range(timestamp '2026-10-31 20:00:00', timestamp '2026-11-01 04:00:00', interval 1 hour) t (h)")
    yield con
    con.close()


def fingerprints(con) -> dict[str, str]:
    month_scope.map_rows(con)
    return month_scope.fingerprints(con)


def test_a_restated_boundary_hour_changes_the_neighbouring_months_fingerprint(con):
    before = fingerprints(con)
    con.execute("update gpu_hour_parts set last_energy_mj = 2.0 where hour_start = timestamp '2026-10-31 23:00:00'")
    after = fingerprints(con)
    assert after["2026-11"] != before["2026-11"]


def test_only_the_hours_read_across_the_boundary_carry_their_content(con):
    month_scope.map_rows(con)
    rows = con.execute("select s.month, p.hour_start, s.ctx is not null from _scope_rows_gpu_hour_parts s "
                       "join gpu_hour_parts p on p.rowid = s.rid order by all").fetchall()
    assert rows and all(carries == (month != hour.strftime("%Y-%m")) for month, hour, carries in rows)
