-- Reading GPU (and Inductor CPU) kernel names: what a name says, and only what it says.
--
-- A kernel's name is often the only description of it that a trace carries. Library kernels
-- encode their configuration in the name: cuBLAS/cuDNN (`ampere_sgemm_32x32_sliced1x4_tn`,
-- `sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x64x64_...`), CUTLASS
-- (`cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x6_tn_align8`), hipBLASLt/Tensile on
-- ROCm (`Cijk_Alik_Bljk_BBS_BH_Bias_..._MT256x192x64_MI16x16x1_..._ISA942_...`); PyTorch's own
-- kernels are C++ templates (`void at::native::vectorized_elementwise_kernel<4, ...>`); and
-- torch.compile's Inductor names its generated kernels after what they fuse
-- (`triton_poi_fused_add_cos_sin_0`, and `cpp_fused_...` on CPU).
--
-- Every function below reads one part of a name and returns NULL when the name does not carry
-- that part in a form listed here: an unknown name stays unexplained rather than guessed at.
-- The functions are pure string functions, so they work on any trace, on `slice.name` or on a
-- literal. Used by Parts 2 to 4 of the guide.

-- Which library or code generator a kernel comes from, as a short label: 'cuBLAS', 'cuBLASLt',
-- 'CUTLASS', 'cuDNN', 'hipBLASLt', 'Inductor (Triton)', 'Inductor (C++)', 'PyTorch ATen',
-- 'FlashAttention', 'Liger (Triton)', 'CUB' (NVIDIA's CUB, `cub::`, which PyTorch builds into its
-- own namespace, `at_cuda_detail::cub::`); NULL when the name matches none of the known patterns.
-- A kernel in an anonymous namespace (`void (anonymous namespace)::softmax_warp_forward<...>`,
-- `softmax_warp_backward<...>`) names no library, whoever built it: NULL, while the other
-- functions still read its work and element type.
CREATE PERFETTO FUNCTION guide_kernel_names_family(
  -- Kernel name as the trace records it.
  name STRING
)
-- Library label, or NULL.
RETURNS STRING AS
SELECT CASE
  WHEN $name REGEXP '^triton_(poi|red|per|tem)_' THEN 'Inductor (Triton)'
  WHEN $name REGEXP '(^|_)cpp_fused_' THEN 'Inductor (C++)'
  WHEN $name GLOB '_geglu_*_kernel' OR $name GLOB '_swiglu_*_kernel' THEN 'Liger (Triton)'
  WHEN $name GLOB 'nvjet_*' THEN 'cuBLAS'
  WHEN $name GLOB '*cutlass_[0-9]*' OR $name GLOB '*cutlass::Kernel*'
    OR $name GLOB 'fmha_cutlass*' THEN 'CUTLASS'
  WHEN $name GLOB '*cudnn*' THEN 'cuDNN'
  WHEN $name REGEXP '^(void )?(sm[0-9]+_xmma_gemm|(ampere|volta|turing|hopper)_[a-z0-9_]*gemm)'
    THEN 'cuBLAS'
  WHEN $name GLOB '*epilogue::impl::*' OR $name GLOB '*cublasLt::*' THEN 'cuBLASLt'
  WHEN $name GLOB 'Cijk_*' THEN 'hipBLASLt'
  WHEN $name REGEXP '(^|[^A-Za-z_])cub::' THEN 'CUB'
  WHEN $name GLOB '*pytorch_flash::*' OR $name GLOB '*flash_fwd*' OR $name GLOB '*flash_bwd*'
    THEN 'FlashAttention'
  WHEN $name GLOB '*at::native::*' THEN 'PyTorch ATen'
  ELSE NULL
END;

