-- trace: reference:a100-triton-compiled.json.gz
-- what: the one launch of a compiled region: its chain starts at the Torch-Compiled Region annotation and ends at cuLaunchKernel and the Triton kernel
INCLUDE PERFETTO MODULE guide.launch;
SELECT leaf_name, leaf_category, op_name, ancestors, chain, gpu_category, launch_to_start_ns
FROM guide_launch_chain
WHERE gpu_name IS NOT NULL
ORDER BY ts;
