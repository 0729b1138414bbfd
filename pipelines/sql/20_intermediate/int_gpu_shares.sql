-- How each observed GPU-hour is shared between what ran on it, by its sharing mode. Grain: GPU x
-- hour x MIG instance x namespace x pod; namespace null: time no workload held (is_capacity: a MIG
-- GPU's slices no pod held). share splits the GPU-hour's cost and GPU-hours, energy_share its
-- energy and so its CO2e; each sums to 1 per GPU-hour (the last row of a mode is what the pods
-- leave, so nothing is lost to rounding). docs/sharing.md states the rules:
--   whole        one workload at a time: by observed time (rule presence)
--   mig          GPU_I_ID labels: a pod takes its instance's slices of the GPU's (compute slices,
--                or memory slices with mig_slices = memory, ref_mig_profiles) x its share of the
--                hour (mig_slices); the slices no pod held are capacity (mig_unallocated), or,
--                with mig_unused = slice_time, go to the pods in use by their slice-time.
--                Energy by each pod's GR_ENGINE_ACTIVE x slices x time where every pod reports it
--                (mig_activity; the unheld slices then draw none), else as the cost. A profile
--                the table lacks, a pod on no instance, or more slices than the GPU has: by
--                observed time (presence).
--   fractional   HAMi nvidia.com/gpucores (else gpumem-percentage) requested by every pod: each its
--                fraction x its share of the hour; what no pod requested is idle, more than the
--                whole GPU is scaled to it. Four 25 % pods make one GPU-hour.
--   time_sliced  pods whose times overlap on one GPU, or vgpu labels: the pods' time shared by
--                requested nvidia.com/gpu where every pod requests it (requested_share), else by
--                GR_ENGINE_ACTIVE x time where every pod reports it (observed_activity), else by
--                time (even).
-- charge_by (fractional and time-sliced GPUs): request (as above), use (by observed activity,
-- else time, whatever was requested) or larger (each pod the larger of the two, scaled so the
-- pods keep what they held together). Variables: mig_slices, mig_unused, charge_by, percent.
with pods as (select * from int_gpu_share_pods),

concurrent as (
    -- GPU-hours where two workloads' samples overlap in time: they held the GPU at once
    select distinct a.gpu_uuid, a.hour_start
    from pods a
    join pods b on b.gpu_uuid = a.gpu_uuid and b.hour_start = a.hour_start and b.instance = a.instance
        and b.pod < a.pod and b.first_ts <= a.last_ts and a.first_ts <= b.last_ts
    where a.namespace is not null and b.namespace is not null
),

hours as (
    select
        p.gpu_uuid, p.hour_start,
        case when bool_or(p.instance <> '') then 'mig'
             when bool_or(p.fraction is not null) then 'fractional'
             when bool_or(p.has_vgpu) or max(o.gpu_uuid) is not null then 'time_sliced'
             else 'whole' end as mode,
        -- every instance's profile known, every pod on one, and no more slices than the GPU has
        coalesce(bool_and(p.slice_frac is not null) filter (where p.instance <> ''), false)
            and not coalesce(bool_or(p.instance = '' and p.namespace is not null), false)
            and coalesce(max(s.slices), 0) <= 1 as profiles_known,
        coalesce(bool_and(coalesce(p.fraction, 0) > 0) filter (where p.namespace is not null), false) as all_fraction,
        coalesce(bool_and(coalesce(p.gpu_units, 0) > 0) filter (where p.namespace is not null), false) as all_units,
        coalesce(bool_and(coalesce(p.gr_active, 0) > 0) filter (where p.namespace is not null), false) as all_active,
        sum(p.n) as all_n,
        -- the hour's samples: its best-covered MIG instance, or its longest-held workload and the time without one
        greatest(max(p.instance_n) filter (where p.instance <> ''), 0)
        + case when bool_or(p.instance <> '') then 0
               else coalesce(max(p.n) filter (where p.namespace is not null), 0)
                    + coalesce(sum(p.n) filter (where p.namespace is null), 0) end as hour_n
    from pods p
    left join concurrent o on o.gpu_uuid = p.gpu_uuid and o.hour_start = p.hour_start
    left join (select gpu_uuid, hour_start, sum(slice_frac) as slices
               from (select distinct gpu_uuid, hour_start, instance, slice_frac from pods where instance <> '')
               group by gpu_uuid, hour_start) s on s.gpu_uuid = p.gpu_uuid and s.hour_start = p.hour_start
    group by p.gpu_uuid, p.hour_start
),

ruled as (
    -- each workload's rule and weights: req (what it requested x its time), use (observed
    -- activity x time, else time), slices (its MIG slices x time)
    select p.*, h.mode, h.hour_n, h.all_n,
        case when h.mode = 'whole' or (h.mode = 'mig' and not h.profiles_known) then 'presence'
             when h.mode = 'mig' then 'mig_slices'
             when getvariable('charge_by') = 'larger' and (h.all_fraction or h.all_units) then 'larger'
             when getvariable('charge_by') <> 'use' and (h.all_fraction or h.all_units) then 'requested_share'
             when h.all_active then 'observed_activity'
             else 'even' end as split_rule,
        case when h.mode = 'mig' and h.profiles_known and h.all_active then 'mig_activity' end as energy_rule,
        p.n * coalesce(case when h.mode = 'fractional' then p.fraction else p.gpu_units end, 0) as w_req,
        p.n * case when h.all_active then p.gr_active else 1 end as w_use,
        p.slice_frac * p.n as w_slices,
        p.slice_frac * p.n * p.gr_active as w_active
    from pods p
    join hours h using (gpu_uuid, hour_start)
),

