(* The main results depend on no axiom: each Print Assumptions below must say *)
(* "Closed under the global context" (make proofs and                          *)
(* tests/theory/test_formal.py check that every one does).                     *)

From AttnBounds Require Import stochastic dobrushin lazy causal product product_equality
  causal_product.

Print Assumptions delta_natE.
Print Assumptions tv_min.
Print Assumptions sum_norm_pos.
Print Assumptions factor_row_diff.
Print Assumptions d1_bound.
Print Assumptions d1_equality_sufficient.
Print Assumptions d1_equality_necessary.
Print Assumptions d1_equality.
Print Assumptions d1_bound_any.
Print Assumptions d1_equality_any.
Print Assumptions lazy_bound_any.
Print Assumptions lazy_equality_any.
Print Assumptions lazy_bound.
Print Assumptions lazy_equality.
Print Assumptions lazy_half.
Print Assumptions d1_causal.
Print Assumptions d1_causal_submatrix.
Print Assumptions d2_bound.
Print Assumptions tv_mul_le.
Print Assumptions rollout_bound.
Print Assumptions d2_causal.
Print Assumptions d2_causal_first_column.
Print Assumptions d2_equality.
Print Assumptions zero_sum_mul_eq_sufficient.
Print Assumptions zero_sum_mul_eq_necessary.
Print Assumptions rollout_le_prod.
Print Assumptions rollout_chain.
