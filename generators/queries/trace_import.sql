-- What did the trace processor drop while importing this trace?
-- output: values
-- question_ja: トレースの読み込みでトレースプロセッサが落としたもの
-- The Perfetto UI runs the same importer: a data-loss or error count above zero is the red badge
-- it shows on opening the trace, so the page warns beside the button that opens it.
INCLUDE PERFETTO MODULE guide.kineto;

SELECT
  -- Complete events that start inside another on the same track and end after it.
  (SELECT COALESCE(SUM(value), 0) FROM stats WHERE name = 'slice_drop_overlapping_complete_event')
    AS overlapping_slices_dropped,
  -- Of what is missing, the kernels: launch calls whose kernel the trace no longer has.
  (SELECT COUNT(*) FROM slice
    WHERE category IN ('cuda_runtime', 'cuda_driver') AND name GLOB '*aunchKernel*'
      AND id NOT IN (SELECT launch_id FROM guide_kineto_launch_link)) AS kernels_dropped,
  -- Every error and data-loss count of the import: what the UI's badge adds up.
  (SELECT COALESCE(SUM(value), 0) FROM stats
    WHERE severity IN ('data_loss', 'error') AND source = 'trace' AND value > 0)
    AS import_problems;
