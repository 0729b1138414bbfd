import core  # noqa: F401  (before pandera: see core/__init__.py)
