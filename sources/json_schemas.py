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
from jsonschema.exceptions import ValidationError
from jsonschema.validators import validator_for
from referencing import Registry, Resource

SCHEMA_DIR = Path(__file__).parent / "reference" / "schemas"
# The document formats meterbook writes, and the schema each must satisfy.
SCHEMAS = {"cyclonedx-1.6": "bom-1.6.SNAPSHOT.schema.json", "spdx-3.0.1": "spdx-3.0.1.schema.json"}


@lru_cache(maxsize=None)
def _registry() -> Registry:
    """Every vendored schema that names its $id, under that $id and under the address a sibling's
    relative $ref gives it (the CycloneDX copies refer to each other by file name). SPDX's schema
    has no $id and refers only inside itself (`#/$defs/...`), so it needs no entry."""
    pairs = []
    for path in sorted(SCHEMA_DIR.glob("*.json")):
        contents = json.loads(path.read_text(encoding="utf-8"))
        if "$id" not in contents:
            continue
        resource = Resource.from_contents(contents)
        pairs.append((contents["$id"], resource))
        pairs.append((urljoin(contents["$id"], path.name), resource))
    return Registry().with_resources(pairs)


def schema_errors(document: dict[str, Any], fmt: str) -> list[str]:
    """Each way the document fails the published schema of its format, as `<json path>: <what>`;
    an empty list when it is valid."""
    schema = json.loads((SCHEMA_DIR / SCHEMAS[fmt]).read_text(encoding="utf-8"))
    validator = validator_for(schema)(schema, registry=_registry(), format_checker=FormatChecker())
    return [_said(e) for e in sorted(validator.iter_errors(document), key=lambda e: e.json_path)]


def _said(error: ValidationError) -> str:
    """The error as `<json path>: <what>`. A failed oneOf/anyOf (SPDX's schema is one at the top)
    would print the whole document; it names instead the deepest place any of its branches failed."""
    if not error.context:
        return f"{error.json_path}: {error.message}"
    leaves, deepest = list(error.context), error
    while leaves:
        leaf = leaves.pop()
        leaves.extend(leaf.context)
        if len(leaf.absolute_path) > len(deepest.absolute_path):
            deepest = leaf
    return f"{error.json_path}: fails every branch of its {error.validator}; deepest at {deepest.json_path}: {deepest.message}"
