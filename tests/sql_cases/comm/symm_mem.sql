-- trace: mini:symm_mem_comm.json
-- what: collectives over symmetric memory, without NCCL, are communication kernels: PyTorch's multimem_all_reduce_kernel and vLLM's cross_device_reduce_1stage (both all-reduces), while an ordinary reduction (at::native::reduce_kernel) and an elementwise kernel are not
INCLUDE PERFETTO MODULE guide.comm;
SELECT ts, dur, kind, purpose
FROM guide_comm_kernel
ORDER BY ts;
