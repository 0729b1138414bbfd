"""The FinOps FOCUS validator's machine-readable rule model, evaluated as DuckDB SQL.

focus_validator publishes every FOCUS 1.2 requirement as a JSON rule (model-1.2.json): a
requirement built from check functions, an optional row condition, and applicability criteria.
We evaluate the MUST / MUST NOT rules over a relation (the export we write), one SQL count per
rule, so a month of charges is checked without loading it into Python. Rules that need a
provider capability we do not claim (ApplicabilityCriteria), or columns the file does not carry
(optional columns), are reported as skipped, not passed.
"""
from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

import duckdb

from core.sql import ident, literal, one_row

ENFORCED = {"MUST", "MUST NOT"}
WAIVERS = files("sources") / "focus_rule_waivers.csv"
ISO_Z = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$"
NUMERIC = r"^-?\d+(\.\d+)?([eE][-+]?\d+)?$"
UNIT = r"^[A-Za-z0-9][A-Za-z0-9 /()-]*$"
# Relative tolerance for unit price x quantity = cost (exports round to 10 decimals).
PRODUCT_TOLERANCE = 1e-6


@dataclass(frozen=True)
class RuleResult:
    rule_id: str
    status: str          # pass | fail | skipped | waived
    failing_rows: int
    text: str


class Skip(Exception):
    """The rule cannot apply to this dataset (a column it needs is absent)."""


