"""Spark's own floor for meterbook's two Spark stages, on the same files and session settings:
a bare job that does only what any ingest must (read every field with an explicit schema, keep
each row's file and position, write Parquet partitioned by month), then the bare aggregation the
marts need, at the grains the marts write. Billing: cost and usage by month, account, resource
and team tag (the team and resource marts); every line again with its month, day, team and cost
(the FOCUS export and the allocated lines are one row per line); and every line once per meter
(billed, effective and list cost, usage) with its running total within its account, resource,
team and meter in file order (the day-by-day drill-down splits each line by cumulative rounding
within its group). Telemetry: samples by GPU and hour with the aggregates the energy model
reads (its marts are GPU-hour sums, far smaller). No checks, no rejects, no staging models, no
allocation rules: what is left between this and meterbook is meterbook's.

`code(kind, path, out, cores)` is a script for benchmarks.common.measure, to run after
bench_spark.PEAK_TREE (CPU seconds of the process tree, the JVM included); it prints one JSON
line: rows, ingest and aggregate wall and CPU seconds.
"""
from __future__ import annotations

from pathlib import Path

# dcgm-exporter text: metric{labels} value [timestamp ms]
PROM_FIELDS = {
    "metric": r"^([A-Za-z_:][A-Za-z0-9_:]*)",
    "gpu_uuid": r'UUID="([^"]*)"',
    "host": r'Hostname="([^"]*)"',
    "namespace": r'namespace="([^"]*)"',
    "pod": r'pod="([^"]*)"',
    "value": r"\} (\S+)",
    "ts_ms": r" (\d+)$",
}


def code(kind: str, path: Path, out: Path, cores: int) -> str:
    return f"""
import csv, json, time
from pipelines.spark.session import ensure_java
ensure_java()
from pyspark.sql import SparkSession, functions as F, types as T
spark = (SparkSession.builder.master('local[{cores}]').config('spark.ui.enabled', 'false')
         .config('spark.sql.shuffle.partitions', '{4 * cores}').config('spark.sql.adaptive.enabled', 'true')
         .config('spark.driver.memory', '4g').config('spark.sql.session.timeZone', 'UTC').getOrCreate())
path, out = {str(path)!r}, {str(out)!r}
lineage = {{'_file': F.input_file_name(), '_row': F.monotonically_increasing_id()}}
t0, c0 = time.perf_counter(), _cpu_s()
if {kind!r} == 'cur':
    with open(path, newline='') as f:
        header = next(csv.reader(f))
    schema = T.StructType([T.StructField(c, T.StringType()) for c in header])
    df = spark.read.schema(schema).options(header=True, mode='FAILFAST', escape='"').csv(path)
    df = df.withColumns(lineage).withColumn('month', F.substring(F.col('`bill/BillingPeriodStartDate`'), 1, 7))
else:
    text = spark.read.text(path).withColumns(lineage).where(~F.col('value').startswith('#') & (F.length('value') > 0))
    fields = {PROM_FIELDS!r}
    df = text.select('_file', '_row', *[F.regexp_extract('value', rx, 1).alias(n) for n, rx in fields.items()])
    df = (df.withColumn('value', F.col('value').cast('double'))
            .withColumn('ts', F.timestamp_millis(F.col('ts_ms').cast('long')))
            .withColumn('month', F.date_format('ts', 'yyyy-MM')))
df.write.mode('overwrite').partitionBy('month').parquet(out)
rows = spark.read.parquet(out).count()
t_ingest, c_ingest = time.perf_counter() - t0, _cpu_s() - c0
t0, c0 = time.perf_counter(), _cpu_s()
facts = spark.read.parquet(out)
if {kind!r} == 'cur':
    agg = facts.groupBy('month', '`lineItem/UsageAccountId`', '`lineItem/ResourceId`', '`resourceTags/user:team`').agg(
        F.sum(F.col('`lineItem/UnblendedCost`').cast('decimal(38,12)')).alias('cost'),
        F.sum(F.col('`lineItem/UsageAmount`').cast('double')).alias('usage'), F.count('*').alias('lines'))
else:
    metrics = [r[0] for r in facts.select('metric').distinct().collect()]
    per = []
    for m in metrics:
        v = F.when(F.col('metric') == m, F.col('value'))
        per += [F.sum(v).alias(m + '_sum'), F.count(v).alias(m + '_n'), F.min(v).alias(m + '_min'), F.max(v).alias(m + '_max')]
    agg = facts.groupBy('month', 'gpu_uuid', F.date_trunc('hour', 'ts').alias('hour')).agg(
        F.count('*').alias('samples'), F.min('ts').alias('first_ts'), F.max('ts').alias('last_ts'), *per)
agg.write.mode('overwrite').parquet(out + '-aggregate')
if {kind!r} == 'cur':
    from pyspark.sql.window import Window
    team = F.coalesce(F.col('`resourceTags/user:team`'), F.lit('unallocated')).alias('team')
    lines = facts.select('*', team, F.to_date(F.col('`lineItem/UsageStartDate`')).alias('day'),
                         F.col('`lineItem/UnblendedCost`').cast('decimal(38,12)').alias('cost'))
    lines.write.mode('overwrite').partitionBy('month').parquet(out + '-lines')
    meters = F.expr("stack(4, 'billed_cost', `lineItem/UnblendedCost`, 'effective_cost', `lineItem/UnblendedCost`, "
                    "'list_cost', `pricing/publicOnDemandCost`, 'usage', `lineItem/UsageAmount`) as (meter, value)")
    group = Window.partitionBy('month', '`lineItem/UsageAccountId`', '`lineItem/ResourceId`', 'team', 'meter')
    days = (lines.select('month', 'day', 'team', '`lineItem/UsageAccountId`', '`lineItem/ResourceId`', '_file', '_row', meters)
            .withColumn('amount', F.col('value').cast('decimal(38,12)'))
            .withColumn('running', F.sum('amount').over(group.orderBy('_file', '_row'))))
    days.write.mode('overwrite').partitionBy('month').parquet(out + '-days')
t_agg, c_agg = time.perf_counter() - t0, _cpu_s() - c0
print(json.dumps({{"rows": rows, "ingest_s": t_ingest, "ingest_cpu_s": c_ingest, "aggregate_s": t_agg,
                  "aggregate_cpu_s": c_agg, "peak_mb": _peak[0] / 2**20}}))
"""
