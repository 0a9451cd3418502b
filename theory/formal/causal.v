(* The causal corollary of Theorem D1 (docs/theory.md, section 1): for a      *)
(* lower-triangular (causal) row-stochastic n x n matrix A with n >= 2, D1     *)
(* ALWAYS holds with equality:                                                 *)
(*     delta((I + A)/2) = (1 + delta(A))/2.                                    *)
(* Row 0 is e_0, so d_0j = 1 - A_j0 and d_ij = 1 - sum_k min(A_ik, A_jk)       *)
(* <= 1 - min(A_i0, A_j0) = max(d_0i, d_0j): delta(A) is attained by a pair    *)
(* (0, l), l != 0, which is mutually self-dominant (A_00 = 1 >= A_l0 and       *)
(* A_ll >= A_0l = 0). The same holds for every principal submatrix whose rows  *)
(* are renormalised (positions kept in order, e.g. any suffix of positions):   *)
(* it is again causal and row-stochastic.                                      *)
(*                                                                             *)
(*   lower_triangular A          == A i k = 0 whenever i < k                   *)
(*   renormalised_submatrix A s  == the rows and columns s(0) < s(1) < ... of  *)
(*                                  A, each row divided by its sum            *)
(* Main results: d1_causal, d1_causal_submatrix; the lemmas causal_row0,       *)
(* causal_tv0, causal_tv_le and causal_delta_first are the steps above.        *)

From mathcomp Require Import all_ssreflect all_algebra.
From AttnBounds Require Import stochastic dobrushin.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Import GRing.Theory Num.Theory Order.TTheory.
Local Open Scope ring_scope.

Section Causal.
Variable R : realFieldType.

Definition lower_triangular n (A : 'M[R]_n) := forall i k : 'I_n, (i < k)%N -> A i k = 0.

Definition renormalised_submatrix n k (A : 'M[R]_n) (s : 'I_k -> 'I_n) : 'M[R]_k :=
  \matrix_(a, b) (A (s a) (s b) / \sum_c A (s a) (s c)).

(* An entry of a row-stochastic matrix is at most its row sum, 1.              *)
Lemma entry_le1 n m (A : 'M[R]_(n, m)) i k : row_stochastic A -> A i k <= 1.
Proof.
case=> nn rs; rewrite -(rs i) (bigD1 k) //= ler_addl.
by apply: sumr_ge0 => l _; exact: nn.
Qed.

Section FirstRow.
Variables (n : nat) (A : 'M[R]_n.+1).
Hypotheses (st : row_stochastic A) (lt : lower_triangular A).

(* Row 0 of a causal row-stochastic matrix is e_0.                             *)
Lemma causal_row0 k : A ord0 k = (ord0 == k)%:R.
Proof.
have [nn rs] := st; have [<-|k0] := eqVneq ord0 k.
  rewrite /= mulr1n -(rs ord0) (bigD1 ord0) //= big1 ?addr0 // => l l0.
  by apply: lt; rewrite /= lt0n; move: l0; rewrite -val_eqE.
by rewrite lt // /= lt0n; move: k0; rewrite eq_sym -val_eqE.
Qed.

(* d_0j = 1 - A_j0                                                              *)
Lemma causal_tv0 j : tv A ord0 j = 1 - A j ord0.
Proof.
have [nn rs] := st; rewrite tv_min // (bigD1 ord0) //= big1 ?addr0 => [|k k0].
  by rewrite causal_row0 eqxx /= mulr1n min_r ?(entry_le1 _ _ st).
by rewrite causal_row0 eq_sym (negbTE k0) /= mulr0n min_l ?nn.
Qed.

(* d_ij <= 1 - min(A_i0, A_j0) = max(d_0i, d_0j)                               *)
Lemma causal_tv_le i j : tv A i j <= Num.max (tv A ord0 i) (tv A ord0 j).
Proof.
have [nn rs] := st.
have h : Num.min (A i ord0) (A j ord0) <= \sum_k Num.min (A i k) (A j k).
  rewrite (bigD1 ord0) //= ler_addl; apply: sumr_ge0 => k _.
  by rewrite le_minr !nn.
by rewrite tv_min // !causal_tv0 le_maxr !ler_add2l !ler_opp2 -le_minl.
Qed.

End FirstRow.

(* delta(A) is attained by a pair (0, l) with l != 0.                          *)
Lemma causal_delta_first n (A : 'M[R]_n.+2) : row_stochastic A -> lower_triangular A ->
  exists2 l, l != ord0 & tv A ord0 l = delta A.
Proof.
move=> st lt.
have dD : delta A = \big[Num.max/0]_l tv A ord0 l.
  apply/eqP; rewrite eq_le; apply/andP; split.
    apply: delta_le => [|i j]; first exact: bigmax_ge0.
    apply: le_trans (causal_tv_le st lt i j) _.
    by rewrite le_maxl; apply/andP; split; exact: (le_bigmax (fun l => tv A ord0 l)).
  exact: (le_bigmax (fun i => \big[Num.max/0]_(j < n.+2) tv A i j) ord0).
have zero_case : delta A = 0 -> exists2 l, l != ord0 & tv A ord0 l = delta A.
  move=> d0; exists (lift ord0 ord0) => //.
  by apply/eqP; rewrite eq_le tv_le_delta d0 tv_ge0.
case: (bigmax_attained (fun l => tv A ord0 l)) => [D0|[l /= El]].
  by apply: zero_case; rewrite dD D0.
have [l0|l0] := eqVneq l ord0.
  by apply: zero_case; rewrite dD -El l0 tv_xx.
by exists l => //; rewrite dD El.
Qed.

(* The causal corollary (theory/dobrushin.py: dobrushin.factor.causal).       *)
Theorem d1_causal n (A : 'M[R]_n.+2) : row_stochastic A -> lower_triangular A ->
  delta (rollout_factor A) = (1 + delta A) / 2%:R.
Proof.
move=> st lt; apply: d1_equality_sufficient => //.
have [nn _] := st; have [l l0 tvl] := causal_delta_first st lt.
exists ord0, l; split => //; first by rewrite eq_sym.
  by rewrite causal_row0 // eqxx /= mulr1n (entry_le1 _ _ st).
by rewrite causal_row0 // eq_sym (negbTE l0) /= mulr0n nn.
Qed.

(* A principal submatrix of a causal matrix, rows renormalised, is causal and  *)
(* row-stochastic, so D1's equality holds for it as well.                      *)
Theorem d1_causal_submatrix n k (A : 'M[R]_n) (s : 'I_k.+2 -> 'I_n) :
  row_stochastic A -> lower_triangular A ->
  (forall a b : 'I_k.+2, (a < b)%N -> (s a < s b)%N) ->
  (forall a, 0 < \sum_c A (s a) (s c)) ->
  delta (rollout_factor (renormalised_submatrix A s)) =
  (1 + delta (renormalised_submatrix A s)) / 2%:R.
Proof.
move=> [nn _] lt mono spos; apply: d1_causal.
  split=> [a b|a]; first by rewrite mxE divr_ge0 ?nn ?ltW.
  under eq_bigr do rewrite mxE.
  by rewrite -mulr_suml mulfV ?lt0r_neq0.
by move=> a b ab; rewrite mxE lt ?mono // mul0r.
Qed.

End Causal.
