-- Parsing helpers shared by the staging models (temp: recreated on every connection).
-- No trim(): the casts skip surrounding whitespace themselves, and trim() cost as much as the cast.
create or replace temp macro money(x) as try_cast(x as decimal(38, 12));
create or replace temp macro num(x) as try_cast(x as double);
-- ISO 8601 with or without T/Z/offset; a value without a zone is taken as UTC. The common
-- exact layouts go through strptime first (twice as fast as the general timestamptz cast),
-- one format picked by the length: a format that fails costs ten times one that parses, so a
-- list of formats tried in order made CUR's '...00.000Z' period dates the dearest cast of a line.
-- Anything else takes the former path unchanged (the list on the trimmed text, then the cast);
-- it sits in a CASE because coalesce() evaluated the list strptime on every row.
create or replace temp macro utc_ts_exact(x) as case length(x)
    when 20 then try_strptime(x, '%Y-%m-%dT%H:%M:%SZ')
    when 24 then try_strptime(x, '%Y-%m-%dT%H:%M:%S.%gZ')
    when 19 then try_strptime(x, '%Y-%m-%d %H:%M:%S')
end;
create or replace temp macro utc_ts(x) as case
    when utc_ts_exact(x) is not null then utc_ts_exact(x)
    else coalesce(try_strptime(trim(x), ['%Y-%m-%dT%H:%M:%SZ', '%Y-%m-%dT%H:%M:%S.%gZ', '%Y-%m-%d %H:%M:%S']),
                  try_cast(trim(x) as timestamptz)::timestamp)
