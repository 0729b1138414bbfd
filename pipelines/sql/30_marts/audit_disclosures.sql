-- Grain: file_id x row_number. The published disclosures (YAML, model cards) as the footprint
-- audit shows them: every figure with its text as written, and the parser's findings. The audit
-- reads this mart and audit_reconstructions (pipelines/audit_reconstructions.py), never the
-- loaded table.
with disclosures as (
    select * from disclosures
)

select * from disclosures
