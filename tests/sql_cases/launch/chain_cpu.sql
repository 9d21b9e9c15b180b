-- trace: mini:cpu_only.json
-- what: on a CPU trace the work itself ends each chain (aten::mm, aten::add), skipping tensor bookkeeping (aten::resolve_conj)
INCLUDE PERFETTO MODULE guide.launch;
SELECT ts, dur, leaf_name, leaf_category, op_name, ancestors, chain, gpu_id, launch_to_start_ns
FROM guide_launch_chain
ORDER BY ts;
