"""Which reader a file goes to is declared in one place, sources.DETECTION_ORDER: a reader that
registers without a place in it, or a place no reader holds, fails here."""
from __future__ import annotations


def test_every_reader_has_a_place_in_the_detection_order():
    from sources import DETECTION_ORDER, REGISTRY
    assert len(set(DETECTION_ORDER)) == len(DETECTION_ORDER)
    assert list(REGISTRY) == list(DETECTION_ORDER)


def test_detection_follows_the_declared_order_not_the_imports(monkeypatch):
    """A reader registered after the package was imported (a new module imported first, say) is
    not in the order: the registry puts it last, where the test above sees it."""
    import sources
    from sources.base import REGISTRY
    first = next(iter(REGISTRY.values()))
    monkeypatch.setattr(sources, "DETECTION_ORDER", tuple(reversed(sources.DETECTION_ORDER)))
    saved = dict(REGISTRY)
    try:
        sources._in_detection_order()
        assert list(REGISTRY) == list(reversed(list(saved)))
        assert next(iter(REGISTRY.values())) is not first
    finally:
        REGISTRY.clear()
        REGISTRY.update(saved)
