-- trace: mini:overlap_and_drop.json
-- what: tensor operands per element of the multi-tensor optimizer operators, NULL for any other
INCLUDE PERFETTO MODULE guide.traffic;
WITH names(name) AS (
  VALUES ('aten::_fused_adamw_'), ('aten::_fused_adam_'), ('aten::_foreach_addcmul_'),
    ('aten::_foreach_addcdiv_'), ('aten::_foreach_lerp_'), ('aten::_foreach_mul_'),
    ('aten::_foreach_div_'), ('aten::_foreach_add_'), ('aten::_foreach_sqrt'),
    ('aten::_foreach_zero_'), ('aten::add_')
)
SELECT name, guide_traffic_list_operands(name) AS operands FROM names ORDER BY name;
