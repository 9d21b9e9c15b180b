-- trace: reference:a100-simple-add.json.gz reference:a100-triton-compiled.json.gz reference:h100-bert-small-inference.json.gz reference:mi300x-compiled-triton.json.gz
-- what: what the name decoder, the attention classifier and the LLM classifier each say of every distinct kernel (three classifiers, to be merged: where they disagree shows here)
INCLUDE PERFETTO MODULE guide.kineto;
INCLUDE PERFETTO MODULE guide.kernel_names;
INCLUDE PERFETTO MODULE guide.attention;
INCLUDE PERFETTO MODULE guide.llm;
SELECT
  guide_kernel_names_family(name) AS family,
  guide_kernel_names_work(name) AS work,
  guide_attention_kernel_family(name) AS attention_family,
  guide_llm_kernel_class(name) AS llm_class,
  COUNT(DISTINCT name) AS kernel_names
FROM guide_kineto_gpu_activity
WHERE category = 'kernel'
GROUP BY 1, 2, 3, 4
ORDER BY 1, 2, 3, 4;
