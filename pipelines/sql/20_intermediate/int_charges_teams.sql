-- Charges with their team, how it was resolved, their allocation category and source group.
-- Resolution, first hit wins: the provider's split (the AllocatedTags of a FOCUS 1.3 allocated
-- row, focus_allocations: team_source provider_split:<key>), billing tag keys in priority order,
-- then [[teams.rules]] in file order, then [teams.accounts] (sub account before billing account). Rules come before accounts
-- because a rule names something narrower (a tag value, a service) than a whole account.
-- Nothing is dropped: a charge no step resolves keeps team = the unallocated name, and its
-- category says which [allocation] rule distributes it (allocation_lines keeps it visible).
-- A tag value outside ASCII names the team int_name_folds folded it to (NFKC: spellings that
-- print alike are one team); team_name() alone removes hidden characters and trims.
-- Variables: tag_keys, unallocated. Tables: cfg_team_rules, cfg_account_teams.
with split_hits as (
    select
        file_id, row_number,
        list_filter(
            list_transform(getvariable('tag_keys'), lambda k: {'key': k, 'raw': allocated_tags[k], 'value': team_name(allocated_tags[k])}),
            lambda x: x.value is not null)[1] as hit
    from focus_allocations
),

splits as (
    select h.file_id, h.row_number, case when f.raw is null then h.hit.value else f.team end as split_team, h.hit.key as split_key
    from split_hits h left join int_name_folds f on f.raw = h.hit.raw
),

base as (
    select
        c.*,
        list_filter(
            list_transform(getvariable('tag_keys'), lambda k: {'key': k, 'raw': c.tags[k], 'value': team_name(c.tags[k])}),
            lambda x: x.value is not null)[1] as tag_hit,
        strftime(coalesce(c.billing_period_start, c.charge_period_start), '%Y-%m') as month,
        lower(c.provider) || ':' || c.region as zone,
        coalesce(c.sub_account_id, c.billing_account_id) as account
    -- an owned cluster's cost pool comes as charge lines too (int_cost_pool_lines)
    from (
        select * from charges
        union all by name
        select * from int_cost_pool_lines
    ) c
    -- AWS split rows re-describe their parent's cost: the allocation reads them (int_provider_split)
    where c.split_parent_id is null
),

rule_hits as (
    select b.file_id, b.row_number, b.charge_line, arg_min(r.team, r.ord) as team, min(r.ord) as ord
    from base b
    join cfg_team_rules r on regexp_matches(
        case r.field when 'tag' then b.tags[r.tag_key] when 'account' then b.account
                     when 'service' then b.service_name end, r.pattern)
    group by all
),

tagged as (
    select b.*, case when f.raw is null then b.tag_hit.value else f.team end as tag_team
    from base b left join int_name_folds f on f.raw = b.tag_hit.raw
),

resolved as (
    select
        b.*,
        coalesce(s.split_team, b.tag_team, rh.team, sa.team, ba.team) as resolved_team,
        case when s.split_team is not null then 'provider_split:' || s.split_key
             when b.tag_team is not null then 'tag:' || b.tag_hit.key
             when rh.team is not null then 'rule:' || (rh.ord + 1)
             when coalesce(sa.team, ba.team) is not null then 'account'
             else 'none' end as team_source
    from tagged b
    left join splits s using (file_id, row_number)
    left join rule_hits rh using (file_id, row_number, charge_line)
    left join cfg_account_teams sa on sa.account = b.sub_account_id
    left join cfg_account_teams ba on ba.account = b.billing_account_id
),

categorised as (
    select
        *,
        -- A resolved team makes any line direct (a tagged credit is that team's credit).
        case when resolved_team is not null then 'direct'
             when charge_category = 'Credit' or line_item_type in ('Credit', 'Refund')
                  or (charge_class = 'Correction' and billed_cost < 0) then 'credits'
             when commitment_discount_id is not null and charge_category = 'Purchase' then 'commitment'
             -- an owned cluster's capacity no job held (not idle GPU time: its own category),
             -- and its jobs whose account maps to no team
             when provider = 'owned' and line_item_type = 'IdleCapacity' then 'unallocated_capacity'
             when resource_id is not null or (provider = 'owned' and line_item_type = 'JobUsage') then 'untagged'
             else 'shared_services' end as alloc_category
    from resolved
)

select
    * exclude (tag_hit, tag_team),
    coalesce(resolved_team, getvariable('unallocated')) as team,
    concat_ws('|', 'charge', alloc_category, billing_currency, 'account=' || coalesce(account, ''),
              coalesce('resource=' || resource_id, 'service=' || coalesce(service_name, '')),
              'team=' || coalesce(resolved_team, ''),
              -- the month is part of the group: the same resource billed in two months is two
              -- groups, each split over its own month's targets (joins downstream are by group)
              'month=' || month) as source_group
from categorised
