(* Theorem D1 (docs/theory.md, section 1): the rollout factor (I + A)/2 of a   *)
(* row-stochastic n x n matrix A satisfies                                     *)
(*     delta((I + A)/2) <= (1 + delta(A))/2,                                   *)
(* with equality iff some pair (i, j), i != j, attaining delta(A) is mutually  *)
(* self-dominant: A_ii >= A_ji and A_jj >= A_ij. Both hold for every n: for    *)
(* n <= 1 there is no pair i != j and the bound is strict (0 < 1/2).           *)
(* The causal corollary (equality always, for lower-triangular A) is causal.v. *)
(*                                                                             *)
(*   rollout_factor A == (I + A)/2                                             *)
(*   d1_condition A   == some pair i != j has tv A i j = delta A, A_ji <= A_ii *)
(*                       and A_ij <= A_jj                                      *)
(* Main results: d1_bound, d1_equality_sufficient, d1_equality_necessary,      *)
(* d1_equality (the iff). Named steps: factor_row_diff (the (I+A)/2 row        *)
(* difference), tv_factor_le (coordinatewise triangle inequality),             *)
(* tv_factor_eq (its equality for a self-dominant pair).                       *)
(* The bound and its equality condition use no stochasticity (d1_bound_any,    *)
(* d1_equality_any); the suite's statements carry it as a hypothesis.          *)

From mathcomp Require Import all_ssreflect all_algebra.
From AttnBounds Require Import stochastic.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Import GRing.Theory Num.Theory Order.TTheory.
Local Open Scope ring_scope.

Section RolloutFactor.
Variables (R : realFieldType) (n : nat).
Implicit Type A : 'M[R]_n.

Definition rollout_factor A := 2%:R^-1 *: (1%:M + A).

Definition d1_condition A := exists i j : 'I_n,
  [/\ i != j, tv A i j = delta A, A j i <= A i i & A i j <= A j j].

Lemma factorE A i k : rollout_factor A i k = 2%:R^-1 * ((i == k)%:R + A i k).
Proof. by rewrite !mxE. Qed.

(* The (I+A)/2 row difference: row i minus row j is (e_i - e_j + A_i - A_j)/2. *)
Lemma factor_row_diff A i j k :
  rollout_factor A i k - rollout_factor A j k =
  2%:R^-1 * (((i == k)%:R - (j == k)%:R) + (A i k - A j k)).
Proof. by rewrite !factorE -mulrBr opprD addrACA. Qed.

Lemma tv_factor A i j : tv (rollout_factor A) i j =
  2%:R^-1 * (2%:R^-1 * \sum_k `|((i == k)%:R - (j == k)%:R) + (A i k - A j k)|).
Proof.
rewrite /tv; congr (_ * _); rewrite mulr_sumr; apply: eq_bigr => k _.
by rewrite factor_row_diff normrM ger0_norm ?half_ge0.
Qed.

Lemma sum_unit (i : 'I_n) : \sum_k ((i == k)%:R : R) = 1.
Proof.
rewrite (bigD1 i) //= eqxx big1 ?addr0 // => k.
by rewrite eq_sym => /negbTE ->.
Qed.

(* ||e_i - e_j||_1 = 2 for i != j.                                             *)
Lemma sum_unit_diff (i j : 'I_n) : i != j ->
  \sum_k `|((i == k)%:R - (j == k)%:R : R)| = 2%:R.
Proof.
move=> ij; have ji : (j == i) = false by rewrite eq_sym (negbTE ij).
rewrite (bigD1 i) //= (bigD1 j) /=; last by rewrite eq_sym.
rewrite !eqxx ji (negbTE ij) /=.
rewrite big1 => [|k /andP[ki kj]]; last first.
  by rewrite eq_sym (negbTE ki) eq_sym (negbTE kj) subrr normr0.
by rewrite ?mulr1n ?mulr0n subr0 sub0r normrN normr1 addr0.
Qed.

Lemma sum_unit_diff_le (i j : 'I_n) :
  \sum_k `|((i == k)%:R - (j == k)%:R : R)| <= 2%:R.
Proof.
apply: le_trans (_ : \sum_k ((i == k)%:R + (j == k)%:R) <= _).
  by apply: ler_sum => k _; apply: le_trans (ler_norm_sub _ _) _; rewrite !normr_nat.
by rewrite big_split /= !sum_unit.
Qed.

(* Coordinatewise triangle inequality: tv((I+A)/2)_ij <= (1 + tv(A)_ij)/2.     *)
Lemma tv_factor_le A i j : tv (rollout_factor A) i j <= 2%:R^-1 * (1 + tv A i j).
Proof.
rewrite tv_factor ler_pmul2l ?half_gt0 // /tv -half_addn2 ler_pmul2l ?half_gt0 //.
apply: le_trans (ler_sum _ (fun k _ => ler_norm_add _ _)) _.
by rewrite big_split /= ler_add2r sum_unit_diff_le.
Qed.

(* D1 bound, for every square matrix.                                          *)
Lemma d1_bound_any A : delta (rollout_factor A) <= 2%:R^-1 * (1 + delta A).
Proof.
apply: delta_le => [|i j].
  by rewrite mulr_ge0 ?half_ge0 // addr_ge0 ?ler01 ?delta_ge0.
apply: le_trans (tv_factor_le A i j) _.
by rewrite ler_pmul2l ?half_gt0 // ler_add2l tv_le_delta.
Qed.

(* For a mutually self-dominant pair i != j the triangle inequality is an      *)
(* equality in every coordinate: coordinate i adds 1 to A_ii - A_ji >= 0,      *)
(* coordinate j adds -1 to A_ij - A_jj <= 0, the others add 0.                 *)
Lemma tv_factor_eq A i j : i != j -> A j i <= A i i -> A i j <= A j j ->
  tv (rollout_factor A) i j = 2%:R^-1 * (1 + tv A i j).
Proof.
move=> ij dii djj; have ji : (j == i) = false by rewrite eq_sym (negbTE ij).
rewrite tv_factor /tv -half_addn2 -(sum_unit_diff ij) -big_split /=.
congr (_ * (_ * _)); apply: eq_bigr => k _.
have [<-|ik] := eqVneq i k.
  rewrite ji /= ?mulr1n ?mulr0n subr0 normr1.
  have h : 0 <= 1 + (A i i - A j i) by rewrite addr_ge0 ?ler01 ?subr_ge0.
  by rewrite (ger0_norm h) ger0_norm ?subr_ge0.
have [<-|jk] := eqVneq j k.
  rewrite /= ?mulr1n ?mulr0n sub0r normrN normr1 [`|A i j - A j j|]ler0_norm ?subr_le0 //.
  have h : -1 + (A i j - A j j) <= 0.
    by rewrite -oppr_ge0 opprD opprK addr_ge0 ?ler01 // oppr_ge0 subr_le0.
  by rewrite (ler0_norm h) opprD opprK.
by rewrite /= ?mulr0n subrr add0r normr0 add0r.
Qed.

Lemma d1_equality_sufficient_any A : d1_condition A ->
  delta (rollout_factor A) = 2%:R^-1 * (1 + delta A).
Proof.
case=> i [j [ij tvij dii djj]]; apply/eqP; rewrite eq_le d1_bound_any /=.
by rewrite -tvij -(tv_factor_eq ij dii djj) tv_le_delta.
Qed.

Lemma d1_equality_necessary_any A :
  delta (rollout_factor A) = 2%:R^-1 * (1 + delta A) -> d1_condition A.
Proof.
move=> e.
have pos : 0 < delta (rollout_factor A).
  by rewrite e mulr_gt0 ?half_gt0 // ltr_paddr ?delta_ge0 ?ltr01.
case: (delta_attained (rollout_factor A)) => [D0|[i [j Eij]]].
  by move: pos; rewrite D0 ltxx.
have ij : i != j.
  by apply: contraTneq pos => eij; rewrite -Eij eij tv_xx ltxx.
(* (1 + delta)/2 = tv((I+A)/2)_ij <= (1 + tv(A)_ij)/2 <= (1 + delta)/2 *)
have le1 := tv_factor_le A i j; rewrite Eij e in le1.
have tvij : tv A i j = delta A.
  apply/eqP; rewrite eq_le tv_le_delta /=.
  by move: le1; rewrite ler_pmul2l ?half_gt0 // ler_add2l.
(* hence sum_k |e_k + a_k| = sum_k |e_k| + sum_k |a_k|, termwise *)
have sum_eq : \sum_k `|((i == k)%:R - (j == k)%:R) + (A i k - A j k)| =
              \sum_k (`|((i == k)%:R - (j == k)%:R : R)| + `|A i k - A j k|).
  have h2 : 2%:R^-1 * (2%:R^-1 *
      \sum_k `|((i == k)%:R - (j == k)%:R) + (A i k - A j k)|) =
    2%:R^-1 * (2%:R^-1 * (\sum_k `|((i == k)%:R - (j == k)%:R : R)| +
      \sum_k `|A i k - A j k|)).
    by rewrite -tv_factor Eij e -tvij (sum_unit_diff ij) half_addn2.
  rewrite big_split /=; apply: (mulfI (lt0r_neq0 half_gt0)).
  exact: (mulfI (lt0r_neq0 half_gt0)).
have term := ler_sum_eq (fun k => ler_norm_add _ _) sum_eq.
have ji : (j == i) = false by rewrite eq_sym (negbTE ij).
exists i, j; split => //.
  (* coordinate i: |1 + (A_ii - A_ji)| = 1 + |A_ii - A_ji| *)
  move: (term i); rewrite eqxx ji /= ?mulr1n ?mulr0n subr0 => h.
  by rewrite -subr_ge0; exact: norm_add_eq_ge0 ltr01 h.
(* coordinate j: |-1 + (A_ij - A_jj)| = 1 + |A_ij - A_jj| *)
move: (term j); rewrite eqxx (negbTE ij) /= ?mulr1n ?mulr0n sub0r.
rewrite -normrN opprD opprK normrN -[`|A i j - A j j|]normrN => h.
by rewrite -subr_le0 -oppr_ge0; exact: norm_add_eq_ge0 ltr01 h.
Qed.

Lemma d1_equality_any A :
  delta (rollout_factor A) = 2%:R^-1 * (1 + delta A) <-> d1_condition A.
Proof.
by split; [exact: d1_equality_necessary_any | exact: d1_equality_sufficient_any].
Qed.

(* The suite's statements (theory/dobrushin.py: dobrushin.factor).            *)
Theorem d1_bound A : row_stochastic A ->
  delta (rollout_factor A) <= (1 + delta A) / 2%:R.
Proof. by move=> _; rewrite mulrC d1_bound_any. Qed.

Theorem d1_equality_sufficient A : row_stochastic A -> d1_condition A ->
  delta (rollout_factor A) = (1 + delta A) / 2%:R.
Proof. by move=> _ h; rewrite mulrC d1_equality_sufficient_any. Qed.

Theorem d1_equality_necessary A : row_stochastic A ->
  delta (rollout_factor A) = (1 + delta A) / 2%:R -> d1_condition A.
Proof. by move=> _; rewrite mulrC; exact: d1_equality_necessary_any. Qed.

Theorem d1_equality A : row_stochastic A ->
  delta (rollout_factor A) = (1 + delta A) / 2%:R <-> d1_condition A.
Proof. by move=> _; rewrite mulrC; exact: d1_equality_any. Qed.

End RolloutFactor.
