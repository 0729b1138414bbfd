"""A warehouse made by an older meterbook gets the tables and columns added since, on its next
writer's connection; one already current is not altered again (every connection checks)."""
from __future__ import annotations

from pipelines.warehouse import connect


def columns(con, table: str) -> set[str]:
    return {r[0] for r in con.execute(f"describe {table}").fetchall()}


def test_an_older_warehouse_gets_what_was_added_since(tmp_path):
    wh = tmp_path / "wh.duckdb"
    with connect(wh) as con:
        # as a meterbook before split cost allocation and work logs left it
        con.execute("alter table charges drop column split_parent_id")
        con.execute("drop table work_log")
        con.execute("comment on table source_files is 'an older schema'")
    with connect(wh) as con:
        assert "split_parent_id" in columns(con, "charges")
        assert con.execute("select count(*) from work_log").fetchall() == [(0,)]


def test_a_current_warehouse_is_left_as_it_is(tmp_path):
    wh = tmp_path / "wh.duckdb"
    connect(wh).close()
    with connect(wh) as con:
        # a column gone without the schema's version changing: the next connection does not look
        con.execute("alter table charges drop column split_parent_id")
    with connect(wh) as con:
        assert "split_parent_id" not in columns(con, "charges")
