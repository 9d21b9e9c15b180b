-- trace: mini:cpu_only.json
-- what: element sizes and short labels of recorded types, unknown ones NULL or kept as recorded
INCLUDE PERFETTO MODULE guide.dtypes;
WITH t(dtype) AS (
  VALUES ('double'), ('float'), ('c10::BFloat16'), ('c10::Half'), ('c10::Float8_e4m3fn'),
    ('c10::complex<float>'), ('long int'), ('int'), ('short int'), ('signed char'),
    ('unsigned char'), ('bool'), ('Scalar'), ('')
)
SELECT dtype, guide_dtypes_elem_bytes(dtype) AS elem_bytes, guide_dtypes_label(dtype) AS label
FROM t;
