-- Grain: source file. A file's place in sha256 order: details sort by content, never by load
-- order (a month's lines must not change with what else was loaded). Ephemeral: inlined into
-- its readers.
select file_id, sha256, dense_rank() over (order by sha256) as file_rank
from source_files