end;
-- A name as it becomes a team (and a statement's file name): without the characters that print as
-- nothing or reorder the text (zero-width, bidi controls, soft hyphen, BOM: Unicode Cf) or drive
-- a terminal (control characters, Cc), trimmed; empty is null. 'research' + U+200B is 'research',
-- not a second team printed the same. A tag that held such characters is a finding (its raw value).
create or replace temp macro team_name(x) as nullif(trim(regexp_replace(x, '[\p{Cc}\p{Cf}]', '', 'g')), '');
-- One located failure when a present value did not parse, else null.
create or replace temp macro cast_err(col, raw, typed, expected) as
    case when raw is not null and trim(raw) <> '' and typed is null then
        {'column_name': col, 'check_name': 'parses_as_' || expected, 'value': left(raw, 200),
         'message': col || ' is not a valid ' || expected}
    end;
-- One located failure of a row check (its column, check name, the value as written, why), else null.
create or replace temp macro row_err(failed, col, check_name, raw, message) as
    case when failed then {'column_name': col, 'check_name': check_name, 'value': left(raw, 200), 'message': message} end;
-- NaN and infinity parse as numbers, and DuckDB orders NaN above every number (NaN >= 0 holds)
create or replace temp macro finite_err(col, raw, typed) as
    case when not isfinite(typed) then
        {'column_name': col, 'check_name': 'finite', 'value': left(raw, 200), 'message': col || ' is not a finite number'}
    end;
create or replace temp macro errors(l) as list_filter(l, lambda e: e is not null);
-- The instance type inside free text: AWS (p4d.24xlarge, ml.g5.xlarge), Azure (Standard_ND96asr_v4),
-- GCP (a3-highgpu-8g). Lower-cased to join the catalog. One alternation, not a coalesce of three
-- regexp_extract calls: DuckDB hoists repeated subexpressions out of nullif/coalesce, so the
-- three-call form ran every regex on every row (1 s per 2M CUR lines, the largest single cost).
create or replace temp macro instance_type_in(txt) as nullif(lower(regexp_extract(txt,
    '((?:ml\.)?[a-z][a-z0-9-]*\.(?:[0-9]*x?large|metal[a-z0-9-]*))|(Standard_[A-Za-z0-9_]+)|(\b[a-z][0-9][a-z]?-(?:highgpu|megagpu|ultragpu|standard|highmem)-[0-9]+g?\b)', 0)), '');
-- A Prometheus label's value; `names` is an alternation of spellings (UUID|gpu_uuid). Empty = null.
create or replace temp macro prom_label(labels, names) as
    nullif(regexp_extract(labels, '(?:^|[{,])\s*(?:' || names || ')="((?:[^"\\]|\\.)*)"', 1), '');
-- A kube-state-metrics series of a pod's resource requests or limits, or of the pod's
-- annotations and labels (where Run:ai's gpu-fraction reaches it): no GPU of its own, read as
-- what the pod reserved (gpu_request_parts), not as telemetry of a device.
create or replace temp macro is_request_metric(metric) as
    coalesce(metric in ('kube_pod_container_resource_requests', 'kube_pod_container_resource_limits',
                        'kube_pod_annotations', 'kube_pod_labels'), false);
-- A resource name as kube-state-metrics writes it or as Kubernetes does (nvidia_com_gpu,
-- nvidia.com/gpu, nvidia.com/mig-1g.10gb): one key, the Prometheus-sanitised form.
create or replace temp macro resource_key(name) as regexp_replace(lower(name), '[^a-z0-9]', '_', 'g');
-- A GPU name as a join key: case and punctuation ignored, CodeCarbon's "8 x " count dropped
-- (the same normalisation as sources.reference_data.resolve_gpu).
create or replace temp macro gpu_key(name) as
    regexp_replace(regexp_replace(lower(trim(name)), '^\d+\s*x\s+', ''), '[^a-z0-9]', '', 'g');
-- The physical GPU a sample belongs to: its UUID, else host + index (exporters without UUIDs);
-- null when the labels name neither (exporter dummy values, labels we cannot split).
create or replace temp macro gpu_identity(labels) as coalesce(
    prom_label(labels, 'UUID|gpu_uuid'),
    prom_label(labels, 'Hostname|hostname|NODE_NAME|node') || '/gpu' || prom_label(labels, 'gpu'));
-- The cloud instance a telemetry series ran on, to join charges.resource_id (README, "GPU
-- telemetry"). First a label relabelling put there: instance_id (AWS EC2 service discovery's
-- __meta_ec2_instance_id relabelled), InstanceID, ec2_instance_id, node_instance_id, then
-- instance_name (what GCP billing calls resource.name; GCP's numeric instance id is not a
-- billing key). Else Kubernetes' node providerID as kube-state-metrics' kube_node_info exposes
-- it: aws:///us-east-1a/i-0abc -> i-0abc; gce://project/zone/name -> name; azure://<ARM id> ->
-- the ARM id, a scale-set VM folded into its scale set because Azure bills the scale set.
-- Azure's vmId is not read: it is a GUID that no cost export carries.
create or replace temp macro provider_instance(pid) as case
    when pid like 'aws://%' or pid like 'gce://%' then nullif(regexp_extract(pid, '[^/]+$'), '')
    when pid like 'azure://%' then nullif(regexp_replace(pid,
        '^azure://|(/virtualMachineScaleSets/[^/]+)/virtualMachines/[^/]+$', '\1', 'g'), '')
end;
create or replace temp macro instance_label(labels) as coalesce(
    prom_label(labels, 'instance_id|InstanceID|ec2_instance_id|node_instance_id'),
    prom_label(labels, 'instance_name'),
    provider_instance(prom_label(labels, 'provider_id|providerID')));
-- A sum of doubles that does not depend on the order rows arrive in: DuckDB sums in parallel, so
-- a plain sum of doubles moves in its last bits with what else the table holds (another month
-- loaded beside this one), and a cent split by largest remainder can follow it. Each value is
-- exact to 1e-12 before the sum, and a decimal sum is exact. (A FILTER or OVER clause needs the
-- same written out: sum(x::decimal(38, 12)) filter (...).)
create or replace temp macro dsum(x) as sum(x::decimal(38, 12))::double;
-- The same for values a decimal(38, 12) cannot hold (FLOP counts reach 1e25): the values summed
-- in sorted order, so the result depends on the values alone. It builds a list per group: for
-- small groups (a job's rows of a month), not for telemetry.
create or replace temp macro osum(x) as list_sum(list_sort(list(x)));
-- The mean the same way (avg() of doubles is a plain sum underneath).
create or replace temp macro davg(x) as dsum(x) / nullif(count(x), 0);
-- One of a group's values, the same whatever order its rows arrive in: any_value() keeps the
-- first to arrive, which moves with what else the warehouse holds. For a column that should
-- hold one value per group (a GPU's host, a resource's zone); where it holds several (a host
-- re-launched under another instance id in the month), the smallest.
create or replace temp macro pick(x) as min(x);
-- An amount per unit of work, per `scale` units (a million tokens, a thousand requests); null
-- where no units were done (job_month, team_work_month: one formula for every per-unit figure).
create or replace temp macro per_unit(amount, units, scale) as amount / nullif(units, 0) * scale;
-- The most frequent non-null value of a list (`mode_det(list(team))`), ties to the smallest: mode()
-- breaks a tie by the order rows arrive in, so a resource billed to two teams for as many lines
-- had its owner, and with it its idle time and unobserved hours, change from one build to the next.
create or replace temp macro mode_det(l) as
    list_sort(list_transform(list_distinct(l), lambda v: {'n': -len(list_filter(l, lambda x: x = v)), 'v': v}))[1].v;
-- A Python literal (a list or dict of str, numbers, None, True, False, as `str()` of a pandas cell
-- writes it: koku's GCP labels and credits) as JSON text, or null when it is not one. Tokens are
-- quoted strings or runs of other text; strings are re-quoted and their escapes made JSON's
-- (\' -> ', \xNN -> \u00NN, a bare " escaped), and None/True/False become JSON words only
-- outside strings. A value with a character no token covers (an unclosed quote) is not one.
create or replace temp macro py_str_json(body, single) as '"' || array_to_string(list_transform(
    string_split(body, '\\'),
    lambda p: regexp_replace(regexp_replace(case when single then replace(p, '"', '\"') else p end,
                                            '\\''', '''', 'g'),
                             '\\x([0-9a-fA-F]{2})', '\\u00\1', 'g')), '\\') || '"';
create or replace temp macro py_tokens_json(tokens) as array_to_string(list_transform(tokens, lambda t: case
    when starts_with(t, '''') then py_str_json(t[2:-2], true)
    when starts_with(t, '"') then py_str_json(t[2:-2], false)
    else regexp_replace(regexp_replace(regexp_replace(t, '\bNone\b', 'null', 'g'), '\bTrue\b', 'true', 'g'),
                        '\bFalse\b', 'false', 'g')
    end), '');
-- (a one-element list_transform binds the tokens once: a macro has no let)
create or replace temp macro py_literal_json(s) as list_transform(
    [regexp_extract_all(s, '''(?:[^''\\]|\\.)*''|"(?:[^"\\]|\\.)*"|[^''"]+')],
    lambda tokens: case when length(array_to_string(tokens, '')) = length(s) then py_tokens_json(tokens) end)[1];
-- JSON text as it is, else the Python literal made JSON (null when it is neither).
create or replace temp macro json_text(s) as case
    when s is null or json_valid(s) then s
    else list_transform([py_literal_json(s)], lambda j: case when json_valid(j) then j end)[1] end;
-- A CSV row shorter than its header (read padded; `n` is null for whole rows): loaded, noted.
create or replace temp macro short_row_note(n) as case when n is not null then
    {'column_name': null::varchar, 'check_name': 'short_row', 'value': n::varchar || ' fields',
     'message': 'row has fewer fields than the header; the missing trailing fields are read as empty'} end;
-- A tag/label cell that parses neither as JSON nor as a Python literal: the row loads without it.
create or replace temp macro tags_note(col, raw, parsed) as case
    when raw is not null and trim(raw) not in ('', '[]', '{}') and parsed is null then
    {'column_name': col, 'check_name': 'tags_not_parsed', 'value': left(raw, 200),
     'message': col || ' is neither JSON nor a Python literal; the row is loaded without tags'} end;
-- A column as the input wrote it (m: charge_source_columns.columns); where the input left it
-- empty or had no such column, the derived value. Written values are never replaced.
create or replace temp macro written_or(m, k, derived) as coalesce(m[k], derived);
create or replace temp macro written_money_or(m, k, derived) as coalesce(money(m[k]), derived);
create or replace temp macro written_ts_or(m, k, derived) as coalesce(utc_ts(m[k]), derived);
-- Which part of a team's bill an allocation rule feeds (team_month's *_direct/_idle/_shared/
-- _credits columns and the statements' lines): one mapping for every mart. The idle part is
-- GPU time no work used: idle time and unallocated capacity (team_month names each apart).
create or replace temp macro charge_part(rule) as
    case when rule in ('direct', 'telemetry_split', 'unobserved', 'provider_split') then 'direct'
         when rule like 'idle:%' or rule like 'owned_capacity:%' or rule = 'unallocated_capacity' then 'idle'
         when rule like 'credits:%' then 'credits'
         else 'shared' end;
-- Whether a rule's line is unallocated capacity rather than idle time (both the idle part above):
-- GPU capacity no work was given, a MIG GPU's slices no pod held and an instance's unused split
-- cost (unallocated_capacity) as an owned cluster's GPU-hours no job held (owned_capacity:*).
-- Idle time is time a team's work held and left unused (idle:*). One test for every mart, so a
-- cost and its GPU-hours are named alike on every page.
create or replace temp macro is_unallocated_capacity(rule) as rule = 'unallocated_capacity' or rule like 'owned_capacity:%';
-- A FOCUS JSON column (ContractApplied, AllocatedMethodDetails) that is not JSON: loaded, noted.
create or replace temp macro json_note(col, raw) as case
    when raw is not null and trim(raw) <> '' and not json_valid(raw) then
    {'column_name': col, 'check_name': 'json_not_parsed', 'value': left(raw, 200),
     'message': col || ' is not JSON; the row is loaded without it'} end;
-- What an owned GPU costs a month: its purchase spread over its life, plus its running cost.
-- One formula for the owned-hardware finding (int_purchase_options) and an owned cluster's cost
-- pool (int_cost_pool).
create or replace temp macro owned_gpu_month_usd(capex_usd, life_months, running_usd) as capex_usd / life_months + running_usd;
-- A decimal amount of minor units rounded to a whole one: half_even (a tie to the even unit) or
-- half_up (a tie away from zero), the [currency] rounding of a converted bill.
create or replace temp macro round_units(u, mode) as sign(u) * (floor(abs(u))
    + case when abs(u) - floor(abs(u)) > 0.5 then 1
           when abs(u) - floor(abs(u)) < 0.5 then 0
           when mode = 'half_up' then 1
           else floor(abs(u)) % 2 end);
-- Slurm's hostlist (NodeList: gpu-a01, gpu-a[01-03,07], a[1-2]-ib,b3) as the hosts it names; a
-- range keeps its lower bound's zero padding, as Slurm writes it
create or replace temp macro hostlist(nodes) as flatten(list_transform(
    regexp_extract_all(nodes, '[^,\[]+(\[[^\]]*\])?[^,\[]*'),
    lambda item: case when strpos(item, '[') = 0 then [item] else flatten(list_transform(
        string_split(regexp_extract(item, '\[([^\]]*)\]', 1), ','),
        lambda r: list_transform(
            generate_series(split_part(r, '-', 1)::bigint, coalesce(nullif(split_part(r, '-', 2), ''), split_part(r, '-', 1))::bigint),
            lambda n: regexp_extract(item, '^[^\[]*') || lpad(n::varchar, greatest(length(n::varchar), length(split_part(r, '-', 1)))::integer, '0')
                      || regexp_extract(item, '\]([^\]]*)$', 1)))) end));
-- The first instants of the months a window [start_ts, end_ts) reaches: a job ending exactly at a
-- month's start does not reach that month (int_cluster_jobs, int_job_windows split jobs by them)
create or replace temp macro month_starts(start_ts, end_ts) as
    generate_series(date_trunc('month', start_ts), date_trunc('month', end_ts - interval 1 microsecond), interval 1 month);
-- Whether an instrument's or supplier factor's declared zone names a zone of int_zone_factors: the
-- zone itself, its grid zone, operator code or country, in any case (int_market_claims matches
-- instruments by it; int_supplier_reach tells a factor that names only cloud energy)
create or replace temp macro names_zone(declared, zone, grid_zone, operator_code, country) as
    lower(declared) in (lower(zone), lower(grid_zone), lower(operator_code), lower(country));