-- What kind of work the name says the kernel does: 'GEMM', 'convolution', 'pointwise',
-- 'reduction', 'persistent reduction', 'GEMM template' (Inductor's own Triton GEMM),
-- 'fused loop (C++)', 'elementwise', 'normalization', 'softmax', 'attention' (FlashAttention,
-- cuDNN's `sdpa` kernels, CUTLASS `fmha`), 'gated GELU', and for CUB's kernels the algorithm its
-- namespace names: 'sort' (`radix_sort`), 'unique by key' (`unique_by_key`), 'scan' (`scan`, a
-- prefix sum); NULL otherwise.
CREATE PERFETTO FUNCTION guide_kernel_names_work(
  -- Kernel name as the trace records it.
  name STRING
)
-- Kind of work, or NULL.
RETURNS STRING AS
SELECT CASE
  WHEN $name GLOB 'triton_poi_*' THEN 'pointwise'
  WHEN $name GLOB 'triton_red_*' THEN 'reduction'
  WHEN $name GLOB 'triton_per_*' THEN 'persistent reduction'
  WHEN $name GLOB 'triton_tem_*' THEN 'GEMM template'
  WHEN $name REGEXP '(^|_)cpp_fused_' THEN 'fused loop (C++)'
  WHEN $name GLOB '_geglu_*' THEN 'gated GELU'
  WHEN $name REGEXP '(^|[^A-Za-z_])cub::' THEN
    CASE
      WHEN $name GLOB '*cub::detail::radix_sort::*' THEN 'sort'
      WHEN $name GLOB '*cub::detail::unique_by_key::*' THEN 'unique by key'
      WHEN $name GLOB '*cub::detail::scan::*' THEN 'scan'
      ELSE NULL
    END
  WHEN $name GLOB '*flash_fwd*' OR $name GLOB '*flash_bwd*' OR $name GLOB '*_sdpa_*'
    OR $name GLOB 'fmha_*' THEN 'attention'
  WHEN $name GLOB '*fprop*' OR $name GLOB '*dgrad*' OR $name GLOB '*wgrad*'
    OR $name GLOB '*scudnn*' OR $name GLOB '*conv*' THEN 'convolution'
  WHEN lower($name) GLOB '*gemm*' OR $name GLOB 'Cijk_*' OR $name GLOB 'nvjet_*' THEN 'GEMM'
  WHEN $name GLOB '*layer_norm*' OR $name GLOB '*batch_norm*' OR $name GLOB '*rms_norm*'
    THEN 'normalization'
  WHEN lower($name) GLOB '*softmax*' THEN 'softmax'
  WHEN $name GLOB '*reduce_kernel*' THEN 'reduction'
  WHEN $name GLOB '*elementwise_kernel*' THEN 'elementwise'
  ELSE NULL
END;

-- The GPU architecture a library kernel was built for, as the name spells it: 'sm70', 'sm75',
-- 'sm80', 'sm90' (from `sm90_`, `_sm80(`, `cutlass_80_`, `ampere_`, `volta_`, `turing_`, `hopper_`) or an
-- AMD ISA such as 'gfx942' (Tensile's `ISA942`). NULL when the name does not say.
CREATE PERFETTO FUNCTION guide_kernel_names_arch(
  -- Kernel name as the trace records it.
  name STRING
)
-- Architecture, or NULL.
RETURNS STRING AS
SELECT CASE
  WHEN $name REGEXP '(^|[^a-z])sm[0-9]{2,3}[_(]'
    THEN 'sm' || regexp_extract($name, 'sm([0-9]{2,3})[_(]')
  WHEN $name REGEXP 'cutlass_[0-9]{2,3}_'
    THEN 'sm' || regexp_extract($name, 'cutlass_([0-9]{2,3})_')
  WHEN $name REGEXP '(^|[^a-z])ampere_' THEN 'sm80'
  WHEN $name REGEXP '(^|[^a-z])hopper_' THEN 'sm90'
  WHEN $name REGEXP '(^|[^a-z])turing_' THEN 'sm75'
  WHEN $name REGEXP '(^|[^a-z])volta_' THEN 'sm70'
  WHEN $name GLOB 'Cijk_*' AND $name REGEXP '_ISA[0-9]+_'
    THEN 'gfx' || regexp_extract($name, '_ISA([0-9]+)_')
  ELSE NULL
END;

-- The input data type the name states: 'bf16', 'fp16', 'tf32', 'fp32', 'fp64', 'complex64'.
-- Read from library tokens (`bf16`, `sgemm`, `hgemm`, `tf32`, `scudnn`, Tensile's type letters
-- `BBS`/`HHS`/`SSS`) and from ATen template arguments (`c10::BFloat16`, `c10::Half`, `float`).
-- Inductor names carry no type: NULL.
CREATE PERFETTO FUNCTION guide_kernel_names_dtype(
  -- Kernel name as the trace records it.
  name STRING
)
-- Data type, or NULL.
RETURNS STRING AS
SELECT CASE
  WHEN $name REGEXP '^triton_|cpp_fused_' THEN NULL
  WHEN $name GLOB 'Cijk_*' THEN
    CASE substr(regexp_extract($name, '^Cijk_A[a-z]+_B[a-z]+_([A-Z]+)_'), 1, 1)
      WHEN 'B' THEN 'bf16'
      WHEN 'H' THEN 'fp16'
      WHEN 'S' THEN 'fp32'
      WHEN 'D' THEN 'fp64'
      ELSE NULL
    END
  WHEN $name GLOB '*bf16*' OR $name GLOB '*BFloat16*' OR $name GLOB '*bfloat16*' THEN 'bf16'
  WHEN $name GLOB '*tf32*' THEN 'tf32'
  WHEN $name GLOB '*fp16*' OR $name GLOB '*c10::Half*' OR $name GLOB '*_hgemm*'
    OR $name GLOB '*_h[0-9]*gemm*' THEN 'fp16'
  WHEN $name GLOB '*_dgemm*' OR $name GLOB '*<double*' THEN 'fp64'
  WHEN $name GLOB '*_gcgemm*' OR $name GLOB '*_cgemm*' THEN 'complex64'
  WHEN $name GLOB '*_sgemm*' OR $name GLOB '*scudnn*' OR $name GLOB '*<float*'
    OR $name GLOB '*f32*' THEN 'fp32'
  ELSE NULL
END;

-- The tensor-core instruction shape (M x N x K of one MMA) the name states: cuBLAS/CUTLASS's
-- `s16816gemm` is '16x8x16', `s1688gemm` '16x8x8', `s161616gemm` (WMMA) '16x16x16'; cuDNN's
-- `tensor16x8x8` and Tensile's `MI16x16x1` are read as written. NULL when absent (e.g. SIMT
-- kernels such as `ampere_sgemm_*`, which use no tensor cores).
CREATE PERFETTO FUNCTION guide_kernel_names_mma(
  -- Kernel name as the trace records it.
  name STRING
)
-- MMA shape, or NULL.
RETURNS STRING AS
SELECT CASE regexp_extract($name, '[a-z]([0-9]{3,6})gemm')
  WHEN '16816' THEN '16x8x16'
  WHEN '1688' THEN '16x8x8'
  WHEN '161616' THEN '16x16x16'
  WHEN '16832' THEN '16x8x32'
  WHEN '884' THEN '8x8x4'
  ELSE COALESCE(
    regexp_extract($name, '_tensor([0-9]+x[0-9]+x[0-9]+)'),
    regexp_extract($name, '_MI([0-9]+x[0-9]+x[0-9]+)_')
  )
END;

-- The tile one thread block (CTA) works on, as the name spells it: M x N of the output, then,
-- where the name gives one, the K step (how much of the reduction dimension the block loads per
-- iteration). `tilesize256x128x64` -> '256x128x64' (a 256 x 128 output tile, K step 64),
-- Tensile's `MT256x192x64` -> '256x192x64', otherwise the first `<M>x<N>` group of a library
-- GEMM/convolution name (`ampere_sgemm_32x32_...` -> '32x32', output tile only). NULL for names
-- that carry no tile (PyTorch's and Inductor's kernels choose theirs at launch) and for attention
-- kernels, whose block sizes count queries and keys.
CREATE PERFETTO FUNCTION guide_kernel_names_tile(
  -- Kernel name as the trace records it.
  name STRING
)
-- Tile as M x N or M x N x K-step, or NULL.
RETURNS STRING AS
SELECT CASE
  -- An attention kernel's block sizes count queries and keys, not an output tile: left alone.
  WHEN guide_kernel_names_work($name) = 'attention' THEN NULL
  WHEN guide_kernel_names_family($name) IN ('cuBLAS', 'CUTLASS', 'cuDNN', 'hipBLASLt')
    THEN COALESCE(
      regexp_extract($name, 'tilesize([0-9]+x[0-9]+x?[0-9]*)'),
      regexp_extract($name, '_MT([0-9]+x[0-9]+x[0-9]+)_'),
      regexp_extract($name, '_([0-9]+x[0-9]+)_')
    )
  ELSE NULL
END;

-- Operand layouts of a BLAS-style GEMM: the two letters `nn`, `nt`, `tn` or `tt` (column-major
-- convention: `n` = as stored, `t` = transposed) for cuBLAS/CUTLASS names; Tensile's index
-- notation (`Alik_Bljk`) is returned as written. NULL when the name has neither.
CREATE PERFETTO FUNCTION guide_kernel_names_layout(
  -- Kernel name as the trace records it.
  name STRING
)
-- Layout, or NULL.
RETURNS STRING AS
SELECT CASE
  WHEN $name GLOB 'Cijk_*' THEN regexp_extract($name, '^Cijk_(A[a-z]+_B[a-z]+)_')
  WHEN guide_kernel_names_family($name) IN ('cuBLAS', 'CUTLASS', 'cuDNN')
    THEN COALESCE(
      regexp_extract($name, '_(nn|nt|tn|tt)_'),
      regexp_extract($name, '_(nn|nt|tn|tt)>'),
      regexp_extract($name, '_(nn|nt|tn|tt)$')
    )
  ELSE NULL
END;

-- The operations a kernel fuses, comma-separated, in the order its name lists them. For
-- Inductor kernels (`triton_poi_fused_add_cos_sin_0` -> 'add, cos, sin';
-- `cpp_fused__unsafe_view_gelu_mul_0` -> '_unsafe_view, gelu, mul') multi-word ATen names from a
-- short list (`_unsafe_view`, `_to_copy`, `native_layer_norm`, `clamp_min`, ...) are kept whole;
-- other multi-word names come out split at '_'. For library GEMMs, the epilogue the name states
-- (`gemm_relu` -> 'relu', cuBLAS's `nvjet_..._bias_TNT` -> 'bias', Tensile's `_Bias_` -> 'bias').
-- NULL when there is nothing to read.
CREATE PERFETTO FUNCTION guide_kernel_names_fused_ops(
  -- Kernel name as the trace records it.
  name STRING
)
-- Fused operations, or NULL.
RETURNS STRING AS
SELECT CASE
  WHEN $name REGEXP 'fused_.*_[0-9]+$' THEN
    replace(
      replace(
        replace(
          replace(
            replace(
              replace(
                replace(
                  replace(
                    replace(
                      regexp_extract($name, 'fused_(.*)_[0-9]+$'),
                      '_unsafe_view', '#unsafe#view'
                    ),
                    '_to_copy', '#to#copy'
                  ),
                  'native_layer_norm', 'native#layer#norm'
                ),
                'clamp_min', 'clamp#min'
              ),
              'clamp_max', 'clamp#max'
            ),
            '_softmax', '#softmax'
          ),
          'index_select', 'index#select'
        ),
        '_', ', '
      ),
      '#', '_'
    )
  WHEN $name GLOB 'nvjet_*' THEN regexp_extract($name, '_(bias|relu|gelu)_[A-Z]+$')
  WHEN guide_kernel_names_family($name) IN ('cuBLAS', 'CUTLASS')
    THEN regexp_extract($name, 'gemm_(relu|gelu|bias_relu|bias_gelu|bias)_')
  WHEN $name GLOB 'Cijk_*_Bias_*' THEN 'bias'
  ELSE NULL
END;

-- Inductor's kernel index: the trailing number that tells apart kernels of one compiled graph
-- (`triton_poi_fused_add_cos_sin_0` -> 0). NULL for names Inductor did not generate.
CREATE PERFETTO FUNCTION guide_kernel_names_index(
  -- Kernel name as the trace records it.
  name STRING
)
-- Kernel index, or NULL.
RETURNS LONG AS
SELECT CASE
  WHEN guide_kernel_names_family($name) IN ('Inductor (Triton)', 'Inductor (C++)')
    THEN CAST(regexp_extract($name, '_([0-9]+)$') AS INT)
  ELSE NULL
END;

-- Every part the functions above can read, joined into one line for a table cell, e.g.
-- 'cuBLAS · GEMM · sm80 · fp32 · tile 32x32 · tn' or 'Inductor (Triton) · pointwise ·
-- fuses add, cos, sin · #0'. NULL when no part is known.
CREATE PERFETTO FUNCTION guide_kernel_names_summary(
  -- Kernel name as the trace records it.
  name STRING
)
-- One-line decoding, or NULL.
RETURNS STRING AS
SELECT NULLIF(
  rtrim(
    COALESCE(guide_kernel_names_family($name) || ' · ', '')
    || COALESCE(guide_kernel_names_work($name) || ' · ', '')
    || COALESCE(guide_kernel_names_arch($name) || ' · ', '')
    || COALESCE(guide_kernel_names_dtype($name) || ' · ', '')
    || COALESCE('MMA ' || guide_kernel_names_mma($name) || ' · ', '')
    || COALESCE('tile ' || guide_kernel_names_tile($name) || ' · ', '')
    || COALESCE(guide_kernel_names_layout($name) || ' · ', '')
    || COALESCE('fuses ' || guide_kernel_names_fused_ops($name) || ' · ', '')
    || COALESCE('#' || guide_kernel_names_index($name) || ' · ', ''),
    ' · '
  ),
  ''
);
