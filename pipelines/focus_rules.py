"""The FinOps FOCUS validator's machine-readable rule model, evaluated as DuckDB SQL.

focus_validator publishes every FOCUS 1.2 requirement as a JSON rule (model-1.2.json): a
requirement built from check functions, an optional row condition, and applicability criteria.
FOCUS 1.3 and 1.4 are that model plus the rules of what they changed, written in the same format
from the specification text (sources/focus_rules_<version>.json: the split cost allocation
columns and their per-origin sums, the provider columns; 1.4 retires ProviderName and
PublisherName). Rules about an origin charge need the file to say which rows share one
(GroupColumnNames); a file that does not is skipped on them, not passed.
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
# what each version adds to the one before, from 1.3 on (1.2 is focus_validator's own model)
VERSION_RULES = {"1.3": ("1.3",), "1.4": ("1.3", "1.4")}
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
            case "CheckModelRule" if req["ModelRuleId"] not in self.rules:
                return "true"   # retired by the version checked (1.4: ProviderName)
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
            case "FormatKeyValue" | "FormatJsonObject":
                return f"({self.col(c)} is null or (json_valid({self.text(c)}) and json_type({self.text(c)}) = 'OBJECT'))"
            case "ColumnByColumnEqualsColumnValue":
                a, b, r = (f"try_cast({self.text(req[k])} as double)" for k in ("ColumnAName", "ColumnBName", "ResultColumnName"))
                return (f"({a} is null or {b} is null or {r} is null or "
                        f"abs({a} * {b} - {r}) <= {PRODUCT_TOLERANCE} * greatest(1, abs({r})))")
            case "CheckJsonElements":
                # a non-empty array at ArrayPath, every element holding a number under each key
                t, path = self.text(c), req["ArrayPath"]
                numeric = " and ".join(
                    f"list_bool_and(list_transform(json_extract({t}, {self.lit(path + '[*].' + k)}), "
                    f"lambda v: json_type(v) in ('DOUBLE', 'UBIGINT', 'BIGINT', 'INTEGER')))" for k in req["NumericKeys"])
                return (f"({self.col(c)} is null or (json_valid({t}) and json_type({t}, {self.lit(path)}) = 'ARRAY' "
                        f"and json_array_length({t}, {self.lit(path)}) > 0 and {numeric}))")
            case "CheckGroupSum" | "CheckGroupSame":
                return self.group_check(req)
            case "CheckDistinctCount":
                a, b = self.col(req["ColumnAName"]), self.col(req["ColumnBName"])
                bad = one_row(self.con, f"select count(*) from (select {a}, count(distinct {b}) n from {self.relation} "
                              f"where {a} is not null group by {a}) where n <> ?", [req["ExpectedCount"]])[0]
                return "true" if bad == 0 else "false"
        raise Skip(f"check function {f}")

    def group_check(self, req: dict[str, Any]) -> str:
        """Rows whose group (GroupColumnNames: the rows of one origin charge, those with a
        GroupMemberColumn: its allocated charges) holds the rule: the
        column summed (a JSON path's numbers summed within each row first) equals Value or the
        group's ResultColumnName, exactly as decimals (CheckGroupSum); or the column has one
        value in the group (CheckGroupSame)."""
        key = "concat_ws('|', " + ", ".join(self.text(g) for g in req["GroupColumnNames"]) + ")"
        c = self.col(req["ColumnName"])
        if req["CheckFunction"] == "CheckGroupSame":
            holds = f"count(distinct coalesce({self.text(req['ColumnName'])}, '<null>')) = 1"
        else:
            value = (f"list_sum(list_transform(json_extract({self.text(req['ColumnName'])}, {self.lit(req['JsonPath'])}), "
                     f"lambda v: v::varchar::decimal(38, 12)))" if req.get("JsonPath") else f"{c}::decimal(38, 12)")
            target = (f"min({self.col(req['ResultColumnName'])}::decimal(38, 12))" if req.get("ResultColumnName")
                      else f"{self.lit(str(req['Value']))}::decimal(38, 12)")
            holds = f"sum({value}) = {target}"
        member = self.col(req["GroupMemberColumn"])
        return f"({key} in (select {key} from {self.relation} where {member} is not null group by all having {holds}))"

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


def version_model(model_path: Path, version: str = "1.2") -> dict[str, Any]:
    """focus_validator's 1.2 model with the rules of each later version up to `version` added and
    the rules it retired removed."""
    model = json.loads(Path(model_path).read_text(encoding="utf-8"))
    rules = dict(model["ModelRules"])
    for v in VERSION_RULES.get(version, ()):
        step = json.loads((files("sources") / f"focus_rules_{v}.json").read_text(encoding="utf-8"))
        rules = {k: r for k, r in rules.items() if k not in step["Details"]["Retired"]} | step["ModelRules"]
    return {**model, "ModelRules": rules}


def validate_focus(con: duckdb.DuckDBPyConnection, relation: str, model_path: Path,
                   applicable: frozenset[str] | set[str] = frozenset(), version: str = "1.2") -> list[RuleResult]:
    rm = RuleModel(version_model(model_path, version), con, relation, applicable, waivers())
    return [rm.evaluate(rid) for rid in sorted(rm.rules)]
