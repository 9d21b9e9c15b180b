-- Forward operator to backward node: the trace's fwdbwd links, most frequent first
-- output: table
-- columns: forward_name=Forward operator, backward_name=Backward node it links to, links_per_step=Links per step, same_thread=On the same thread
-- question_ja: 順伝播の演算子から逆伝播のノードへ: トレースの fwdbwd リンク（多い順）
-- columns_ja: forward_name=順伝播の演算子, backward_name=リンク先の逆伝播ノード, links_per_step=ステップあたりのリンク数, same_thread=同じスレッド上か
INCLUDE PERFETTO MODULE guide.train;

SELECT
  forward_name,
  backward_name,
  COUNT(*) * 1.0 / (SELECT COUNT(*) FROM guide_train_step) AS links_per_step,
  IIF(MIN(forward_track_id = backward_track_id) = 1, 'yes', 'no') AS same_thread
FROM guide_train_fwdbwd
GROUP BY forward_name, backward_name
ORDER BY links_per_step DESC, forward_name, backward_name
LIMIT 10;
