import sys

# pandera probes for pandas-on-Spark when it is imported; with pyspark installed (the Spark
# engine) under pandas 3 that import fails after half a second and a FutureWarning on every
# command. Nothing here uses pandas-on-Spark: make the probe fail at once.
sys.modules.setdefault("pyspark.pandas", None)  # type: ignore[arg-type]  # None makes the import fail