totals as (
    -- what the workloads hold together: the hour less its time without one (fractional: what they
    -- requested, at most the whole GPU); a MIG GPU's used slices
    select gpu_uuid, hour_start,
        sum(w_req) filter (where namespace is not null) as req_total,
        sum(w_use) filter (where namespace is not null) as use_total,
        sum(w_slices) filter (where namespace is not null) as slices_total,
        sum(w_active) filter (where namespace is not null) as active_total,
        case when pick(mode) = 'fractional' and pick(split_rule) in ('requested_share', 'larger')
                 then least(sum(w_req) filter (where namespace is not null) / pick(hour_n), 1)
             else 1 - coalesce(sum(n) filter (where namespace is null), 0) / pick(hour_n) end as held
    from ruled
    group by gpu_uuid, hour_start
),

larger as (
    select r.gpu_uuid, r.hour_start, r.instance, r.namespace, r.pod,
        greatest(r.w_req / nullif(t.req_total, 0), r.w_use / nullif(t.use_total, 0)) as w_larger
    from ruled r join totals t using (gpu_uuid, hour_start)
    where r.split_rule = 'larger' and r.namespace is not null
),

held as (
    select r.*, t.held,
        case
            when r.split_rule = 'presence' then r.n / r.all_n
            when r.split_rule = 'mig_slices' and getvariable('mig_unused') = 'slice_time' then r.w_slices / t.slices_total
            when r.split_rule = 'mig_slices' then r.w_slices / r.hour_n
            when r.split_rule = 'requested_share' then t.held * r.w_req / t.req_total
            when r.split_rule = 'larger' then t.held * l.w_larger / sum(l.w_larger) over (partition by r.gpu_uuid, r.hour_start)
            else t.held * r.w_use / t.use_total
        end as pod_share,
        case when r.energy_rule = 'mig_activity' then r.w_active / t.active_total end as pod_energy_share
    from ruled r
    join totals t using (gpu_uuid, hour_start)
    left join larger l using (gpu_uuid, hour_start, instance, namespace, pod)
    where r.namespace is not null or r.split_rule = 'presence'
),

rest as (
    -- the time or slices no workload held, one row per GPU-hour (presence keeps its own rows);
    -- rounded to 12 places: shares that add up to the whole leave float noise (+-1e-16) that
    -- would be a negative energy share and would differ with the order rows were summed in
    select gpu_uuid, hour_start, '' as instance, null::varchar as namespace, null::varchar as pod,
        pick(mode) as mode, pick(mode) = 'mig' as is_capacity,
        case when pick(mode) = 'mig' then 'mig_unallocated' else 'idle' end as split_rule,
        round(1 - coalesce(sum(pod_share), 0), 12) as share,
        round(1 - coalesce(sum(coalesce(pod_energy_share, pod_share)), 0), 12) as energy_share
    from held
    where split_rule <> 'presence'
    group by gpu_uuid, hour_start
)

select gpu_uuid, hour_start, instance as mig_instance, mig_profile, namespace, pod, mode as sharing_mode,
    false as is_capacity, split_rule, pod_share as share, coalesce(pod_energy_share, pod_share) as energy_share,
    coalesce(energy_rule, split_rule) as energy_rule
from held
union all
select gpu_uuid, hour_start, null, null, namespace, pod, mode, is_capacity, split_rule, share, energy_share,
    split_rule as energy_rule
from rest
where share > 0 or energy_share > 0
union all
-- a MIG GPU-hour no pod used at all: every slice is capacity
select gpu_uuid, hour_start, null, null, null, null, 'mig', true, 'mig_unallocated', 1, 1, 'mig_unallocated'
from hours h
where h.mode = 'mig' and h.profiles_known
    and not exists (select 1 from held d where d.gpu_uuid = h.gpu_uuid and d.hour_start = h.hour_start)
