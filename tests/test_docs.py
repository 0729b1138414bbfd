"""The README and docs/ stay true: every link resolves (files and headings), every `meterbook`
command they show parses with the real CLI (its subcommand, options and arguments), and the
README stays a front door, not a manual."""
from __future__ import annotations

import re
import shlex
from pathlib import Path

import click
import pytest

from pipelines.cli import main
from tests.conftest import ROOT

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"```[a-z]*\n(.*?)```", flags=re.S)


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces to dashes."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    return {slug(h) for h in re.findall(r"^#+ (.+)$", text, flags=re.M)}


def links(page: Path) -> list[str]:
    return LINK.findall(FENCE.sub("", page.read_text(encoding="utf-8")))


def command_lines(page: Path) -> list[str]:
    """`meterbook ...` lines inside the page's code blocks, comments cut."""
    out = []
    for block in FENCE.findall(page.read_text(encoding="utf-8")):
        out += [ln.split("  #", 1)[0].strip() for ln in block.splitlines() if ln.strip().startswith("meterbook ")]
    return out


@pytest.mark.parametrize("page", DOCS, ids=lambda p: p.name)
def test_every_link_resolves(page):
    broken = []
    for target in links(page):
        if re.match(r"[a-z]+://|mailto:", target):
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(target)
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(target)
    assert not broken, f"{page.name}: {broken}"


def test_every_page_is_linked_from_the_readme():
    linked = {(ROOT / t.partition("#")[0]).resolve() for t in links(ROOT / "README.md")}
    assert set(p.resolve() for p in DOCS[1:]) <= linked


def parse(words: list[str]) -> None:
    """Resolve `words` to a command and parse its options and arguments without running it."""
    group: click.Command = main
    ctx = click.Context(main)
    while isinstance(group, click.Group):
        name, words = words[0], words[1:]
        cmd = group.get_command(ctx, name)
        assert cmd is not None, f"no command {name!r}"
        group = cmd
    group.make_context(group.name or "", list(words), resilient_parsing=False)


def test_every_command_shown_parses():
    shown = [(page.name, line) for page in DOCS for line in command_lines(page)]
    assert len(shown) >= 12
    for page, line in shown:
        try:
            parse(shlex.split(line)[1:])
        except click.UsageError as exc:
            pytest.fail(f"{page}: `{line}` does not parse: {exc.format_message()}")


def test_the_readme_is_a_front_door():
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) < 200
