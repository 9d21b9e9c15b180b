-- Building on the guide's modules: the GPU's idle gaps in the step loop, by cause
-- output: table
-- columns: cause=Cause, gaps=Gaps, idle_ns=Idle time, longest_ns=Longest gap
-- question_ja: ガイドのモジュールの上に書く: ステップループ中の GPU のアイドルな隙間を原因ごとに
-- columns_ja: cause=原因, gaps=隙間の数, idle_ns=アイドル時間, longest_ns=最長の隙間
INCLUDE PERFETTO MODULE guide.windows;

SELECT cause, COUNT(*) AS gaps, SUM(dur) AS idle_ns, MAX(dur) AS longest_ns
FROM guide_windows_gpu_gap
GROUP BY cause
ORDER BY idle_ns DESC;
