-- Grain: job window (job_id, start_utc) x month it overlaps. The work log's rows, each cut at
-- month boundaries: a window's units of work (tokens, samples, requests) go to a month in
-- proportion to the wall-clock time of the window inside it, so a month's share is fixed by the
-- work log alone and does not move when another month's telemetry is loaded.
-- A window restated in a later file (same job_id and start) replaces the earlier row.
-- flops_per_param_token: work FLOPs per active parameter and token, 6 for training and 2 for
-- serving (ref_assumptions train_/serve_flops_per_param_token).
with latest as (
    select w.*
    from work_log w
    join source_files f using (file_id)
    where f.status = 'loaded'
    qualify row_number() over (partition by w.job_id, w.start_utc order by w.file_id desc, w.row_number desc) = 1
),

multipliers as (
    select m.workload, a.value as flops_per_param_token, a.coefficient_id as flops_id
    from ref_assumptions a
    join (values ('training', 'train_flops_per_param_token'), ('serving', 'serve_flops_per_param_token')) m (workload, id)
        on m.id = a.assumption_id
),

pieces as (
    select l.*, m.month_start,
        greatest(l.start_utc, m.month_start) as piece_start,
        least(l.end_utc, m.month_start + interval 1 month) as piece_end
    from latest l,
         unnest(month_starts(l.start_utc, l.end_utc)) m (month_start)
)

select
    p.job_id,
    p.start_utc,
    p.end_utc,
    strftime(p.month_start, '%Y-%m') as month,
    p.piece_start,
    p.piece_end,
    (epoch(p.piece_end) - epoch(p.piece_start)) / (epoch(p.end_utc) - epoch(p.start_utc)) as month_share,
    epoch(p.piece_end) - epoch(p.piece_start) as piece_s,
    p.workload,
    p.namespace,
    p.pod,
    p.host,
    p.gpu_uuids,
    p.gpus,
    p.params,
    p.active_params,
    coalesce(p.active_params, p.params) as flops_params,
    m.flops_per_param_token,
    m.flops_id,
    p.precision,
    p.gpu_model,
    p.tokens * month_share as tokens,
    p.samples * month_share as samples,
    p.requests * month_share as requests,
    -- the job's own throughput log, as tokens over the piece (an independent view of the work)
    p.tokens_per_s * piece_s as logged_tokens,
    p.file_id,
    p.row_number
from pieces p
left join multipliers m using (workload)
