"""The ground floor: units, the one user-facing error, the meter and rule vocabulary, and SQL text.
Every layer may import it; it imports none of them (tests/test_layers.py)."""
import sys

# pandera probes for pandas-on-Spark when it is imported; with pyspark installed (the Spark
# engine) under pandas 3 that import fails after half a second and a FutureWarning on every
# command. Nothing here uses pandas-on-Spark: make the probe fail at once. Here, on the ground
# floor, because every package imports it before it imports pandera.
sys.modules.setdefault("pyspark.pandas", None)  # type: ignore[arg-type]  # None makes the import fail
