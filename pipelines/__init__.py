"""The pipeline layer. Its SQL models (pipelines/sql) are read through core.sql, which is told
where they are here, on the first import of any pipeline module."""
from importlib.resources import files

import core  # noqa: F401  (before pandera: see core/__init__.py)
from core.sql import use_sql_dir

use_sql_dir(files("pipelines") / "sql")
