-- trace: mini:cpu_only.json
-- what: every part the decoder reads from a cuBLAS, CUTLASS, cuDNN, hipBLASLt, ATen, FlashAttention and Inductor name; NULL where a name does not say
INCLUDE PERFETTO MODULE guide.kernel_names;
WITH k(name) AS (
  VALUES
    ('sm90_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize32x32x8_stage3_warpsize1x2x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas'),
    ('sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x64x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas'),
    ('ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_tn'),
    ('ampere_sgemm_32x32_sliced1x4_tn'),
    ('nvjet_hsh_128x256_64x4_2x1_v_bz_coopA_TNT'),
    ('cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x6_tn_align8'),
    ('Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x192x64_MI16x16x1_SN_LDSB1_ISA942'),
    ('void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)'),
    ('void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, cutlass::bfloat16_t>, false, true, false, false, true, true, false, false>(pytorch_flash::Flash_fwd_params)'),
    ('cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3_64x64x64_4x1x1_kernel0_0'),
    ('triton_poi_fused_add_cos_sin_0'),
    ('triton_red_fused__softmax_1'),
    ('cpp_fused_add_mul_2'),
    ('Memcpy HtoD (Pageable -> Device)')
)
SELECT
  substr(name, 1, 48) AS name,
  guide_kernel_names_family(name) AS family,
  guide_kernel_names_work(name) AS work,
  guide_kernel_names_arch(name) AS arch,
  guide_kernel_names_dtype(name) AS dtype,
  guide_kernel_names_mma(name) AS mma,
  guide_kernel_names_tile(name) AS tile,
  guide_kernel_names_layout(name) AS layout,
  guide_kernel_names_fused_ops(name) AS fused_ops,
  guide_kernel_names_index(name) AS idx,
  guide_kernel_names_summary(name) AS summary
FROM k;
