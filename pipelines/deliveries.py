"""Which files of a folder make up a delivery, when the cloud says so in a manifest.

An AWS CUR period folder holds one subfolder per assembly (every refresh of the month is a new
complete copy) and `<report>-Manifest.json` naming the parts of the latest one in `reportKeys`
(AWS CUR user guide, "Understanding your report versions"). Reading the folder blindly would
load every assembly; with the manifest, only the listed parts are read, the older assemblies
are skipped with a note, and a listed part that is missing stops the run: half a month must not
pass for a whole one. The manifest nearest the folder named governs its subtree; the copies
AWS also writes inside each assembly folder are then ignored.

AWS Data Exports (CUR 2.0, FOCUS) keep the manifest beside the data rather than above it:
`<export>/metadata/<partition>/<export>-Manifest.json` describes `<export>/data/<partition>/`
(Data Exports user guide, "Understanding export delivery"), so that is the folder it governs.
"""
from __future__ import annotations

import json
from pathlib import Path, PurePosixPath

from core.errors import InputError
from sources.bounded import LimitError, load_json

# CUR 2.0 (Data Exports) manifests are assumed to list their files under `dataFiles` (S3 URIs);
# no real one was at hand to confirm it, so both keys are read the same way.
PART_KEYS = ("reportKeys", "dataFiles")


def is_manifest(path: Path) -> bool:
    return path.name.lower().endswith("manifest.json")


def listed_parts(manifest: Path) -> list[str] | None:
    """The object keys a manifest lists, or None when the file is not a delivery manifest."""
    try:
        doc = load_json(manifest.read_text(encoding="utf-8-sig"), "the delivery manifest")
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    except LimitError as exc:
        raise exc.at(manifest) from None
    for key in PART_KEYS:
        if isinstance(doc, dict) and isinstance(doc.get(key), list) and all(isinstance(k, str) for k in doc[key]):
            return doc[key]
    return None


def scope_of(manifest: Path) -> Path:
    """The folder whose files a manifest lists: its own, or for Data Exports the data partition
    of the same name."""
    partition, meta = manifest.parent, manifest.parent.parent
    if meta.name == "metadata" and (data := meta.parent / "data" / partition.name).is_dir():
        return data
    return partition


def _matches(key: str, file: Path, root: Path) -> bool:
    """An S3 key names a local file when their last two path parts agree (assembly id and file
    name): the bucket and prefix above the report differ once the files are copied down."""
    key_parts = PurePosixPath(key.split("://", 1)[-1]).parts[-2:]
    rel = file.relative_to(root).parts
    return tuple(rel[-len(key_parts):]) == key_parts or (len(rel) == 1 and rel[0] == key_parts[-1])


def select_parts(folder: Path, files: list[Path]) -> tuple[list[Path], dict[Path, list[str]]]:
    """The files to ingest from `folder` and notes to attach to the first part of each delivery."""
    manifests = sorted((f for f in files if is_manifest(f)), key=lambda f: (len(f.relative_to(folder).parts), str(f)))
    data = [f for f in files if not is_manifest(f)]
    governing: list[tuple[Path, Path, list[str]]] = []
    for m in manifests:
        if any(scope_of(m).is_relative_to(scope) for _, scope, _ in governing):
            continue
        keys = listed_parts(m)
        if keys:     # a manifest listing nothing cannot say which files are the delivery
            governing.append((m, scope_of(m), keys))
    notes: dict[Path, list[str]] = {}
    for manifest, scope, keys in governing:
        inside = [f for f in data if f.is_relative_to(scope)]
        chosen = [f for f in inside if any(_matches(k, f, scope) for k in keys)]
        missing = [k for k in keys if not any(_matches(k, f, scope) for f in inside)]
        if missing:
            raise InputError(manifest, "delivery incomplete",
                             f"{len(missing)} of {len(keys)} parts it lists are not here, e.g. {missing[0]}",
                             "Copy the whole assembly folder it names, or ingest the parts you have without the manifest")
        skipped = [f for f in inside if f not in chosen]
        data = [f for f in data if f not in skipped]
        if chosen:
            note = f"manifest {manifest.name}: {len(chosen)} part(s)"
            if skipped:
                note += f"; {len(skipped)} file(s) it does not list skipped (older assemblies), e.g. {skipped[0].relative_to(scope)}"
            notes[chosen[0]] = [note]
    return data, notes
