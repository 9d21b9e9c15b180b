-- Element types as `record_shapes=True` records them (`args.Input type[i]`, a communication
-- kernel's `dtype`): bytes per element and the short label the guide prints. Apart from
-- guide.shapes, whose tables cost seconds on a large trace, so that a module that only needs an
-- element's size does not build them.

-- Bytes per element of a tensor type as `record_shapes=True` spells it in `args.Input type[i]`
-- (the C++ name of the element type). The one mapping from recorded type to element size in the
-- guide: floating types ('double' 8, 'float' 4, 'c10::BFloat16' and 'c10::Half' 2, every
-- 'c10::Float8_*' variant 1), complex types ('c10::complex<double>' 16, 'c10::complex<float>'
-- 8, 'c10::complex<c10::Half>' 4), integer types in the spellings compilers give them ('long
-- int', 'int64_t', 'long long int' 8; 'int', 'int32_t' 4; 'short int', 'int16_t' 2; 'signed
-- char', 'unsigned char', 'int8_t', 'uint8_t' 1, and their unsigned variants) and 'bool' 1;
-- also PyTorch's own names for them, as a communication kernel's `dtype` argument spells them
-- ('ComplexDouble' 16; 'Double', 'Long', 'UInt64', 'ComplexFloat' 8; 'Float', 'Int', 'UInt32',
-- 'ComplexHalf' 4; 'BFloat16', 'Half', 'Short', 'UInt16' 2; 'Char', 'Byte', 'Bool', 'Float8_*' 1).
-- NULL for anything else ('Scalar', 'ScalarList', quantized or packed types, '').
CREATE PERFETTO FUNCTION guide_dtypes_elem_bytes(
  -- The element type as the trace records it, e.g. 'float', 'c10::BFloat16', 'long int'.
  dtype STRING
)
-- Bytes per element, or NULL when the type is not one listed above.
RETURNS LONG AS
SELECT CASE
  WHEN $dtype IN ('c10::complex<double>', 'ComplexDouble') THEN 16
  WHEN $dtype IN (
      'double', 'long int', 'int64_t', 'long long int', 'long unsigned int', 'uint64_t',
      'long long unsigned int', 'c10::complex<float>', 'Double', 'Long', 'UInt64', 'ComplexFloat'
    ) THEN 8
  WHEN $dtype IN (
      'float', 'int', 'int32_t', 'unsigned int', 'uint32_t', 'c10::complex<c10::Half>', 'Float',
      'Int', 'UInt32', 'ComplexHalf'
    ) THEN 4
  WHEN $dtype IN (
      'c10::BFloat16', 'c10::Half', 'short int', 'short', 'int16_t', 'short unsigned int',
      'unsigned short', 'uint16_t', 'BFloat16', 'Half', 'Short', 'UInt16'
    ) THEN 2
  WHEN $dtype IN (
      'bool', 'signed char', 'unsigned char', 'char', 'int8_t', 'uint8_t', 'Char', 'Byte', 'Bool'
    ) THEN 1
  WHEN $dtype GLOB 'c10::Float8_*' OR $dtype GLOB 'Float8_*' THEN 1
  ELSE NULL
END;

-- A short label for a recorded element type, in the words the rest of the guide uses (the kernel
-- name decoder's): 'fp64', 'fp32', 'bf16', 'fp16', 'fp8 e4m3fn' (and the other 'c10::Float8_*'
-- variants, named by their suffix), 'complex64', 'complex128', 'int64', 'int32', 'int16', 'int8',
-- 'uint8', 'bool'. Any other type comes back as recorded; NULL stays NULL.
CREATE PERFETTO FUNCTION guide_dtypes_label(
  -- The element type as the trace records it, e.g. 'float', 'c10::BFloat16'.
  dtype STRING
)
-- The short label, or the recorded type when it has none.
RETURNS STRING AS
SELECT CASE
  WHEN $dtype = 'double' THEN 'fp64'
  WHEN $dtype = 'float' THEN 'fp32'
  WHEN $dtype = 'c10::BFloat16' THEN 'bf16'
  WHEN $dtype = 'c10::Half' THEN 'fp16'
  WHEN $dtype GLOB 'c10::Float8_*' THEN 'fp8 ' || substr($dtype, length('c10::Float8_') + 1)
  WHEN $dtype = 'c10::complex<float>' THEN 'complex64'
  WHEN $dtype = 'c10::complex<double>' THEN 'complex128'
  WHEN $dtype IN ('long int', 'int64_t', 'long long int') THEN 'int64'
  WHEN $dtype IN ('int', 'int32_t') THEN 'int32'
  WHEN $dtype IN ('short int', 'short', 'int16_t') THEN 'int16'
  WHEN $dtype IN ('signed char', 'int8_t') THEN 'int8'
  WHEN $dtype IN ('unsigned char', 'uint8_t') THEN 'uint8'
  ELSE $dtype
END;
