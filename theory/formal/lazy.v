(* Proposition D1a (docs/theory.md, section 1): a residual weight a in (0, 1). *)
(* For EVERY real square matrix A (no stochasticity used) and 0 <= a <= 1,    *)
(*     delta(a I + (1 - a) A) <= a + (1 - a) delta(A),                         *)
(* and for 0 < a < 1 equality holds iff D1's condition holds (d1_condition,   *)
(* dobrushin.v): some pair i != j attaining delta(A) has A_ji <= A_ii and      *)
(* A_ij <= A_jj. The condition does not depend on a. At a = 1/2 this is D1     *)
(* (lazy_half: lazy_factor (1/2) A = rollout_factor A). At the endpoints the   *)
(* iff fails: a = 0 is always an equality, and so is a = 1 for n >= 2.         *)
(* For n <= 1 the bound is 0 <= a, strict for a > 0, and the condition is      *)
(* false (no pair i != j), so the iff holds for every n.                       *)
(*                                                                             *)
(*   lazy_factor a A == a I + (1 - a) A                                        *)
(* Main results: lazy_bound_any, lazy_equality_any (every real square matrix) *)
(* and the suite's statements lazy_bound, lazy_equality (row-stochastic A,    *)
(* theory/dobrushin.py: dobrushin.factor.lazy). Named steps: lazy_row_diff,    *)
(* lazy_term_le (the weighted coordinatewise triangle inequality), tv_lazy_eq *)
(* (its equality for a self-dominant pair).                                    *)

From mathcomp Require Import all_ssreflect all_algebra.
From AttnBounds Require Import stochastic dobrushin.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Import GRing.Theory Num.Theory Order.TTheory.
Local Open Scope ring_scope.

