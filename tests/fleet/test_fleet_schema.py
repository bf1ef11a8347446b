"""Spark types and SQL checks read off the wire declarations (:mod:`lbctl.fleet.schema`), and the
tables' columns read off their row records — no Spark needed for what is checked here."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta, Struct

from lbctl.fleet.rows import COLUMNS, TABLES, table_schema
from lbctl.fleet.schema import columns, java_regex, sql_checks, type_name
from lbctl.model.wire import fleet
from lbctl.model.wire.java import JavaIntCount, JavaRate
from lbctl.model.wire.snapshot import BundleNameText


class Leaf(Struct):
    rate: JavaRate = 0.0
    count: JavaIntCount = 0


class Doc(Struct, kw_only=True):
    name: Annotated[str, Meta(min_length=1)]
    leaves: dict[BundleNameText, Leaf] = {}
    keyed: dict[Annotated[str, Meta(pattern=r"^a+\Z")], int] = {}


def test_table_columns_are_the_row_records() -> None:
    for table, record in fleet.TABLES.items():
        assert [name for name, _ in table_schema(table)] == list(record.__struct_fields__)
        assert {src for src, _ in TABLES[table]} <= {name for name, _ in COLUMNS}
    assert ("num_topics", "topics") in TABLES["bundles"]  # the union column that feeds it
    assert dict(COLUMNS)["captured_at"] == "long" and dict(COLUMNS)["message"] == "string"
    assert [t for _, t, _ in columns(fleet.TopicsRow)][-2:] == ["long", "long"]
    assert type_name(float) == "double" and type_name(bool) == "boolean"


def test_checks_follow_the_declaration() -> None:
    checks = sql_checks(Doc, "d")
    assert "d.`name` IS NOT NULL" in checks  # required
    assert any("length(variant_get(d.`name`, '$', 'string')) >= 1" in c for c in checks)
    leaves = [c for c in checks if "map_values(d.`leaves`).`rate`" in c]
    assert leaves == ["coalesce(array_min(map_values(d.`leaves`).`rate`) >= 0.0D AND "
                      "array_max(map_values(d.`leaves`).`rate`) <= 1.7976931348623157E308D, true)"]
    assert any("RLIKE" in c and "map_keys(d.`leaves`)" in c for c in checks)  # bundle names
    assert any("RLIKE '^a+\\\\z'" in c for c in checks)  # Java's end of input
    assert java_regex(r"(?s)^x.+\Z") == r"(?s)^x.+\z"


def test_the_report_trusts_the_declared_schema_only_when_the_footer_agrees(tmp_path) -> None:
    """``report.read_table`` skips Spark's schema inference (a job per table) when the first
    file's footer has every declared column with its type; anything else is inferred as before."""
    import pytest

    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    from lbctl.fleet.report import _footer_agrees

    declared = table_schema("brokers")
    frame = pd.DataFrame({name: pd.Series([1 if t == "long" else 0.5 if t == "double" else "x"],
                                          dtype={"long": "int64", "double": "float64",
                                                 "string": object}[t])
                          for name, t in declared if name not in ("cluster", "date")})
    part = tmp_path / "brokers" / "cluster=a" / "date=2026-03-14"
    part.mkdir(parents=True)
    frame.to_parquet(part / "part-0.zstd.parquet")
    assert _footer_agrees(tmp_path / "brokers", declared)
    frame.drop(columns=["weighted_max_usage"]).to_parquet(part / "part-0.zstd.parquet")
    assert not _footer_agrees(tmp_path / "brokers", declared)  # a column missing
    frame.assign(num_topics=frame["num_topics"].astype("float64")).to_parquet(
        part / "part-0.zstd.parquet")
    assert not _footer_agrees(tmp_path / "brokers", declared)  # a type changed
    assert not _footer_agrees(tmp_path / "nothing", declared)
