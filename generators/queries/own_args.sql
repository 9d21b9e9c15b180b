-- What a kernel's args hold: the first kernel's argument set, key by key
-- output: table
-- columns: key=Key (args.key), value=Value (display_value)
-- question_ja: カーネルの args に何が入っているか: 最初のカーネルの引数セットをキーごとに
-- columns_ja: key=キー（args.key）, value=値（display_value）
SELECT key, display_value AS value
FROM args
WHERE arg_set_id = (SELECT arg_set_id FROM slice WHERE category = 'kernel' ORDER BY ts LIMIT 1)
ORDER BY key;
