-- The DataLoader's label in a training step: which iterator, and each profiled step's wait
-- output: values
-- question_ja: 学習ステップ内の DataLoader のラベル: どのイテレータか、プロファイルした各ステップでの待ち時間
INCLUDE PERFETTO MODULE guide.train;

WITH
  data AS (
    SELECT c.ts, c.dur, c.cpu_ops, p.name
    FROM guide_train_phase_cost AS c
    JOIN guide_train_phase AS p USING (id)
    WHERE c.phase = 'data'
  ),
  first_call AS (SELECT * FROM data ORDER BY ts LIMIT 1),
  later AS (SELECT * FROM data WHERE ts > (SELECT ts FROM first_call))
SELECT
  -- 'enumerate(DataLoader)#<iterator class>.__next__': the class says whether workers serve it.
  (SELECT substr(name, length('enumerate(DataLoader)#') + 1) FROM first_call) AS iterator,
  (SELECT dur FROM first_call) AS first_data_cpu_ns,
  (SELECT cpu_ops FROM first_call) AS first_data_ops,
  (SELECT CAST(AVG(dur) AS INT) FROM later) AS later_data_cpu_ns,
  (SELECT MIN(cpu_ops) FROM later) AS later_data_min_ops,
  (SELECT MAX(cpu_ops) FROM later) AS later_data_max_ops,
  -- The copy of the batch to the device, per step (CPU time of the to_device label).
  (SELECT CAST(AVG(dur) AS INT) FROM guide_train_phase WHERE phase = 'to_device')
    AS to_device_cpu_ns;
