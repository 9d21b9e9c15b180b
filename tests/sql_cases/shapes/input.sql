-- trace: mini:one_op_two_kernels.json
-- what: every tensor input's dims, strides, elements and element size; the Scalar input has none
INCLUDE PERFETTO MODULE guide.dtypes;
INCLUDE PERFETTO MODULE guide.shapes;
SELECT s.name, i.input_index, i.ndim, i.dims, i.strides, i.numel, i.dtype, i.element_bytes,
  guide_dtypes_label(i.dtype) AS label
FROM guide_shapes_input AS i
JOIN slice AS s ON s.id = i.slice_id
ORDER BY s.ts, i.input_index;
