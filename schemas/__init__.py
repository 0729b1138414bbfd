import pipelines  # noqa: F401  (before pandera: see pipelines/__init__.py)