class RuleModel:
    def __init__(self, model: dict[str, Any], con: duckdb.DuckDBPyConnection, relation: str,
                 applicable: frozenset[str] | set[str] = frozenset(), waived: dict[str, str] | None = None):
        self.rules = model["ModelRules"]
        self.waived = waived or {}
        self.applicable = set(applicable)
        # A sub-rule ("when X is not null, X adheres to: ...") holds only where its parents'
        # conditions hold; the model states them on the parent, so we carry them down.
        self.parent: dict[str, str] = {}
        for rid, rule in self.rules.items():
            for child in referenced_rules(rule["ValidationCriteria"].get("Requirement", {})):
                self.parent.setdefault(child, rid)
        self.con, self.relation = con, relation
        self.columns = {r[0] for r in con.execute(f"describe {relation}").fetchall()}

    def col(self, name: str | None) -> str:
        if name is None or name not in self.columns:
            raise Skip(name)
        return ident(name)

    def text(self, name: str | None) -> str:
        return f"cast({self.col(name)} as varchar)"

    @staticmethod
    def lit(v: Any) -> str:
        return literal(v)

    def sql(self, req: dict[str, Any]) -> str:
        """A row predicate that is true where the requirement holds."""
        f = req.get("CheckFunction")
        c = req.get("ColumnName")
        match f:
            case "OR" if (found := allowed_values(req)):
                # "MUST be one of the allowed values" constrains values; nullability is its own rule
                col, values = found
                return f"({self.col(col)} is null or {self.text(col)} in ({', '.join(self.lit(str(v)) for v in values)}))"
            case "AND" | "OR":
                return "(" + f" {f.lower()} ".join(self.sql(i) for i in req["Items"]) + ")"
            case "CheckModelRule":
                rule = self.rules[req["ModelRuleId"]]
                vc = rule["ValidationCriteria"]
                if (vc["Keyword"] not in ENFORCED or req["ModelRuleId"] in self.waived
                        or set(rule.get("ApplicabilityCriteria") or []) - self.applicable):
                    return "true"
                try:
                    cond = self.sql(vc["Condition"]) if vc.get("Condition") else "true"
                    return f"(not coalesce({cond}, false) or coalesce({self.sql(vc['Requirement'])}, false))"
                except Skip:
                    return "true"   # about a column this dataset does not carry
            case "ColumnPresent":
                return "true" if c in self.columns else "false"
            case "CheckValue":
                return f"{self.col(c)} is null" if req["Value"] is None else f"{self.text(c)} = {self.lit(str(req['Value']))}"
            case "CheckNotValue":
                return (f"{self.col(c)} is not null" if req["Value"] is None
                        else f"{self.text(c)} is distinct from {self.lit(str(req['Value']))}")
            case "CheckSameValue":
                return f"{self.text(req['ColumnAName'])} is not distinct from {self.text(req['ColumnBName'])}"
            case "CheckNotSameValue":
                return f"{self.text(req['ColumnAName'])} is distinct from {self.text(req['ColumnBName'])}"
            case "CheckGreaterOrEqualThanValue":
                return f"({self.col(c)} is null or try_cast({self.text(c)} as double) >= {self.lit(req['Value'])})"
            case "TypeDecimal" | "FormatNumeric" | "CheckDecimalValue":
                return f"({self.col(c)} is null or regexp_full_match({self.text(c)}, {self.lit(NUMERIC)}))"
            case "TypeString" | "FormatString":
                return f"({self.col(c)} is null or {self.text(c)} = trim({self.text(c)}))"
            case "TypeDateTime" | "FormatDateTime":
                return f"({self.col(c)} is null or regexp_full_match({self.text(c)}, {self.lit(ISO_Z)}))"
            case "FormatCurrency" | "CheckNationalCurrency":
                return f"({self.col(c)} is null or regexp_full_match({self.text(c)}, '^[A-Z]{{3}}$'))"
            case "FormatUnit":
                return f"({self.col(c)} is null or regexp_full_match({self.text(c)}, {self.lit(UNIT)}))"
            case "FormatKeyValue":
                return f"({self.col(c)} is null or (json_valid({self.text(c)}) and json_type({self.text(c)}) = 'OBJECT'))"
            case "ColumnByColumnEqualsColumnValue":
                a, b, r = (f"try_cast({self.text(req[k])} as double)" for k in ("ColumnAName", "ColumnBName", "ResultColumnName"))
                return (f"({a} is null or {b} is null or {r} is null or "
                        f"abs({a} * {b} - {r}) <= {PRODUCT_TOLERANCE} * greatest(1, abs({r})))")
            case "CheckDistinctCount":
                a, b = self.col(req["ColumnAName"]), self.col(req["ColumnBName"])
                bad = one_row(self.con, f"select count(*) from (select {a}, count(distinct {b}) n from {self.relation} "
                              f"where {a} is not null group by {a}) where n <> ?", [req["ExpectedCount"]])[0]
                return "true" if bad == 0 else "false"
        raise Skip(f"check function {f}")

    def conditions(self, rule_id: str) -> list[dict[str, Any]]:
        """The rule's own condition and those of the rules above it."""
        rid: str | None   # climbs to the root, whose parent is None
        out, seen, rid = [], set(), rule_id
        while rid and rid not in seen:
            seen.add(rid)
            cond = self.rules[rid]["ValidationCriteria"].get("Condition")
            if cond:
                out.append(cond)
            rid = self.parent.get(rid)
        return out

    def evaluate(self, rule_id: str) -> RuleResult:
        rule = self.rules[rule_id]
        vc = rule["ValidationCriteria"]
        text = vc.get("MustSatisfy", "")
        if rule_id in self.waived:
            return RuleResult(rule_id, "waived", 0, f"{text} [waived: {self.waived[rule_id]}]")
        if vc["Keyword"] not in ENFORCED or (set(rule.get("ApplicabilityCriteria") or []) - self.applicable):
            return RuleResult(rule_id, "skipped", 0, text)
        if rule.get("Function") == "Presence" and not rule_id.endswith("-M"):
            return RuleResult(rule_id, "skipped", 0, text)
        try:
            cond = " and ".join(f"coalesce({self.sql(c)}, false)" for c in self.conditions(rule_id)) or "true"
            req = self.sql(vc["Requirement"])
        except Skip:
            return RuleResult(rule_id, "skipped", 0, text)
        n = one_row(self.con, f"select count(*) from {self.relation} where coalesce({cond}, false) "
                    f"and not coalesce({req}, false)")[0]
        return RuleResult(rule_id, "fail" if n else "pass", n, text)


def referenced_rules(req: dict[str, Any]) -> list[str]:
    if req.get("CheckFunction") == "CheckModelRule":
        return [req["ModelRuleId"]]
    return [r for item in req.get("Items") or [] for r in referenced_rules(item)]


def allowed_values(req: dict[str, Any]) -> tuple[str, list[Any]] | None:
    """(column, values) when an OR lists non-null values of one column, else None."""
    items = req.get("Items") or []
    cols = {i.get("ColumnName") for i in items}
    if items and all(i.get("CheckFunction") == "CheckValue" and i.get("Value") is not None for i in items) and len(cols) == 1:
        return cols.pop(), [i["Value"] for i in items]
    return None


def waivers() -> dict[str, str]:
    """Rules of the model we do not enforce, each with the reason (sources/focus_rule_waivers.csv)."""
    return {r["rule_id"]: r["reason"] for r in csv.DictReader(WAIVERS.read_text(encoding="utf-8").splitlines())}


def validate_focus(con: duckdb.DuckDBPyConnection, relation: str, model_path: Path,
                   applicable: frozenset[str] | set[str] = frozenset()) -> list[RuleResult]:
    model = json.loads(Path(model_path).read_text(encoding="utf-8"))
    rm = RuleModel(model, con, relation, applicable, waivers())
    return [rm.evaluate(rid) for rid in sorted(rm.rules)]
