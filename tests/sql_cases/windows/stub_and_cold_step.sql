-- trace: reference:mi250-minitoy-train.json.gz
-- what: ProfilerStep#2 (49 µs, no operator) is the profiler's stub: not a real step, and no warm step to call #1 cold against
INCLUDE PERFETTO MODULE guide.windows;
SELECT 'stub' AS kind, step, dur FROM guide_windows_stub_step
UNION ALL
SELECT 'real', step, dur FROM guide_windows_real_loop
UNION ALL
SELECT 'cold', step, dur FROM guide_windows_cold_step
ORDER BY kind, step;
