-- A launch joined to its kernel: each flow from a runtime call to a kernel, correlation ids compared
-- output: table
-- columns: launch=Launch call, kernel=Kernel, launch_to_start_ns=Launch to kernel start, kernel_ns=Kernel time, same_correlation=Same correlation id
-- question_ja: 起動とカーネルをつなぐ: ランタイム呼び出しからカーネルへのフローごとに、correlation id を比べて
-- columns_ja: launch=起動呼び出し, kernel=カーネル, launch_to_start_ns=起動からカーネル開始まで, kernel_ns=カーネル時間, same_correlation=correlation id が同じ
SELECT
  launch.name AS launch,
  kernel.name AS kernel,
  kernel.ts - launch.ts AS launch_to_start_ns,
  kernel.dur AS kernel_ns,
  EXTRACT_ARG(launch.arg_set_id, 'args.correlation')
    = EXTRACT_ARG(kernel.arg_set_id, 'args.correlation') AS same_correlation
FROM flow AS f
JOIN slice AS launch ON launch.id = f.slice_out
JOIN slice AS kernel ON kernel.id = f.slice_in
WHERE launch.category IN ('cuda_runtime', 'cuda_driver') AND kernel.category = 'kernel'
ORDER BY kernel.ts
LIMIT 6;
