"""A serving job's energy is inference energy: SPDX files it under ai_inferenceEnergyConsumption,
CycloneDX under activity inference, SCI per job (not per training run), and the AI Act form, whose
Annex XI 2(d)-(e) items are the computation and energy of training, refuses it."""
from __future__ import annotations

import json

import pytest

from core.errors import InputError
from reports.disclosure import SUMMED, write_disclosure
from tests.disclosure_tables import job_disclosure_table


@pytest.fixture
def con():
    con = job_disclosure_table()
    for job, workload in (("ranker-serving", "serving"), ("pretrain", "training")):
        con.execute(f"""insert into job_disclosure_month values ('2026-10', ?, ?, 3.5e8, 'A10G', 1, '2026-10-20', '2026-10-23',
            'measured', [], 'cloud', 'Scope 3, category 1', 'Scope 3, category 1', {", ".join("10" for _ in SUMMED)},
            1.1, 1.1, 1.2, ['pue:test'], 'AWS')""",
                    [job, workload])
    return con


def _write(con, job, fmt, out):
    (path, *_) = write_disclosure(con, ("2026-10", "2026-10"), job, None, fmt, out)
    return json.loads(path.read_text(encoding="utf-8"))


def test_a_serving_job_is_filed_as_inference_never_as_training(con, tmp_path):
    pkg = next(e for e in _write(con, "ranker-serving", "spdx", tmp_path)["@graph"] if e["type"] == "ai_AIPackage")
    assert "ai_trainingEnergyConsumption" not in pkg["ai_energyConsumption"]
    assert pkg["ai_energyConsumption"]["ai_inferenceEnergyConsumption"][0]["ai_energyUnit"] == "kilowattHour"
    (use,) = _write(con, "ranker-serving", "cyclonedx", tmp_path)["components"][0]["modelCard"]["considerations"][
        "environmentalConsiderations"]["energyConsumptions"]
    assert use["activity"] == "inference"
    units = [s["unit"] for s in _write(con, "ranker-serving", "sci", tmp_path)["scores"]]
    assert "g CO2e per job" in units and not any("training" in u for u in units)
    with pytest.raises(InputError, match="not training"):
        write_disclosure(con, ("2026-10", "2026-10"), "ranker-serving", None, "ai-act", tmp_path)


def test_a_training_job_is_still_filed_as_training(con, tmp_path):
    pkg = next(e for e in _write(con, "pretrain", "spdx", tmp_path)["@graph"] if e["type"] == "ai_AIPackage")
    assert list(pkg["ai_energyConsumption"]) == ["type", "ai_trainingEnergyConsumption"]
    (use,) = _write(con, "pretrain", "cyclonedx", tmp_path)["components"][0]["modelCard"]["considerations"][
        "environmentalConsiderations"]["energyConsumptions"]
    assert use["activity"] == "training"
    assert _write(con, "pretrain", "sci", tmp_path)["scores"][0]["unit"] == "g CO2e per training run"
    assert _write(con, "pretrain", "ai-act", tmp_path)["Amount of energy used for training"]["mwh"] == pytest.approx(0.01)