Section LazyFactor.
Variables (R : realFieldType) (n : nat).
Implicit Types (A : 'M[R]_n) (a : R).

Definition lazy_factor a A := a *: 1%:M + (1 - a) *: A.

Lemma lazyE a A i k : lazy_factor a A i k = a * (i == k)%:R + (1 - a) * A i k.
Proof. by rewrite !mxE. Qed.

(* Row i minus row j of a I + (1 - a) A is a (e_i - e_j) + (1 - a)(A_i - A_j). *)
Lemma lazy_row_diff a A i j k :
  lazy_factor a A i k - lazy_factor a A j k =
  a * ((i == k)%:R - (j == k)%:R) + (1 - a) * (A i k - A j k).
Proof. by rewrite !lazyE opprD addrACA -!mulrBr. Qed.

Lemma tv_lazy a A i j : tv (lazy_factor a A) i j =
  2%:R^-1 * \sum_k `|a * ((i == k)%:R - (j == k)%:R) + (1 - a) * (A i k - A j k)|.
Proof. by rewrite /tv; congr (_ * _); apply: eq_bigr => k _; rewrite lazy_row_diff. Qed.

Lemma lazy_half A : lazy_factor 2%:R^-1 A = rollout_factor A.
Proof.
have h : 1 - 2%:R^-1 = 2%:R^-1 :> R.
  by apply/eqP; rewrite subr_eq -mulr2n -(mulr1 2%:R^-1) halfK.
by apply/matrixP => i k; rewrite lazyE factorE h mulrDr.
Qed.

(* The weighted coordinatewise triangle inequality.                            *)
Lemma lazy_term_le a (e d : R) : 0 <= a <= 1 ->
  `|a * e + (1 - a) * d| <= a * `|e| + (1 - a) * `|d|.
Proof.
case/andP=> a0 a1; have b0 : 0 <= 1 - a by rewrite subr_ge0.
apply: le_trans (ler_norm_add _ _) _.
by rewrite !normrM (ger0_norm a0) (ger0_norm b0).
Qed.

Lemma half_unit_diff_le (i j : 'I_n) :
  (2%:R^-1 * \sum_k `|((i == k)%:R - (j == k)%:R : R)| : R) <= 1.
Proof.
apply: le_trans (_ : _ <= (2%:R^-1 * 2%:R : R)) _.
  by rewrite ler_pmul2l ?half_gt0 // sum_unit_diff_le.
by rewrite mulVf // two_neq0.
Qed.

Lemma tv_lazy_le a A i j : 0 <= a <= 1 ->
  tv (lazy_factor a A) i j <=
  a * (2%:R^-1 * \sum_k `|((i == k)%:R - (j == k)%:R : R)|) + (1 - a) * tv A i j.
Proof.
move=> ab; rewrite tv_lazy /tv !(mulrCA _ 2%:R^-1) -mulrDr ler_pmul2l ?half_gt0 //.
rewrite !mulr_sumr -big_split /=; apply: ler_sum => k _.
exact: lazy_term_le.
Qed.

(* The bound, for every square matrix.                                         *)
Lemma lazy_bound_any a A : 0 <= a <= 1 ->
  delta (lazy_factor a A) <= a + (1 - a) * delta A.
Proof.
move=> ab; have /andP[a0 a1] := ab; have b0 : 0 <= 1 - a by rewrite subr_ge0.
apply: delta_le => [|i j]; first by rewrite addr_ge0 // mulr_ge0 // delta_ge0.
apply: le_trans (tv_lazy_le A i j ab) _.
apply: ler_add; first by rewrite ler_pimulr // half_unit_diff_le.
by rewrite ler_wpmul2l // tv_le_delta.
Qed.

(* For a mutually self-dominant pair i != j the triangle inequality is an      *)
(* equality in every coordinate.                                               *)
Lemma tv_lazy_eq a A i j : 0 <= a <= 1 -> i != j -> A j i <= A i i -> A i j <= A j j ->
  tv (lazy_factor a A) i j = a + (1 - a) * tv A i j.
Proof.
case/andP=> a0 a1 ij dii djj; have b0 : 0 <= 1 - a by rewrite subr_ge0.
have ji : (j == i) = false by rewrite eq_sym (negbTE ij).
rewrite tv_lazy; transitivity (2%:R^-1 * \sum_k
    (a * `|((i == k)%:R - (j == k)%:R : R)| + (1 - a) * `|A i k - A j k|)).
  congr (_ * _); apply: eq_bigr => k _.
  have [<-|ik] := eqVneq i k.
    rewrite ji /= ?mulr1n ?mulr0n subr0 mulr1 normr1 mulr1.
    have x0 : 0 <= A i i - A j i by rewrite subr_ge0.
    rewrite (ger0_norm x0) ger0_norm //.
    exact: addr_ge0 a0 (mulr_ge0 b0 x0).
  have [<-|jk] := eqVneq j k.
    rewrite /= ?mulr1n ?mulr0n sub0r mulrN1 normrN normr1 mulr1.
    have y0 : A i j - A j j <= 0 by rewrite subr_le0.
    rewrite (ler0_norm y0) ler0_norm; first by rewrite opprD opprK mulrN.
    rewrite -oppr_ge0 opprD opprK -mulrN; apply: addr_ge0 a0 (mulr_ge0 b0 _).
    by rewrite oppr_ge0.
  rewrite /= ?mulr0n subrr mulr0 add0r normr0 mulr0 add0r.
  by rewrite normrM (ger0_norm b0).
rewrite big_split /= -!mulr_sumr (@sum_unit_diff R n i j ij) /tv mulrDr.
by rewrite !(mulrCA 2%:R^-1) (mulVf two_neq0) mulr1.
Qed.

Lemma lazy_equality_sufficient_any a A : 0 <= a <= 1 -> d1_condition A ->
  delta (lazy_factor a A) = a + (1 - a) * delta A.
Proof.
move=> ab [i [j [ij tvij dii djj]]]; apply/eqP; rewrite eq_le lazy_bound_any //=.
by rewrite -tvij -(tv_lazy_eq ab ij dii djj) tv_le_delta.
Qed.

Lemma lazy_equality_necessary_any a A : 0 < a < 1 ->
  delta (lazy_factor a A) = a + (1 - a) * delta A -> d1_condition A.
Proof.
case/andP=> a0 a1 e.
have ab : 0 <= a <= 1 by rewrite !ltW.
have b0 : 0 < 1 - a by rewrite subr_gt0.
have pos : 0 < delta (lazy_factor a A).
  rewrite e; apply: lt_le_trans a0 _.
  by rewrite ler_addl; apply: mulr_ge0 (ltW b0) (delta_ge0 _).
case: (delta_attained (lazy_factor a A)) => [D0|[i [j Eij]]].
  by move: pos; rewrite D0 ltxx.
have ij : i != j.
  by apply: contraTneq pos => eij; rewrite -Eij eij tv_xx ltxx.
(* a + (1-a) delta = tv_ij <= a h + (1-a) tv(A)_ij <= a + (1-a) delta, h <= 1 *)
have tvij : tv A i j = delta A.
  apply/eqP; rewrite eq_le tv_le_delta /=.
  rewrite -(ler_pmul2l b0) -(ler_add2l a) -e -Eij.
  apply: le_trans (tv_lazy_le A i j ab) _.
  by rewrite ler_add2r; apply: ler_pimulr (ltW a0) (half_unit_diff_le i j).
(* hence sum_k |a e_k + (1-a) d_k| = sum_k (a |e_k| + (1-a) |d_k|), termwise *)
have sum_eq : \sum_k `|a * ((i == k)%:R - (j == k)%:R) + (1 - a) * (A i k - A j k)| =
    \sum_k (a * `|((i == k)%:R - (j == k)%:R : R)| + (1 - a) * `|A i k - A j k|).
  apply: (mulfI (lt0r_neq0 (@half_gt0 R))).
  rewrite -tv_lazy Eij e -tvij big_split /= -!mulr_sumr (@sum_unit_diff R n i j ij) /tv mulrDr.
  by rewrite !(mulrCA 2%:R^-1) (mulVf two_neq0) mulr1.
have term := ler_sum_eq (fun k => lazy_term_le _ _ ab) sum_eq.
have ji : (j == i) = false by rewrite eq_sym (negbTE ij).
exists i, j; split => //.
  (* coordinate i: |a + (1-a)(A_ii - A_ji)| = a + (1-a)|A_ii - A_ji| *)
  move: (term i); rewrite eqxx ji /= ?mulr1n ?mulr0n subr0 mulr1 normr1 mulr1 => h.
  have : `|a + (1 - a) * (A i i - A j i)| = `|a| + `|(1 - a) * (A i i - A j i)|.
    by rewrite h (gtr0_norm a0) normrM (gtr0_norm b0).
  by move/(norm_add_eq_ge0 a0); rewrite pmulr_rge0 // subr_ge0.
(* coordinate j: |-a + (1-a)(A_ij - A_jj)| = a + (1-a)|A_ij - A_jj| *)
move: (term j); rewrite eqxx (negbTE ij) /= ?mulr1n ?mulr0n sub0r mulrN1 normrN normr1 mulr1 => h.
have : `|a + (1 - a) * (A j j - A i j)| = `|a| + `|(1 - a) * (A j j - A i j)|.
  rewrite -normrN opprD -mulrN opprB h (gtr0_norm a0) normrM (gtr0_norm b0).
  by rewrite distrC.
by move/(norm_add_eq_ge0 a0); rewrite pmulr_rge0 // subr_ge0.
Qed.

Lemma lazy_equality_any a A : 0 < a < 1 ->
  delta (lazy_factor a A) = a + (1 - a) * delta A <-> d1_condition A.
Proof.
move=> ab; have ab' : 0 <= a <= 1 by case/andP: ab => a0 a1; rewrite !ltW.
by split; [exact: lazy_equality_necessary_any | exact: lazy_equality_sufficient_any].
Qed.

(* The suite's statements (theory/dobrushin.py: dobrushin.factor.lazy).       *)
Theorem lazy_bound a A : row_stochastic A -> 0 <= a <= 1 ->
  delta (lazy_factor a A) <= a + (1 - a) * delta A.
Proof. by move=> _; exact: lazy_bound_any. Qed.

Theorem lazy_equality a A : row_stochastic A -> 0 < a < 1 ->
  delta (lazy_factor a A) = a + (1 - a) * delta A <-> d1_condition A.
Proof. by move=> _; exact: lazy_equality_any. Qed.

End LazyFactor.
