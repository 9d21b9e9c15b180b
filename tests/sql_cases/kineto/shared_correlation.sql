-- trace: mini:merged_ranks.json mini:one_op_two_kernels.json
-- what: the merged file's two launches share correlation id 7; a one-process trace shares none
INCLUDE PERFETTO MODULE guide.kineto;
SELECT correlation, launches FROM guide_kineto_shared_correlation ORDER BY correlation;
