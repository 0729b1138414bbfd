-- Grain: GPU key (gpu_key of a model name or alias). The board's idle and TDP power, through the
-- same aliases as everywhere (case, punctuation); the most it can draw is the top of its TDP
-- range (a part sold at several power limits). Ephemeral: inlined into the models that read it.
select a.key, max(s.value) filter (where s.metric = 'idle_w') as idle_w, max(s.value) filter (where s.metric = 'tdp_w') as tdp_w,
    max(s.high) filter (where s.metric = 'tdp_w') as max_w
from (select gpu_key(alias) as key, gpu_model from ref_gpu_aliases
      union
      select gpu_key(gpu_model), gpu_model from ref_gpu_specs) a
join ref_gpu_specs s on s.gpu_model = a.gpu_model
group by a.key
