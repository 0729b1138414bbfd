"""Published JSON schemas, vendored under ``sources/reference/schemas/``, and a check of a document
against one of them with every ``$ref`` resolved from that folder: validation never reaches the
network, and gives the same answer offline as on. ``reference/schemas/README.md`` names each
file's source, version and licence.
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

from jsonschema import FormatChecker
from jsonschema.validators import validator_for
from referencing import Registry, Resource

SCHEMA_DIR = Path(__file__).parent / "reference" / "schemas"
# The document formats meterbook writes, and the schema each must satisfy.
SCHEMAS = {"cyclonedx-1.6": "bom-1.6.SNAPSHOT.schema.json"}


@lru_cache(maxsize=None)
def _registry() -> Registry:
    """Every vendored schema, under its own $id and under the address a sibling's relative $ref
    gives it (the copies refer to each other by file name)."""
    pairs = []
    for path in sorted(SCHEMA_DIR.glob("*.json")):
        contents = json.loads(path.read_text(encoding="utf-8"))
        resource = Resource.from_contents(contents)
        pairs.append((contents["$id"], resource))
        pairs.append((urljoin(contents["$id"], path.name), resource))
    return Registry().with_resources(pairs)


def schema_errors(document: dict[str, Any], fmt: str) -> list[str]:
    """Each way the document fails the published schema of its format, as `<json path>: <what>`;
    an empty list when it is valid."""
    schema = json.loads((SCHEMA_DIR / SCHEMAS[fmt]).read_text(encoding="utf-8"))
    validator = validator_for(schema)(schema, registry=_registry(), format_checker=FormatChecker())
    return [f"{e.json_path}: {e.message}" for e in sorted(validator.iter_errors(document), key=lambda e: e.json_path)]
